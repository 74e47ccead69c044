//! Opening artifacts for reading without following symlinks or touching
//! anything that is not a regular file.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// Why an artifact could not be read.
#[derive(Debug)]
pub(crate) enum ReadFailure {
    /// Missing, a symlink, a directory, a FIFO, a device, ...
    NotFound,
    /// A genuine I/O error on an existing regular file.
    Io(io::Error),
}

/// Reads the regular file at `path`. Symlinks are refused when the file is
/// opened (`O_NOFOLLOW`), and the type is checked on the opened handle so it
/// cannot be swapped between check and use. FIFOs are opened non-blocking so
/// a planted pipe cannot hang the caller.
pub(crate) fn read_regular_file(path: &Path) -> Result<Vec<u8>, ReadFailure> {
    let mut file = open_no_follow(path).map_err(classify)?;
    let meta = file.metadata().map_err(ReadFailure::Io)?;
    if !meta.file_type().is_file() {
        return Err(ReadFailure::NotFound);
    }
    let mut content = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut content).map_err(ReadFailure::Io)?;
    Ok(content)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(windows)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt;
    /// `FILE_FLAG_OPEN_REPARSE_POINT`: open a symlink itself, not its target.
    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    OpenOptions::new()
        .read(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

#[cfg(not(any(unix, windows)))]
fn open_no_follow(path: &Path) -> io::Result<File> {
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(io::Error::from(io::ErrorKind::NotFound));
    }
    OpenOptions::new().read(true).open(path)
}

/// Maps an open error to "not found" (missing or refused) or a real I/O
/// error.
fn classify(e: io::Error) -> ReadFailure {
    if e.kind() == io::ErrorKind::NotFound {
        return ReadFailure::NotFound;
    }
    #[cfg(unix)]
    {
        let refused = [
            libc::ELOOP,
            libc::ENOTDIR,
            libc::EISDIR,
            libc::ENXIO,
            libc::EMLINK,
            libc::ENAMETOOLONG,
        ];
        if e.raw_os_error().is_some_and(|code| refused.contains(&code)) {
            return ReadFailure::NotFound;
        }
    }
    ReadFailure::Io(e)
}
