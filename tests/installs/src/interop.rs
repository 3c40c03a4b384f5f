//! The interop matrix's packages: one server a line in
//! `tests/interop/servers.jsonl`, its `package` (`npm:NAME@VERSION` or
//! `pypi:NAME==VERSION`) and `pins` (dependencies pinned beside it, in the
//! same form). The npm ones are installed together in
//! `<target>/interop-npm`, each PyPI server in a virtualenv of its own,
//! `<target>/interop-py-NAME`, with its pins.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The matrix, relative to the root.
pub const SERVERS: &str = "tests/interop/servers.jsonl";
/// The folder (under the target folder) of the npm packages.
pub const NPM_DIR: &str = "interop-npm";

/// The virtualenv (under the target folder) of the PyPI server `server`.
pub fn venv_name(server: &str) -> String {
    format!("interop-py-{server}")
}

/// A package spec, split.
pub struct Package<'a> {
    /// `npm` or `pypi`.
    pub registry: &'a str,
    pub name: &'a str,
    pub version: &'a str,
    /// What the registry's client installs (`name@version`, `name==version`).
    pub spec: &'a str,
}

/// Splits `npm:NAME@VERSION` or `pypi:NAME==VERSION`; an error names the
/// spec and what it lacks.
pub fn package(spec: &str) -> Result<Package<'_>, String> {
    let (registry, rest) = spec
        .split_once(':')
        .ok_or_else(|| format!("`{spec}`: no `npm:` or `pypi:`"))?;
    let (name, version) = match registry {
        // A scoped name starts with `@`: the version follows the last one.
        "npm" => rest.rsplit_once('@').filter(|(n, _)| !n.is_empty()),
        "pypi" => rest.split_once("=="),
        other => return Err(format!("`{spec}`: unknown registry `{other}`")),
    }
    .ok_or_else(|| format!("`{spec}`: no exact version"))?;
    Ok(Package {
        registry,
        name,
        version,
        spec: rest,
    })
}

/// What the matrix installs: the npm specs (together), and each PyPI
/// server's pins (its own virtualenv), by server name.
#[derive(Debug, Default)]
pub struct Plan {
    pub npm: Vec<String>,
    pub venvs: Vec<(String, Vec<String>)>,
}

/// The plan of the servers `(name, package, pins)`.
pub fn plan_of<'a>(
    servers: impl IntoIterator<Item = (&'a str, &'a str, &'a [String])>,
) -> Result<Plan, String> {
    let mut plan = Plan::default();
    for (name, main, pins) in servers {
        let mut pypi = Vec::new();
        for spec in std::iter::once(main).chain(pins.iter().map(String::as_str)) {
            let package = package(spec)?;
            match package.registry {
                "npm" if !plan.npm.iter().any(|s| s == package.spec) => {
                    plan.npm.push(package.spec.to_owned())
                }
                "pypi" => pypi.push(package.spec.to_owned()),
                _ => {}
            }
        }
        if package(main)?.registry == "pypi" {
            plan.venvs.push((name.to_owned(), pypi));
        }
    }
    Ok(plan)
}

/// The plan of the matrix file at `path`; an error names the file and line.
pub fn plan(path: &Path) -> Result<Plan, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{}: {e}", at()))?;
        let text = |key: &str| {
            value[key]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{}: no string `{key}`", at()))
        };
        let pins = match &value["pins"] {
            serde_json::Value::Null => Vec::new(),
            serde_json::Value::Array(pins) => pins
                .iter()
                .map(|p| p.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("{}: `pins` holds a non-string", at()))?,
            _ => return Err(format!("{}: `pins` is not a list", at())),
        };
        lines.push((text("name")?, text("package")?, pins));
    }
    plan_of(
        lines
            .iter()
            .map(|(n, p, pins)| (n.as_str(), p.as_str(), pins.as_slice())),
    )
}

/// Where the matrix's packages are installed.
pub struct Installed {
    /// The npm folder's `node_modules`, when the matrix has npm packages.
    pub npm: Option<PathBuf>,
    /// Each PyPI server's virtualenv, by server name.
    pub venvs: BTreeMap<String, PathBuf>,
}

/// Installs every package of `plan`, the npm ones together and each PyPI
/// server in its virtualenv, all at once.
pub fn install(plan: &Plan) -> Result<Installed, String> {
    std::thread::scope(|scope| {
        let npm =
            (!plan.npm.is_empty()).then(|| scope.spawn(|| super::npm_packages(NPM_DIR, &plan.npm)));
        let venvs: Vec<_> = plan
            .venvs
            .iter()
            .map(|(server, pins)| {
                let handle = scope.spawn(move || super::venv_with(&venv_name(server), pins));
                (server, handle)
            })
            .collect();
        let joined = |h: std::thread::ScopedJoinHandle<'_, Result<PathBuf, String>>| {
            h.join()
                .unwrap_or_else(|_| Err("an install panicked".to_owned()))
        };
        let npm = npm.map(joined).transpose()?;
        let mut by_server = BTreeMap::new();
        for (server, handle) in venvs {
            let python = joined(handle)?;
            // <venv>/bin/python -> <venv>
            let venv = python
                .parent()
                .and_then(Path::parent)
                .map(Path::to_path_buf)
                .ok_or_else(|| format!("{}: not in a virtualenv", python.display()))?;
            by_server.insert(server.clone(), venv);
        }
        Ok(Installed {
            npm,
            venvs: by_server,
        })
    })
}
