//! `MappedFile`: a file's bytes through a read-only memory map, for reading model
//! files without first copying them whole into memory.

use std::fs::File;
use std::path::Path;

/// A file mapped read-only into memory; its bytes live as long as the value.
///
/// ```
/// let path = std::env::temp_dir().join("lazyfuse_mapped_file_doc.bin");
/// std::fs::write(&path, b"abc").unwrap();
/// let m = lazyfuse_runtime::MappedFile::open(&path).unwrap();
/// assert_eq!(m.bytes(), b"abc");
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub struct MappedFile {
    /// `None` for an empty file, which cannot be mapped
    map: Option<memmap2::Mmap>,
}

impl MappedFile {
    /// Opens and maps `path`.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<MappedFile> {
        let file = File::open(path)?;
        if file.metadata()?.len() == 0 {
            return Ok(MappedFile { map: None });
        }
        // SAFETY: the map is read-only and private to this value, and every read of
        // it goes through `bytes`, a shared slice of exactly the mapped length. What
        // no process can promise is that another program leaves the file alone
        // while it is mapped (truncating it would fault a read); that is the
        // contract of every memory-mapped reader, and the callers here copy the
        // bytes they need out promptly and drop the map.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(MappedFile { map: Some(map) })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}
