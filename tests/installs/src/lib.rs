//! What the tests install, each under cargo's target folder, once and again
//! when its pins change:
//!
//! - the end-to-end npm servers ([`EVERYTHING`], [`FILESYSTEM`], [`PDF`]),
//!   each in a folder of its own (`<target>/e2e-npm...`, exact versions, no
//!   lock file);
//! - the virtualenv of the tests' Python servers (`<target>/e2e-venv`, the
//!   pins of `tests/e2e/requirements.txt`), and Arize Phoenix's
//!   (`<target>/e2e-phoenix-venv`, `tests/e2e/phoenix-requirements.txt`);
//! - the conformance oracle's virtualenv (`<target>/conformance-venv`, the
//!   official SDKs of `tests/conformance/requirements.txt`);
//! - the interop matrix's servers ([`interop`]).
//!
//! A lock file keeps concurrent installers (test binaries, [`prefetch`]) from
//! installing the same thing at once; a stamp, written last, records what
//! was installed, so that a half-built or outdated install is done again.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime};

pub mod interop;

/// The pinned everything server.
pub const EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";
/// The reference filesystem server, pinned: its `read_media_file` mirrors the
/// content blocks in `structuredContent` (since modelcontextprotocol/servers
/// 97b70ee2, in 2026.7.10 and later).
pub const FILESYSTEM: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";
/// The official MCP Apps PDF server, pinned: six of its nine tools are for
/// its viewer only (`_meta.ui.visibility: ["app"]`).
pub const PDF: &str = "@modelcontextprotocol/server-pdf@2.0.4";

/// The folders the end-to-end npm servers are installed in, with their package.
pub const NPM_SERVERS: &[(&str, &str)] = &[
    ("e2e-npm", EVERYTHING),
    ("e2e-npm-filesystem", FILESYSTEM),
    ("e2e-npm-pdf", PDF),
];

/// The repository's root (this crate lives in `tests/installs`).
pub fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors().nth(2).unwrap_or(here).to_path_buf()
}

/// Cargo's target folder (`CARGO_TARGET_DIR`, relative to the root, or `target/`).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root().join(dir),
        _ => root().join("target"),
    }
}

/// An exclusive lock on a path: the file is created with `create_new`, which is
/// atomic, and removed on drop. A lock older than `STALE` (its holder crashed)
/// is broken; waiting longer than `WAIT` is an error naming the file.
pub struct Lock(PathBuf);

const STALE: Duration = Duration::from_secs(15 * 60);
const WAIT: Duration = Duration::from_secs(20 * 60);

