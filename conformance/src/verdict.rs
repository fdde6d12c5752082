//! What a run reports (the verdict on each case, the counts per file and in all), and
//! why a case produced no value: the library refused, or the runner could not read it.

// Results of a run

/// The verdict on one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The case matched the reference.
    Pass,
    /// The reference had no kernel for a wide unsigned dtype and lazyfuse computed one.
    Extended,
    /// lazyfuse reported a gap on a `complex32`/`bcomplex32` result.
    Unsupported,
    /// Anything else; the text says what differed.
    Fail(String),
}

/// Counts of one file.
#[derive(Clone, Debug, Default)]
pub struct FileSummary {
    /// The file name (`promotion.jsonl`).
    pub name: String,
    /// Cases that matched (the extended ones included).
    pub passed: usize,
    /// Cases that did not.
    pub failed: usize,
    /// Cases on dtypes lazyfuse does not support.
    pub unsupported: usize,
}

/// Counts and failure texts of a whole run.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// One entry per file, in the order they ran.
    pub files: Vec<FileSummary>,
    /// All passed cases.
    pub passed: usize,
    /// All failed cases.
    pub failed: usize,
    /// All unsupported cases.
    pub unsupported: usize,
    /// Ids of cases where lazyfuse computed what the reference refuses for lack of a kernel.
    pub extended: Vec<String>,
    /// `id: diff` of every failure.
    pub failures: Vec<String>,
}

// Errors inside a case

/// Why a case could not produce a value: the library refused (`Lib`), or the runner could
/// not make sense of the case (`Harness`; always a failure, never an "expected error").
pub(crate) enum RunErr {
    Lib(lazyfuse::Error),
    Harness(String),
}

impl From<lazyfuse::Error> for RunErr {
    fn from(e: lazyfuse::Error) -> Self {
        RunErr::Lib(e)
    }
}

pub(crate) type R<T> = std::result::Result<T, RunErr>;

pub(crate) fn harness<T>(msg: impl Into<String>) -> R<T> {
    Err(RunErr::Harness(msg.into()))
}

impl RunErr {
    pub(crate) fn text(self) -> String {
        match self {
            RunErr::Lib(e) => e.to_string(),
            RunErr::Harness(m) => m,
        }
    }
}
