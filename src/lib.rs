//! lazyfuse
