//! Skills (the MCP Skills extension, SEP-2640), loaded on demand and checked
//! against their manifests.
//!
//! A server that declares `io.modelcontextprotocol/skills` lists its skills
//! with `skills/list`: each is a `SKILL.md` URI, the file's frontmatter, and
//! a manifest of the skill's files, each with its `sha256:` digest and size
//! (or `"dynamic"` when the files are made on demand). The files themselves
//! are resources, read with `resources/read`.
//!
//! The library holds to the extension's rules:
//!
//! - **Nothing is fetched before it is asked for.** Listing reads only the
//!   catalogue; `SKILL.md` is read when the skill is loaded, a file when it is
//!   asked for (after its skill is loaded).
//! - **Every file is verified** against its manifest entry: its size first,
//!   then its digest. A file that fails is not used, and its skill's other
//!   files are not read.
//! - **The frontmatter is compared** field by field with the entry's, after
//!   parsing `SKILL.md`'s YAML; any difference, or YAML that does not parse,
//!   and the skill is not loaded.
//! - **The limits hold**: a skill of more than [`MAX_SKILL_FILES`] files or
//!   [`MAX_SKILL_BYTES`] bytes in all, or an entry that breaks the
//!   extension's structure (a URI not ending in `/SKILL.md`, a name that is
//!   not the URI's, a manifest without its `SKILL.md`, a file outside the
//!   skill's directory, a malformed digest), is refused at listing, with
//!   the reason in [`SkillList::refused`].
//! - **A file outside the manifest is refused**, never read. A dynamic
//!   skill's files are read only under its directory, and said to be
//!   unverified. Directories are never listed (`resources/directory/read`):
//!   a manifest already names every file.
//!
//! Reading a `SKILL.md` through `read_resource` is a read, not a load.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use base64::Engine as _;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::server::{Server, list_whole_catalog};
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{Catalog, Object, ResourceContents};
use crate::toolset::FailedServer;

/// The library's tool that loads a skill and reads its files.
pub const LOAD_SKILL: &str = "load_skill";

/// The most files a skill may have, its `SKILL.md` included (the
/// extension's limit).
pub const MAX_SKILL_FILES: usize = 512;

/// The most bytes a skill's files may hold in all (the extension's limit, 16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The file every skill has at the root of its directory.
const SKILL_MD: &str = "SKILL.md";

/// One skill a server lists.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Skill {
    /// The server that serves it.
    pub server_id: String,
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// Its name (the frontmatter's, which is the URI's last directory).
    pub name: String,
    /// What it is for (the frontmatter's).
    pub description: String,
    /// The whole frontmatter, as the server listed it.
    pub frontmatter: Object,
    /// Its files, `SKILL.md` included; `None` for a dynamic skill, whose
    /// files are made on demand and carry no digests.
    pub files: Option<Vec<SkillFile>>,
}

/// One file of a skill's manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFile {
    /// Its URI.
    pub uri: String,
    /// Its path in the skill's directory (`references/FORMS.md`).
    pub path: String,
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// A skill a server listed that the library refuses, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RefusedSkill {
    /// The server.
    pub server_id: String,
    /// The entry's URI, as listed (empty when it had none).
    pub uri: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The skills of a source's servers.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct SkillList {
    /// The skills that can be loaded, by server, in the servers' order.
    pub skills: Vec<Skill>,
    /// Entries left out: malformed, or over the extension's limits.
    pub refused: Vec<RefusedSkill>,
    /// Servers whose `skills/list` failed.
    pub failed_servers: Vec<FailedServer>,
}

/// A loaded skill: its `SKILL.md`, verified.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The skill.
    pub skill: Skill,
    /// The whole `SKILL.md`, frontmatter included.
    pub text: String,
    /// Whether its bytes were checked against a digest (`false` for a
    /// dynamic skill; its frontmatter is compared either way).
    pub verified: bool,
}