impl Lock {
    /// Takes the lock; `what` names the caller in error messages.
    pub fn acquire(path: &Path, what: &str) -> Result<Lock, String> {
        let start = Instant::now();
        loop {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
            {
                Ok(mut f) => {
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(Lock(path.to_path_buf()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let age = fs::metadata(path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok());
                    if age.is_some_and(|a| a > STALE) {
                        let _ = fs::remove_file(path);
                        continue;
                    }
                    if start.elapsed() > WAIT {
                        return Err(format!(
                            "{what}: waited {WAIT:?} for {} (another install running); delete it if none is",
                            path.display()
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(250));
                }
                Err(e) => {
                    return Err(format!(
                        "{what}: cannot create lock {}: {e}",
                        path.display()
                    ));
                }
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Installs the npm packages `specs` (exact versions) together into
/// `<target>/<dir>` once, and again when they change; returns its
/// `node_modules`.
pub fn npm_packages(dir: &str, specs: &[String]) -> Result<PathBuf, String> {
    let dir = target_dir().join(dir);
    let stamp = dir.join(".stamp");
    let modules = dir.join("node_modules");
    let wanted = specs.join("\n");
    let ready = || modules.exists() && fs::read_to_string(&stamp).ok().as_deref() == Some(&wanted);
    if ready() {
        return Ok(modules);
    }
    fs::create_dir_all(&dir).map_err(|e| format!("e2e: cannot create {}: {e}", dir.display()))?;
    let _lock = Lock::acquire(&dir.with_extension("lock"), "e2e")?;
    if ready() {
        return Ok(modules);
    }
    let out = Command::new("npm")
        .current_dir(&dir)
        .args([
            "install",
            "--no-package-lock",
            "--no-save",
            "--no-audit",
            "--no-fund",
        ])
        .args(specs)
        .output()
        .map_err(|e| format!("e2e: could not run npm ({e}); install Node.js 20+ with npm"))?;
    if !out.status.success() {
        return Err(format!(
            "e2e: `npm install {}` failed ({}):\n{}\nCheck that the npm registry is reachable (npm config get registry, HTTPS_PROXY).",
            specs.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    fs::write(&stamp, &wanted)
        .map_err(|e| format!("e2e: cannot write {}: {e}", stamp.display()))?;
    Ok(modules)
}

/// The folder (under the target folder) the end-to-end npm server `spec`
/// is installed in; an error when `spec` is not one of [`NPM_SERVERS`].
pub fn npm_server_dir(spec: &str) -> Result<&'static str, String> {
    NPM_SERVERS
        .iter()
        .find(|(_, s)| *s == spec)
        .map(|(dir, _)| *dir)
        .ok_or_else(|| format!("e2e: `{spec}` is not among the npm servers NPM_SERVERS lists"))
}

/// Installs the end-to-end npm server `spec` (one of [`NPM_SERVERS`]) into
/// its folder once; returns the path of its `entry` (relative to that
/// folder).
pub fn npm_server(spec: &str, entry: &str) -> Result<PathBuf, String> {
    let modules = npm_packages(npm_server_dir(spec)?, &[spec.to_owned()])?;
    Ok(modules.parent().unwrap_or(&modules).join(entry))
}

/// The e2e virtualenv's python (the tests' own Python servers and
/// `mcp-server-time`).
pub fn python() -> Result<PathBuf, String> {
    venv("e2e-venv", "tests/e2e/requirements.txt")
}

/// The python of a virtualenv with Arize Phoenix (pinned in
/// `tests/e2e/phoenix-requirements.txt`): an OpenTelemetry receiver that
/// takes OTLP over HTTP and lists what it received.
pub fn phoenix() -> Result<PathBuf, String> {
    venv("e2e-phoenix-venv", "tests/e2e/phoenix-requirements.txt")
}

/// The python of a virtualenv under `target/` (`name`) with the pins of
/// `requirements` (relative to the root) installed, created on first
/// use and again when the pins change.
pub fn venv(name: &str, requirements: &str) -> Result<PathBuf, String> {
    let requirements = root().join(requirements);
    let pins = fs::read_to_string(&requirements)
        .map_err(|e| format!("e2e: cannot read {}: {e}", requirements.display()))?;
    let venv = target_dir().join(name);
    let stamp = venv.join(".stamp");
    let python = venv.join("bin/python");
    let ready =
        || python.exists() && fs::read_to_string(&stamp).ok().as_deref() == Some(pins.as_str());
    if ready() {
        return Ok(python);
    }
    fs::create_dir_all(target_dir()).map_err(|e| format!("e2e: {e}"))?;
    let _lock = Lock::acquire(&target_dir().join(format!("{name}.lock")), "e2e")?;
    if ready() {
        return Ok(python);
    }
    if !python.exists() {
        let out = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .map_err(|e| {
                format!(
                    "e2e: could not run `python3 -m venv` ({e}); install Python 3.10+ with venv"
                )
            })?;
        if !out.status.success() {
            return Err(format!(
                "e2e: `python3 -m venv` failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let out =
        pip_install(&python, &requirements).map_err(|e| format!("e2e: could not run pip: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "e2e: `pip install -r {}` failed:\n{}\nCheck that PyPI is reachable (PIP_INDEX_URL, HTTPS_PROXY).",
            requirements.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    fs::write(&stamp, &pins).map_err(|e| format!("e2e: cannot write {}: {e}", stamp.display()))?;
    Ok(python)
}

/// The python of a virtualenv under `target/` (`name`) with `pins`
/// (`package==version` each) installed, as [`venv`] makes it.
pub fn venv_with(name: &str, pins: &[String]) -> Result<PathBuf, String> {
    fs::create_dir_all(target_dir()).map_err(|e| format!("e2e: {e}"))?;
    let requirements = target_dir().join(format!("{name}.requirements.txt"));
    let text = pins.iter().map(|p| format!("{p}\n")).collect::<String>();
    if fs::read_to_string(&requirements).ok().as_deref() != Some(text.as_str()) {
        fs::write(&requirements, &text)
            .map_err(|e| format!("e2e: cannot write {}: {e}", requirements.display()))?;
    }
    venv(name, &requirements.display().to_string())
}

fn pip_install(python: &Path, requirements: &Path) -> std::io::Result<Output> {
    Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "-q",
            "-r",
        ])
        .arg(requirements)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .output()
}

/// The conformance oracle's folder (`tests/conformance`).
pub fn conformance_dir() -> PathBuf {
    root().join("tests").join("conformance")
}

/// The conformance virtualenv's python, creating the venv first when it is
/// missing, half-built or built from another `requirements.txt`. The venv is
/// made with `CONFORMANCE_PYTHON` when it is set, else `python3`.
pub fn conformance_python() -> Result<PathBuf, String> {
    let requirements = conformance_dir().join("requirements.txt");
    let content = fs::read(&requirements)
        .map_err(|e| format!("conformance: cannot read {}: {e}", requirements.display()))?;
    let stamp_text = format!("requirements.txt fnv1a64 {:016x}\n", fnv1a(&content));
    let target = target_dir();
    let venv = target.join("conformance-venv");
    let stamp = venv.join(".requirements-stamp");
    let python = python_in(&venv);
    let ready = || {
        python.exists() && fs::read_to_string(&stamp).ok().as_deref() == Some(stamp_text.as_str())
    };
    if ready() {
        return Ok(python);
    }
    fs::create_dir_all(&target)
        .map_err(|e| format!("conformance: cannot create {}: {e}", target.display()))?;
    let _lock = Lock::acquire(&target.join("conformance-venv.lock"), "conformance")?;
    // Another installer may have finished the venv while this one waited.
    if ready() {
        return Ok(python);
    }
    if venv.exists() {
        fs::remove_dir_all(&venv).map_err(|e| {
            format!(
                "conformance: cannot remove the stale venv {}: {e}",
                venv.display()
            )
        })?;
    }
    let base = std::env::var("CONFORMANCE_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let out = Command::new(&base)
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| {
            format!(
                "conformance: could not run `{base} -m venv`: {e}. Install Python 3.9 or newer \
                 with its venv module (Debian/Ubuntu: `apt-get install python3 python3-venv`) \
                 or point CONFORMANCE_PYTHON at a python3 binary."
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "conformance: `{base} -m venv {}` failed ({}):\n{}{}\nOn Debian/Ubuntu install the \
             venv module with `apt-get install python3-venv`, or set CONFORMANCE_PYTHON to a \
             python3 that has it.",
            venv.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let out = pip_install(&python, &requirements).map_err(|e| {
        format!(
            "conformance: could not run pip ({}): {e}. Delete {} to rebuild the venv.",
            python.display(),
            venv.display()
        )
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(25).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "conformance: `{} -m pip install -r {}` failed ({}):\n{}\nCheck that PyPI is \
             reachable (proxy settings: PIP_INDEX_URL, HTTPS_PROXY) and that every pin in \
             requirements.txt exists for this Python version; the venv is rebuilt on the next run.",
            python.display(),
            requirements.display(),
            out.status,
            tail.join("\n")
        ));
    }
    // Written last: a venv without this stamp is treated as half-built.
    fs::write(&stamp, &stamp_text)
        .map_err(|e| format!("conformance: cannot write {}: {e}", stamp.display()))?;
    Ok(python)
}

fn python_in(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// FNV-1a: enough to notice that requirements.txt changed, with no extra crate.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One install [`prefetch`] runs, and what came of it.
pub struct Fetched {
    /// What was installed (a folder under the target folder; the interop
    /// matrix's servers are named by their npm folder).
    pub what: String,
    /// Where it is, or why it is not.
    pub result: Result<PathBuf, String>,
}

/// One install, run on a thread of its own.
type Install = Box<dyn FnOnce() -> Result<PathBuf, String> + Send>;

/// Installs everything the tests use, each install on a thread of its own,
/// and says how each went. Installing again what is installed costs a read
/// of its stamp.
pub fn prefetch() -> Vec<Fetched> {
    let mut jobs: Vec<(String, Install)> = Vec::new();
    for (dir, spec) in NPM_SERVERS {
        jobs.push((
            dir.to_string(),
            Box::new(|| npm_packages(dir, &[spec.to_string()])),
        ));
    }
    jobs.push(("e2e-venv".into(), Box::new(python)));
    jobs.push(("e2e-phoenix-venv".into(), Box::new(phoenix)));
    jobs.push(("conformance-venv".into(), Box::new(conformance_python)));
    jobs.push((
        format!(
            "the interop matrix ({}, {})",
            interop::NPM_DIR,
            interop::venv_name("*")
        ),
        Box::new(|| {
            let plan = interop::plan(&root().join(interop::SERVERS))?;
            interop::install(&plan).map(|_| target_dir())
        }),
    ));
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|(what, job)| (what, scope.spawn(job)))
            .collect();
        handles
            .into_iter()
            .map(|(what, handle)| Fetched {
                result: handle
                    .join()
                    .unwrap_or_else(|_| Err(format!("{what}: the install panicked"))),
                what,
            })
            .collect()
    })
}
