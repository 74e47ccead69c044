//! Reading a whole file without copying it: its pages are mapped from the
//! page cache, so no process memory is allocated, zeroed or filled for it.
//! For a one-shot reader of one large file (the command-line tool's grep);
//! long-lived processes read into memory instead (see below).

use std::io;
use std::ops::Deref;

use crate::dir::{Dir, Found};

/// The bytes of a file: mapped, or read when the file is empty or cannot
/// be mapped.
pub struct Mapped(Bytes);

enum Bytes {
    Map(memmap2::Mmap),
    Read(Vec<u8>),
}

impl Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.0 {
            Bytes::Map(map) => map,
            Bytes::Read(bytes) => bytes,
        }
    }
}

impl std::fmt::Debug for Mapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapped")
            .field("len", &self.len())
            .field("mapped", &matches!(self.0, Bytes::Map(_)))
            .finish()
    }
}

/// What [`Dir::map_file`] found.
#[derive(Debug)]
pub enum MappedFound {
    /// A regular file, with its bytes.
    File(Mapped),
    /// A directory.
    Directory,
    /// Nothing that may be read: missing, a symbolic link, a FIFO, a device, ...
    Absent,
}

impl Dir {
    /// The regular file `name` (opened as [`Dir::read_file`] opens it: no
    /// link is followed), its bytes mapped into memory rather than read.
    ///
    /// A map shows the file as it is on disk while it is held: a file
    /// rewritten in place (not replaced by a rename, as every writer of this
    /// package does) shows the new bytes, and one truncated by another
    /// process while it is held makes the next access to the lost pages
    /// fail with `SIGBUS`, which ends the process. Hold a map briefly, in a
    /// process that may end so.
    ///
    /// # Errors
    ///
    /// The OS error of an existing regular file that cannot be read.
    pub fn map_file(&self, name: &str) -> io::Result<MappedFound> {
        let (file, meta) = match self.open_regular(name)? {
            Ok(opened) => opened,
            Err(Found::Directory) => return Ok(MappedFound::Directory),
            Err(_) => return Ok(MappedFound::Absent),
        };
        let file = file.into_std();
        if meta.len() > 0 {
            // SAFETY: the map is read-only and private to this process. Its
            // bytes can change only through another writer of the same file,
            // which this package never does (files are published by rename
            // and removed by unlink, neither of which touches a mapped inode);
            // the remaining hazard, a truncation by someone else, is the
            // documented `SIGBUS` above.
            #[allow(unsafe_code)]
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
                return Ok(MappedFound::File(Mapped(Bytes::Map(map))));
            }
        }
        let mut content = Vec::new();
        io::Read::read_to_end(&mut &file, &mut content)?;
        Ok(MappedFound::File(Mapped(Bytes::Read(content))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_files_and_refuses_what_read_file_refuses() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a"), b"mapped bytes").unwrap();
        std::fs::write(tmp.path().join("empty"), b"").unwrap();
        std::fs::create_dir(tmp.path().join("d")).unwrap();
        let dir = Dir::open(tmp.path(), false, false).unwrap();
        let MappedFound::File(a) = dir.map_file("a").unwrap() else {
            panic!("a file")
        };
        assert_eq!(&a[..], b"mapped bytes");
        // Removing the name keeps the mapped inode readable.
        std::fs::remove_file(tmp.path().join("a")).unwrap();
        assert_eq!(&a[..], b"mapped bytes");
        let MappedFound::File(empty) = dir.map_file("empty").unwrap() else {
            panic!("a file")
        };
        assert!(empty.is_empty());
        assert!(matches!(dir.map_file("d").unwrap(), MappedFound::Directory));
        assert!(matches!(
            dir.map_file("missing").unwrap(),
            MappedFound::Absent
        ));
        // Escapes are refused as read_file refuses them (an error, never bytes).
        for name in ["../a", "/etc/passwd", "d/../../a"] {
            assert!(
                !matches!(dir.map_file(name), Ok(MappedFound::File(_))),
                "{name}"
            );
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(tmp.path().join("empty"), tmp.path().join("link")).unwrap();
            assert!(matches!(dir.map_file("link").unwrap(), MappedFound::Absent));
        }
    }
}
