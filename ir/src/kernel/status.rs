//! The status a kernel reports instead of trapping: integer division by zero, an
//! index out of range.

/// A status code a kernel sets instead of trapping; the executor turns it into the
/// op's error. Codes are ordered: a kernel keeps the first one it sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum Status {
    /// every element computed
    Ok = 0,
    /// an integer division or remainder by zero
    ZeroDivision = 1,
    /// a [`DynIndex`](super::DynIndex) value out of range (the status block's slots 1, 2 and 3 hold
    /// the value, the size and the id of the failing load expression)
    IndexOutOfRange = 3,
}

impl Status {
    /// The status of a code, `None` for an unknown one.
    pub fn from_code(code: u64) -> Option<Status> {
        Some(match code {
            0 => Status::Ok,
            1 => Status::ZeroDivision,
            3 => Status::IndexOutOfRange,
            _ => return None,
        })
    }
}

/// Number of `u64` slots of a kernel's status block: `[code, detail0, detail1, detail2]`.
pub const STATUS_SLOTS: usize = 4;
