//! Reading the command line's inputs: spec folders, JSON files, tools/list
//! files and the toolset they make.

use std::path::Path;

use mcp_adapters::mcp::parse_tools_list;
use mcp_adapters::stream::Framing;
use mcp_adapters::{Error, ErrorKind, Registry, Result, Tool, ToolSet};
use serde_json::Value;

use super::NamingArgs;

/// The built-in specs, plus `dir`'s when given.
pub fn registry(dir: Option<&Path>) -> Result<Registry> {
    match dir {
        Some(dir) => Registry::with_dir(dir),
        None => Registry::builtin().cloned(),
    }
}

/// Reads the bytes of `path` (`-` is stdin).
pub fn read_bytes(path: &str) -> Result<Vec<u8>> {
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .map_err(|e| Error::new(ErrorKind::Io, "cannot read stdin").with_source(e))?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(|e| {
        Error::new(ErrorKind::Io, format!("cannot read {path}"))
            .with_file(path)
            .with_source(e)
    })
}

/// The framing of recorded stream bytes: SSE lines, JSON text (read as
/// `spec` says when it is a JSON framing), or else binary frames.
pub fn detect_framing(bytes: &[u8], spec: Framing) -> Framing {
    let text = bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(bytes)
        .trim_ascii_start();
    let sse = [&b"data:"[..], b"event:", b":", b"id:", b"retry:"];
    if sse.iter().any(|p| text.starts_with(p)) {
        Framing::Sse
    } else if text.starts_with(b"{") || text.starts_with(b"[") {
        match spec {
            Framing::Ndjson => Framing::Ndjson,
            _ => Framing::Json,
        }
    } else if text.is_empty() {
        spec
    } else {
        Framing::EventStream
    }
}

/// Reads JSON from `path` (`-` is stdin).
pub fn read_json(path: &str) -> Result<Value> {
    let text = if path == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| Error::new(ErrorKind::Io, "cannot read stdin").with_source(e))?
    } else {
        std::fs::read_to_string(path).map_err(|e| {
            Error::new(ErrorKind::Io, format!("cannot read {path}"))
                .with_file(path)
                .with_source(e)
        })?
    };
    serde_json::from_str(&text).map_err(|e| {
        let line = e.line();
        Error::new(ErrorKind::Input, "invalid JSON")
            .with_file(path)
            .with_line(line)
            .with_source(e)
    })
}

/// `NAME=FILE` or `FILE` (the server id is the stem, without a `.tools` suffix).
fn server_file(arg: &str) -> (String, &str) {
    if let Some((name, file)) = arg
        .split_once('=')
        .filter(|(n, _)| !n.is_empty() && !n.contains('/'))
    {
        return (name.to_owned(), file);
    }
    let stem = Path::new(arg)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(arg);
    (stem.strip_suffix(".tools").unwrap_or(stem).to_owned(), arg)
}

/// The servers in `tools/list` files given as `FILE` or `NAME=FILE`.
pub fn read_servers(files: &[String]) -> Result<Vec<(String, Vec<Tool>)>> {
    files
        .iter()
        .map(|arg| {
            let (server, file) = server_file(arg);
            let value = read_json(file)?;
            // The provider's definitions that `tools` prints are not MCP tools.
            let definitions = value.get("tools").is_some() && value.get("null_paths").is_some();
            let tools = parse_tools_list(value).map_err(|e| match definitions {
                true => Error::new(
                    ErrorKind::Input,
                    "this is a provider's tool definitions (`tools` output), not a tools/list result: write one with `tools --raw`",
                )
                .with_file(file)
                .with_source(e),
                false => e.with_file(file),
            })?;
            Ok((server, tools))
        })
        .collect()
}

/// The toolset of `servers` with the naming and filter flags: a client for
/// one server (unless `--hub`), a hub for more.
pub fn toolset(args: &NamingArgs, servers: Vec<(String, Vec<Tool>)>) -> Result<ToolSet> {
    let mut builder = if args.hub || servers.len() > 1 {
        ToolSet::hub()
    } else {
        ToolSet::client()
    };
    if let Some(prefix) = &args.prefix {
        builder = builder.prefix(prefix);
    }
    builder = builder.refuse_hidden_characters(args.refuse_hidden);
    for glob in &args.allow {
        builder = builder.allow(glob);
    }
    for glob in &args.deny {
        builder = builder.deny(glob);
    }
    for binding in super::live::parse_binds(&args.bind)? {
        builder = builder.bind(binding);
    }
    for (id, tools) in servers {
        builder = builder.server(id, tools);
    }
    builder.build()
}

/// `NAME=VALUE` pairs of `--option`.
pub fn option_pairs(pairs: &[String]) -> Result<Vec<(&str, &str)>> {
    pairs
        .iter()
        .map(|pair| {
            pair.split_once('=').ok_or_else(|| {
                Error::new(
                    ErrorKind::Input,
                    format!("--option `{pair}`: expected NAME=VALUE"),
                )
            })
        })
        .collect()
}
