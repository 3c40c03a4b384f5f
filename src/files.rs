//! Files that hold what only their owner may read (a turn's state, a token
//! store): written whole through a new owner-only file renamed over the
//! path, and opened never through a symbolic link, refused (or warned
//! about) when another user owns them or may read them, as ssh treats its
//! keys.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};

/// Writes `bytes` to `path` as a file only its owner may read and write
/// (mode 0600 on Unix, whatever the umask): a new file under a random name
/// in the same folder, created exclusively (never an existing file or a
/// link planted there), synced, then renamed over `path`. A link at `path`
/// is replaced, never followed; a crash before the rename leaves what was
/// at `path` whole.
///
/// # Errors
///
/// [`ErrorKind::Io`] naming `path` when the folder cannot take the file or
/// the disk refuses it; what was at `path` is left as it was.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    write_then_rename(path, bytes, || {})
}

/// [`write_private`], with `before_rename` run once the new file is
/// written and synced.
fn write_then_rename(path: &Path, bytes: &[u8], before_rename: impl FnOnce()) -> Result<()> {
    let (dir, name) = place(path);
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // tempfile's default on Unix, said here: the promise is this mode.
    #[cfg(unix)]
    builder.permissions(owner_only());
    let written = builder
        .tempfile_in(&dir)
        .and_then(|mut temp| {
            temp.write_all(bytes)?;
            temp.as_file().sync_all()?;
            before_rename();
            temp.persist(path).map(drop).map_err(|e| e.error)
        })
        .and_then(|()| sync_folder(&dir));
    written.map_err(|e| {
        Error::new(ErrorKind::Io, format!("cannot write {}", path.display()))
            .with_file(path)
            .with_source(e)
    })
}

/// The folder of `path` (`.` for a bare name) and its file name.
pub(crate) fn place(path: &Path) -> (PathBuf, String) {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    (dir, name)
}

#[cfg(unix)]
fn owner_only() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(0o600)
}

/// The rename is kept once the folder's entry is on disk.
#[cfg(unix)]
fn sync_folder(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_folder(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

/// What to do with a private file that another user owns or may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) enum Exposed {
    /// Refuse it, with an error naming the file and how to fix it.
    Refuse,
    /// Use it, with a warning in the log naming the file.
    Warn,
}

/// How a private file is opened.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) enum Open {
    /// To read it; `None` when there is none.
    Read,
    /// To read and write it, created (mode 0600) when there is none.
    Create,
}

/// Opens the private file at `path` as `how` says, never through a
/// symbolic link (a link there is refused), and checks the file opened: a
/// regular file of this user that no other may read or write, else what
/// `exposed` says.
///
/// # Errors
///
/// [`ErrorKind::Io`] naming `path`: a link, not a regular file, another
/// user's or open to others (with [`Exposed::Refuse`]), or not opened.
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn open_private(
    path: &Path,
    how: Open,
    exposed: Exposed,
) -> Result<Option<std::fs::File>> {
    let file = match open_no_link(path, how) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && matches!(how, Open::Read) => {
            return Ok(None);
        }
        Err(e) if is_link_error(&e) => {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "{} is a symbolic link: a private file is never read or written through one; \
                     put the file itself there",
                    path.display()
                ),
            )
            .with_file(path)
            .with_source(e));
        }
        Err(e) => {
            return Err(
                Error::new(ErrorKind::Io, format!("cannot open {}", path.display()))
                    .with_file(path)
                    .with_source(e),
            );
        }
    };
    check_private(path, &file, exposed)?;
    Ok(Some(file))
}

#[cfg(unix)]
fn open_no_link(path: &Path, how: Open) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    // Non-blocking, so that a FIFO planted there cannot hold the open.
    let flags = OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let (flags, mode) = match how {
        Open::Read => (flags | OFlags::RDONLY, Mode::empty()),
        Open::Create => (
            flags | OFlags::RDWR | OFlags::CREATE,
            Mode::RUSR | Mode::WUSR,
        ),
    };
    let fd = rustix::fs::open(path, flags, mode)?;
    Ok(std::fs::File::from(fd))
}

#[cfg(not(unix))]
fn open_no_link(path: &Path, how: Open) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    match how {
        Open::Read => options.read(true),
        Open::Create => options.read(true).write(true).create(true).truncate(false),
    };
    options.open(path)
}

/// Whether opening failed because the path is a symbolic link (`ELOOP`
/// with `O_NOFOLLOW`).
fn is_link_error(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

#[cfg(unix)]
fn check_private(path: &Path, file: &std::fs::File, exposed: Exposed) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().map_err(|e| Error::io(e, path))?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::Io,
            format!("{} is not a regular file", path.display()),
        )
        .with_file(path));
    }
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.mode() & 0o777;
    let problem = if meta.uid() != me {
        format!(
            "{} belongs to another user (uid {}, not {me}): a private file must be yours",
            path.display(),
            meta.uid()
        )
    } else if mode & 0o077 != 0 {
        format!(
            "{} may be read or written by other users (mode {mode:04o}): make it yours only \
             (`chmod 600 {}`)",
            path.display(),
            path.display()
        )
    } else {
        return Ok(());
    };
    match exposed {
        Exposed::Refuse => Err(Error::new(ErrorKind::Io, problem).with_file(path)),
        Exposed::Warn => {
            tracing::warn!(file = %path.display(), "{problem}; used all the same, as configured");
            Ok(())
        }
    }
}

#[cfg(not(unix))]
fn check_private(_path: &Path, _file: &std::fs::File, _exposed: Exposed) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRASH: &str = "MCP_ADAPTERS_TEST_CRASH_BEFORE_RENAME";

    /// A process that dies between writing the new file and renaming it
    /// leaves the file at the path as it was: the new one lies beside it.
    #[test]
    fn a_crash_before_the_rename_leaves_the_old_file_whole() {
        if let Some(path) = std::env::var_os(CRASH) {
            // The crashing process: this same test, run again.
            let _ = write_then_rename(Path::new(&path), b"{\"new\": true}", || {
                std::process::abort()
            });
            unreachable!("the process ended before the rename");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        write_private(&path, b"{\"old\": true}").unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "files::tests::a_crash_before_the_rename_leaves_the_old_file_whole",
                "--test-threads=1",
            ])
            .env(CRASH, &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!status.success(), "the child should have crashed");
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"old\": true}");
        let beside: Vec<PathBuf> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p != &path)
            .collect();
        assert_eq!(beside.len(), 1, "{beside:?}");
        assert_eq!(std::fs::read(&beside[0]).unwrap(), b"{\"new\": true}");
    }
}