impl Skill {
    /// Reads a `skills/list` (or `skills/get`) entry of `server_id`,
    /// checking the extension's structure and limits.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] naming what is wrong with the entry.
    pub fn from_entry(server_id: &str, entry: &Object) -> Result<Skill> {
        let uri = entry
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::input("the entry has no `uri`"))?;
        let fail = |what: String| Error::input(format!("skill `{uri}`: {what}"));
        let root = skill_root(uri).ok_or_else(|| {
            fail("its URI does not end in `/SKILL.md` (or has a query or fragment)".into())
        })?;
        let frontmatter = entry
            .get("frontmatter")
            .and_then(Value::as_object)
            .ok_or_else(|| fail("it has no `frontmatter` object".into()))?;
        let text = |key: &str| frontmatter.get(key).and_then(Value::as_str);
        let name = text("name")
            .filter(|n| !n.is_empty())
            .ok_or_else(|| fail("its frontmatter has no `name`".into()))?;
        let description = text("description")
            .ok_or_else(|| fail("its frontmatter has no `description`".into()))?;
        if !valid_name(name) {
            return Err(fail(format!(
                "its name {name:?} is not 1 to 64 lowercase letters, digits and single inner hyphens"
            )));
        }
        let decoded = uri_name(uri).unwrap_or_default();
        if decoded != name {
            return Err(fail(format!(
                "its name `{name}` is not its URI's directory `{decoded}`"
            )));
        }
        let files = match entry.get("resources") {
            Some(Value::String(marker)) if marker == "dynamic" => None,
            Some(Value::Array(listed)) => Some(manifest(uri, root, listed).map_err(fail)?),
            _ => {
                return Err(fail(
                    "its `resources` is neither a list of files nor \"dynamic\"".into(),
                ));
            }
        };
        Ok(Skill {
            server_id: server_id.to_owned(),
            uri: uri.to_owned(),
            name: name.to_owned(),
            description: description.to_owned(),
            frontmatter: frontmatter.clone(),
            files,
        })
    }

    /// The URI of the skill's directory, with its trailing `/`.
    pub fn root(&self) -> &str {
        skill_root(&self.uri).unwrap_or(&self.uri)
    }

    /// The manifest entry of `file` (a path in the skill's directory, or a
    /// URI), or for a dynamic skill the URI to read, with no entry.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Denied`] when the file is not in the manifest (or, for a
    /// dynamic skill, not in its directory).
    pub fn file(&self, file: &str) -> Result<(String, Option<&SkillFile>)> {
        let refuse = |why: &str| {
            Error::new(
                ErrorKind::Denied,
                format!(
                    "`{file}` {why} of skill `{}` (server `{}`); its files are: {}",
                    self.name,
                    self.server_id,
                    self.paths().join(", ")
                ),
            )
        };
        let root = self.root();
        let path = match file.strip_prefix(root) {
            Some(path) => path,
            None if file.contains("://") => return Err(refuse("is not in the manifest")),
            None => file.strip_prefix("./").unwrap_or(file),
        };
        match &self.files {
            Some(files) => files
                .iter()
                .find(|f| f.path == path)
                .map(|f| (f.uri.clone(), Some(f)))
                .ok_or_else(|| refuse("is not in the manifest")),
            None if relative_path_ok(path) => Ok((format!("{root}{path}"), None)),
            None => Err(refuse("is not a file in the directory")),
        }
    }

    /// The paths of the manifest's files (`SKILL.md` first), or of a dynamic
    /// skill, what it says.
    fn paths(&self) -> Vec<String> {
        match &self.files {
            Some(files) => files.iter().map(|f| f.path.clone()).collect(),
            None => vec![
                SKILL_MD.to_owned(),
                "(dynamic: the files SKILL.md names)".to_owned(),
            ],
        }
    }
}

/// Whether `name` is a skill name as the extension (after the Agent Skills
/// format) allows: 1 to 64 characters, lowercase letters (of any script)
/// and digits, with single hyphens between them.
fn valid_name(name: &str) -> bool {
    let count = name.chars().count();
    (1..=64).contains(&count)
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name
            .chars()
            .all(|c| c == '-' || (c.is_alphanumeric() && !c.is_uppercase()))
}

/// The name a `SKILL.md` URI gives its skill: its directory's, percent-decoded.
fn uri_name(uri: &str) -> Option<std::borrow::Cow<'_, str>> {
    let segment = skill_root(uri)?.trim_end_matches('/').rsplit('/').next()?;
    Some(percent_encoding::percent_decode_str(segment).decode_utf8_lossy())
}

/// The skill's directory URI (with `/`) of a `SKILL.md` URI.
fn skill_root(uri: &str) -> Option<&str> {
    if uri.contains(['?', '#']) {
        return None;
    }
    let root = uri.strip_suffix(SKILL_MD)?;
    (root.ends_with('/') && root.len() > 1).then_some(root)
}

/// Whether `path` names a file inside a directory: no empty, `.` or `..`
/// segment, no query or fragment, not absolute.
fn relative_path_ok(path: &str) -> bool {
    !path.is_empty()
        && !path.contains(['?', '#', '\\'])
        && path.split('/').all(|s| !matches!(s, "" | "." | ".."))
        && !path.split('/').any(|s| {
            let decoded = percent_encoding::percent_decode_str(s).decode_utf8_lossy();
            matches!(&*decoded, "." | "..") || decoded.contains('/')
        })
}

