//! A PostgreSQL server of the tests' own: Debian's `postgresql` binaries
//! (`/usr/lib/postgresql/NN/bin`, the highest NN; `.ci/run` installs the
//! package where it is missing), a cluster made by `initdb` in a temporary
//! folder, the server on a free loopback port with its socket in that
//! folder. `initdb` refuses to run as root, so under root both run as the
//! `postgres` user the package creates. (The store bench includes this
//! file too.)

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server, stopped (and its cluster removed) when dropped.
pub struct Postgres {
    child: Child,
    _dir: tempfile::TempDir,
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub url: String,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // SIGQUIT: an immediate shutdown, the children taken down with it.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGQUIT);
        }
        let _ = self.child.wait();
    }
}

/// The folder of the highest installed major version's binaries.
pub fn binaries() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let major: u32 = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((major, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// The user and group the server runs as: `postgres` under root, else the
/// current ones.
fn identity() -> Option<(u32, u32)> {
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let name = std::ffi::CString::new("postgres").unwrap();
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(
        !entry.is_null(),
        "running as root, and there is no `postgres` user to run initdb as (install Debian's postgresql package)"
    );
    unsafe { Some(((*entry).pw_uid, (*entry).pw_gid)) }
}

fn command(bin: &Path, name: &str, who: Option<(u32, u32)>) -> Command {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(bin.join(name));
    if let Some((uid, gid)) = who {
        command.uid(uid).gid(gid);
    }
    command
}

/// Starts a server, or `Err` naming what is missing.
pub fn start() -> Result<Postgres, String> {
    let bin = binaries()
        .ok_or("no PostgreSQL binaries under /usr/lib/postgresql (apt-get install postgresql)")?;
    let who = identity();
    let dir = tempfile::Builder::new()
        .prefix("pg-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let data = dir.path().join("data");
    if let Some((uid, gid)) = who {
        std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).map_err(|e| e.to_string())?;
    }
    let made = command(&bin, "initdb", who)
        .args([
            "-D",
            data.to_str().unwrap(),
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
        ])
        .args(["-E", "UTF8", "--locale", "C"])
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("initdb: {e}"))?;
    if !made.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&made.stderr)
        ));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free loopback port: {e}"))?
        .port();
    let log = std::fs::File::create(dir.path().join("server.log")).map_err(|e| e.to_string())?;
    if let Some((uid, gid)) = who {
        std::os::unix::fs::chown(dir.path().join("server.log"), Some(uid), Some(gid))
            .map_err(|e| e.to_string())?;
    }
    let child = command(&bin, "postgres", who)
        .args(["-D", data.to_str().unwrap(), "-p", &port.to_string()])
        .args(["-h", "127.0.0.1", "-k", dir.path().to_str().unwrap()])
        .args(["-c", "max_connections=100"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("postgres: {e}"))?;
    let server = Postgres {
        child,
        url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        _dir: dir,
    };
    // Ready once it accepts connections (a hang guard, not a measure).
    let ready = command(&bin, "pg_isready", None);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = Command::new(ready.get_program())
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("pg_isready: {e}"))?;
        if status.success() {
            return Ok(server);
        }
        if Instant::now() > deadline {
            let log =
                std::fs::read_to_string(server._dir.path().join("server.log")).unwrap_or_default();
            return Err(format!("the PostgreSQL server did not start: {log}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
