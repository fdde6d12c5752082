//! The on-disk format of a cached CUBIN, and its atomic write.
//!
//! A cache file is read by later processes, possibly after a crash in the middle of a
//! write, a full disk or a hand edit, so nothing in it is trusted: the header holds the
//! full cache key (so a file-name hash collision is a miss, not a wrong kernel) and the
//! payload's length and checksum (so a truncated or corrupted file is a miss and is
//! recompiled).
//!
//! Layout, integers little-endian:
//! `b"LZFCUBIN"`, format `u32`, key length `u64`, payload length `u64`, payload FNV-1a
//! `u64`, the key bytes, the payload bytes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 8] = b"LZFCUBIN";
const FORMAT: u32 = 1;
const HEADER: usize = 8 + 4 + 8 + 8 + 8;

/// FNV-1a, 64 bits: a hash that is the same in every process and every Rust release
/// (std's `DefaultHasher` promises neither), for file names and checksums.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The bytes of a cache file holding `payload` under `key`.
pub(crate) fn encode(key: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + key.len() + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&(key.len() as u64).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a64(payload).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(payload);
    out
}

/// Why a cache file was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reject {
    /// Not a cache file of this format, truncated, or the checksum does not match.
    Corrupt,
    /// A valid file for another key (the file names' hashes collided).
    OtherKey,
}

/// The payload of a cache file, if the file is intact and holds `key`.
pub(crate) fn decode(file: &[u8], key: &[u8]) -> Result<Vec<u8>, Reject> {
    let field =
        |at: usize| -> u64 { u64::from_le_bytes(file[at..at + 8].try_into().expect("8 bytes")) };
    if file.len() < HEADER || &file[..8] != MAGIC {
        return Err(Reject::Corrupt);
    }
    if u32::from_le_bytes(file[8..12].try_into().expect("4 bytes")) != FORMAT {
        return Err(Reject::Corrupt);
    }
    let (key_len, payload_len, checksum) = (field(12), field(20), field(28));
    let expected = (HEADER as u64)
        .checked_add(key_len)
        .and_then(|n| n.checked_add(payload_len));
    if expected != Some(file.len() as u64) {
        return Err(Reject::Corrupt);
    }
    let key_end = HEADER + key_len as usize;
    let payload = &file[key_end..];
    if fnv1a64(payload) != checksum {
        return Err(Reject::Corrupt);
    }
    if &file[HEADER..key_end] != key {
        return Err(Reject::OtherKey);
    }
    Ok(payload.to_vec())
}

/// Writes `bytes` to `path` atomically: to a temporary file in the same directory, then
/// a rename, so a concurrent reader sees the old file or the new one, never half of
/// one. Creates the directory.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("cache");
    // pid + counter: unique among the processes and threads writing the same entry.
    let tmp: PathBuf = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.flush()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        // Best effort: a leftover temporary file is harmless but litters the cache.
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let file = encode(b"key", b"\x7fELF payload");
        assert_eq!(decode(&file, b"key").unwrap(), b"\x7fELF payload");
    }

    #[test]
    fn another_key_is_a_miss() {
        let file = encode(b"key", b"payload");
        assert_eq!(decode(&file, b"kez"), Err(Reject::OtherKey));
    }

    #[test]
    fn every_flipped_byte_and_every_truncation_is_rejected() {
        let file = encode(b"arch sm_90", b"\x7fELF some cubin bytes");
        for i in 0..file.len() {
            let mut bad = file.clone();
            bad[i] ^= 0x20;
            assert!(
                decode(&bad, b"arch sm_90").is_err(),
                "flipped byte {i} accepted"
            );
            assert!(
                decode(&file[..i], b"arch sm_90").is_err(),
                "truncation to {i} accepted"
            );
        }
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(decode(&longer, b"arch sm_90"), Err(Reject::Corrupt));
    }

    #[test]
    fn huge_lengths_in_the_header_do_not_overflow() {
        let mut file = encode(b"k", b"p");
        file[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(decode(&file, b"k"), Err(Reject::Corrupt));
    }

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temporary() {
        let dir =
            std::env::temp_dir().join(format!("lazyfuse-disk-cache-unit-{}", std::process::id()));
        let path = dir.join("sub").join("x.cubin");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let entries = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(entries, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