/// The files of a manifest, checked: each in the skill's directory, once,
/// with a well-formed digest; `SKILL.md` among them; within the limits.
fn manifest(
    uri: &str,
    root: &str,
    listed: &[Value],
) -> std::result::Result<Vec<SkillFile>, String> {
    if listed.len() > MAX_SKILL_FILES {
        return Err(format!(
            "it has {} files, more than the extension's {MAX_SKILL_FILES}",
            listed.len()
        ));
    }
    let mut files = Vec::with_capacity(listed.len());
    let mut seen = BTreeSet::new();
    let mut total: u64 = 0;
    for (i, file) in listed.iter().enumerate() {
        let field = |k: &str| file.get(k);
        let file_uri = field("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("its file {i} has no `uri`"))?;
        let path = file_uri
            .strip_prefix(root)
            .filter(|p| relative_path_ok(p))
            .ok_or_else(|| format!("its file `{file_uri}` is not in the skill's directory"))?;
        let digest = field("digest")
            .and_then(Value::as_str)
            .filter(|d| well_formed_digest(d))
            .ok_or_else(|| {
                format!(
                    "its file `{file_uri}` has no `digest` of `sha256:` and 64 lowercase hex digits"
                )
            })?;
        let size = field("size")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("its file `{file_uri}` has no `size` in bytes"))?;
        if !seen.insert(path) {
            return Err(format!("it lists `{file_uri}` twice"));
        }
        total = total.saturating_add(size);
        files.push(SkillFile {
            uri: file_uri.to_owned(),
            path: path.to_owned(),
            digest: digest.to_owned(),
            size,
        });
    }
    if total > MAX_SKILL_BYTES {
        return Err(format!(
            "its files hold {total} bytes, more than the extension's {MAX_SKILL_BYTES}"
        ));
    }
    match files.iter().position(|f| f.uri == uri) {
        Some(at) => files[..=at].rotate_right(1),
        None => return Err("its manifest does not list its own SKILL.md".into()),
    }
    Ok(files)
}

/// Whether `digest` is `sha256:` and 64 lowercase hex digits.
fn well_formed_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The `sha256:` digest of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut digest = String::with_capacity(71);
    digest.push_str("sha256:");
    for byte in Sha256::digest(bytes) {
        let _ = write!(digest, "{byte:02x}");
    }
    digest
}

/// Checks `bytes` against `file`'s size, then its digest.
fn verify(skill: &Skill, file: &SkillFile, bytes: &[u8]) -> Result<()> {
    let failed = |what: String| {
        Error::new(
            ErrorKind::InvalidResult,
            format!(
                "skill `{}` of server `{}`: {what}; the file fails verification and was not used",
                skill.name, skill.server_id
            ),
        )
    };
    if bytes.len() as u64 != file.size {
        return Err(failed(format!(
            "`{}` is {} bytes, its manifest says {}",
            file.uri,
            bytes.len(),
            file.size
        )));
    }
    let digest = sha256_digest(bytes);
    if digest != file.digest {
        return Err(failed(format!(
            "`{}` has digest {digest}, its manifest says {}",
            file.uri, file.digest
        )));
    }
    Ok(())
}

/// The frontmatter of a `SKILL.md`: the YAML between its opening `---` line
/// and the next `---` line.
///
/// # Errors
///
/// [`ErrorKind::InvalidResult`] when there is none, or it is not a YAML mapping.
pub fn frontmatter_of(text: &str) -> Result<Object> {
    let bad = |what: String| Error::new(ErrorKind::InvalidResult, what);
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(bad(
            "SKILL.md does not open with a `---` frontmatter line".into()
        ));
    }
    let start = text.find('\n').map_or(text.len(), |i| i + 1);
    let mut at = start;
    for line in lines {
        if line.trim_end() == "---" {
            let yaml = &text[start..at];
            let value: Value = serde_saphyr::from_str(yaml)
                .map_err(|e| bad(format!("SKILL.md's frontmatter is not YAML: {e}")))?;
            return match value {
                Value::Object(map) => Ok(map),
                other => Err(bad(format!(
                    "SKILL.md's frontmatter is not a mapping but {other}"
                ))),
            };
        }
        at += line.len();
    }
    Err(bad(
        "SKILL.md's frontmatter has no closing `---` line".into()
    ))
}

/// The bytes of a read's contents: the text's, or the blob's decoded.
pub(super) fn bytes_of(contents: &ResourceContents) -> Result<Vec<u8>> {
    match (&contents.text, &contents.blob) {
        (Some(text), _) => Ok(text.as_bytes().to_vec()),
        (None, Some(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|e| {
                Error::new(
                    ErrorKind::InvalidResult,
                    format!("`{}` is a blob that is not base64: {e}", contents.uri),
                )
            }),
        (None, None) => Err(Error::new(
            ErrorKind::InvalidResult,
            format!("`{}` came back with neither text nor blob", contents.uri),
        )),
    }
}

/// The skills a source's servers listed last, and those loaded.
#[derive(Debug, Default)]
pub(super) struct Skills {
    /// The last listing's skills, by server and name.
    held: Mutex<BTreeMap<(String, String), Skill>>,
    /// The skills loaded (verified), by server and name, as they were
    /// listed when they were verified: a listing that changes them asks for
    /// a new load.
    loaded: Mutex<BTreeMap<(String, String), Skill>>,
}

impl Skills {
    /// Lists the skills of `servers` (fresh), and holds them for loading.
    pub(super) async fn list<'a>(
        &self,
        servers: impl IntoIterator<Item = (&'a str, &'a dyn Server)>,
    ) -> SkillList {
        let mut list = SkillList::default();
        for (id, server) in servers {
            let entries = match list_whole_catalog(server, Catalog::Skills).await {
                Ok(entries) => entries,
                Err(e) => {
                    list.failed_servers.push(FailedServer {
                        server_id: id.to_owned(),
                        error: format!("skills/list: {}", e.message()),
                    });
                    continue;
                }
            };
            let mut names = BTreeSet::new();
            let mut listed = Vec::new();
            let refused_before = list.refused.len();
            for entry in &entries {
                let refuse = |reason: String| RefusedSkill {
                    server_id: id.to_owned(),
                    uri: entry
                        .get("uri")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    reason,
                };
                match Skill::from_entry(id, entry) {
                    Ok(skill) if !names.insert(skill.name.clone()) => list.refused.push(refuse(
                        format!("a second skill named `{}` on this server", skill.name),
                    )),
                    Ok(skill) => listed.push(skill),
                    Err(e) => list.refused.push(refuse(e.message().to_owned())),
                }
            }
            for refused in &list.refused[refused_before..] {
                tracing::warn!(server = %refused.server_id, uri = %refused.uri,
                    reason = %refused.reason, "a skill was refused");
            }
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            held.retain(|(server, _), _| server != id);
            for skill in &listed {
                held.insert((id.to_owned(), skill.name.clone()), skill.clone());
            }
            drop(held);
            list.skills.extend(listed);
        }
        list
    }

    /// The held skill `name` of `server_id`, listing the server again when
    /// it is not held.
    async fn skill(&self, server_id: &str, server: &dyn Server, name: &str) -> Result<Skill> {
        let key = (server_id.to_owned(), name.to_owned());
        if let Some(skill) = self.held().get(&key) {
            return Ok(skill.clone());
        }
        let list = self.list([(server_id, server)]).await;
        if let Some(failed) = list.failed_servers.first() {
            return Err(Error::new(ErrorKind::Unavailable, failed.error.clone()));
        }
        if let Some(refused) = list
            .refused
            .iter()
            .find(|r| uri_name(&r.uri).is_some_and(|n| n == name))
        {
            return Err(Error::new(
                ErrorKind::Denied,
                format!(
                    "skill `{name}` of server `{server_id}` is refused: {}",
                    refused.reason
                ),
            ));
        }
        self.held().get(&key).cloned().ok_or_else(|| {
            let names: Vec<&str> = list.skills.iter().map(|s| s.name.as_str()).collect();
            Error::new(
                ErrorKind::UnknownTool,
                format!(
                    "server `{server_id}` lists no skill `{name}`; it lists: {}",
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    }
                ),
            )
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Skill>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The name of the held skill of `server_id` whose directory holds `uri`.
    pub(super) fn skill_holding(&self, server_id: &str, uri: &str) -> Option<String> {
        self.held()
            .iter()
            .find(|((server, _), skill)| server == server_id && uri.starts_with(skill.root()))
            .map(|((_, name), _)| name.clone())
    }

    /// The servers that hold a skill named `name`, from the last listing.
    pub(super) fn servers_holding(&self, name: &str) -> Vec<String> {
        self.held()
            .keys()
            .filter(|(_, n)| n == name)
            .map(|(s, _)| s.clone())
            .collect()
    }

    /// Loads skill `name` of `server_id`: reads its `SKILL.md`, verifies it
    /// against the manifest, and compares its frontmatter with the entry's.
    pub(super) async fn load(
        &self,
        server_id: &str,
        server: &dyn Server,
        name: &str,
    ) -> Result<LoadedSkill> {
        let skill = self.skill(server_id, server, name).await?;
        let read = server.read_resource(&skill.uri).await?;
        let contents = the_contents(&skill.uri, read.contents)?;
        let bytes = bytes_of(&contents)?;
        let entry = skill.files.as_ref().and_then(|f| f.first());
        if let Some(entry) = entry {
            verify(&skill, entry, &bytes)?;
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::new(
                ErrorKind::InvalidResult,
                format!("`{}` is not UTF-8 text", skill.uri),
            )
        })?;
        let frontmatter = frontmatter_of(&text).map_err(|e| {
            let message = format!(
                "skill `{name}` of server `{server_id}`: {}; not loaded",
                e.message()
            );
            e.with_message(message)
        })?;
        if frontmatter != skill.frontmatter {
            let differing: Vec<&str> = skill
                .frontmatter
                .keys()
                .chain(frontmatter.keys())
                .filter(|k| skill.frontmatter.get(*k) != frontmatter.get(*k))
                .map(String::as_str)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            return Err(Error::new(
                ErrorKind::InvalidResult,
                format!(
                    "skill `{name}` of server `{server_id}`: SKILL.md's frontmatter differs from the listed entry's in {}; not loaded",
                    differing
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        self.loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((server_id.to_owned(), name.to_owned()), skill.clone());
        Ok(LoadedSkill {
            verified: entry.is_some(),
            skill,
            text,
        })
    }

    /// Reads `file` of skill `name` (loading the skill first when it is
    /// not loaded), verified against its manifest entry.
    pub(super) async fn read_file(
        &self,
        server_id: &str,
        server: &dyn Server,
        name: &str,
        file: &str,
    ) -> Result<(Skill, ResourceContents)> {
        let mut skill = self.skill(server_id, server, name).await?;
        let key = (server_id.to_owned(), name.to_owned());
        let loaded = self
            .loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .is_some_and(|verified| *verified == skill);
        if !loaded {
            skill = self.load(server_id, server, name).await?.skill;
        }
        let (uri, entry) = skill.file(file)?;
        let read = server.read_resource(&uri).await?;
        let contents = the_contents(&uri, read.contents)?;
        let bytes = bytes_of(&contents)?;
        match entry {
            Some(entry) => verify(&skill, entry, &bytes)?,
            None if bytes.len() as u64 > MAX_SKILL_BYTES => {
                return Err(Error::new(
                    ErrorKind::InvalidResult,
                    format!(
                        "skill `{}` of server `{server_id}`: `{uri}` is {} bytes, more than the extension's {MAX_SKILL_BYTES} for a whole skill; not used",
                        skill.name,
                        bytes.len()
                    ),
                ));
            }
            None => {}
        }
        Ok((skill, contents))
    }
}

/// The part of a read that is `uri` (or its one part).
fn the_contents(uri: &str, mut contents: Vec<ResourceContents>) -> Result<ResourceContents> {
    if let Some(at) = contents.iter().position(|c| c.uri == uri) {
        return Ok(contents.swap_remove(at));
    }
    match contents.len() {
        1 => Ok(contents.remove(0)),
        n => Err(Error::new(
            ErrorKind::InvalidResult,
            format!("the read of `{uri}` came back with {n} parts, none of them `{uri}`"),
        )),
    }
}

/// The arguments the model gives [`LOAD_SKILL`]: the skill, the server when
/// several are open, a file to read.
pub(super) struct LoadArguments<'a> {
    pub(super) skill: &'a str,
    pub(super) server: Option<&'a str>,
    pub(super) file: Option<&'a str>,
}

impl<'a> LoadArguments<'a> {
    pub(super) fn read(arguments: &'a Map<String, Value>) -> Result<Self> {
        let text = |k: &str| -> Result<Option<&'a str>> {
            match arguments.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(other) => Err(Error::input(format!("`{k}` must be a string, not {other}"))),
            }
        };
        Ok(LoadArguments {
            skill: text("skill")?.ok_or_else(|| Error::input("`skill` is required"))?,
            server: text("server")?,
            file: text("file")?.filter(|f| !f.is_empty() && *f != SKILL_MD),
        })
    }
}
