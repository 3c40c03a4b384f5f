//! Shaping results for a model (PI-2), before any provider mapping: which
//! media a model may be given, placeholders, base64 payloads and mirrored
//! content inside `structuredContent`, and the file and document names media
//! rules use.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::mcp::{Content, ResourceContents};

/// Image types a model may be given (each spec's rules say which it takes).
pub(crate) const MODEL_IMAGE_TYPES: &[&str] = &[
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "image/heic",
    "image/heif",
];
/// Audio types a model may be given.
pub(crate) const MODEL_AUDIO_TYPES: &[&str] = &[
    "audio/wav",
    "audio/mpeg",
    "audio/ogg",
    "audio/webm",
    "audio/flac",
    "audio/aac",
    "audio/aiff",
];
/// Video types a model may be given (embedded blobs: MCP has no video block).
pub(crate) const MODEL_VIDEO_TYPES: &[&str] = &[
    "video/mp4",
    "video/mpeg",
    "video/mpg",
    "video/mov",
    "video/quicktime",
    "video/avi",
    "video/x-flv",
    "video/webm",
    "video/wmv",
    "video/3gpp",
];
/// Document types a model may be given (embedded blobs).
pub(crate) const MODEL_DOCUMENT_TYPES: &[&str] = &["application/pdf", "text/plain"];

/// The base64 text every PDF starts with (`%PDF-`).
const PDF_MAGIC_BASE64: &str = "JVBERi0";

/// The MIME type a blob is treated as: its own, normalized; a blob labelled
/// `application/octet-stream` (or not labelled) whose bytes start with `%PDF-`
/// is `application/pdf` (servers that map file extensions to MIME types often
/// know no `.pdf`).
pub(crate) fn blob_mime<'a>(mime: Option<&'a str>, blob: &str) -> Option<Cow<'a, str>> {
    let mime = mime.map(normalize_mime);
    let unlabelled = mime
        .as_deref()
        .is_none_or(|m| m == "application/octet-stream");
    if unlabelled && blob.starts_with(PDF_MAGIC_BASE64) {
        return Some(Cow::Borrowed("application/pdf"));
    }
    mime
}

/// The MIME type's essence, lower-cased, with common aliases folded
/// (`image/jpg` → `image/jpeg`, `audio/x-wav` → `audio/wav`, `audio/mp3` → `audio/mpeg`).
pub(crate) fn normalize_mime(mime: &str) -> Cow<'_, str> {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    let lower: Cow<'_, str> = if essence.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(essence.to_ascii_lowercase())
    } else {
        Cow::Borrowed(essence)
    };
    match lower.as_ref() {
        "image/jpg" | "image/pjpeg" => Cow::Borrowed("image/jpeg"),
        "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => Cow::Borrowed("audio/wav"),
        "audio/mp3" | "audio/x-mp3" | "audio/mpeg3" => Cow::Borrowed("audio/mpeg"),
        "audio/x-flac" => Cow::Borrowed("audio/flac"),
        "audio/x-aiff" => Cow::Borrowed("audio/aiff"),
        _ => lower,
    }
}

/// The decoded length of standard base64 text (padding optional), or `None` if
/// it is not valid base64. Runs in one pass without decoding.
pub(crate) fn base64_decoded_len(data: &str) -> Option<usize> {
    let bytes = data.as_bytes();
    let body = bytes
        .strip_suffix(b"==")
        .or_else(|| bytes.strip_suffix(b"="))
        .unwrap_or(bytes);
    // Whole quanta through the SIMD checker (tens of megabytes for an image
    // or a document: the check was the slowest step of answering one); a
    // whole quantum has no spare bits, so any letters are canonical there.
    // The last 2 or 3 letters are checked here, spare bits allowed.
    let whole = body.len() - body.len() % 4;
    let (quanta, rest) = body.split_at(whole);
    if base64_simd::STANDARD_NO_PAD.check(quanta).is_err()
        || !rest
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
    {
        return None;
    }
    let padding = bytes.len() - body.len();
    let rem = body.len() % 4;
    let valid = matches!((rem, padding), (0, 0) | (2, 0 | 2) | (3, 0 | 1));
    valid.then(|| body.len() / 4 * 3 + rem.saturating_sub(1))
}

/// `[image: image/png, 1024 bytes]`, `[image: image/png, invalid base64]`,
/// or `[image: image/png, no data]` for an empty payload.
fn sized_placeholder(kind: &str, mime: &str, size: Option<usize>) -> String {
    match size {
        Some(0) => format!("[{kind}: {mime}, no data]"),
        Some(n) => format!("[{kind}: {mime}, {n} bytes]"),
        None => format!("[{kind}: {mime}, invalid base64]"),
    }
}

/// A block's base64 payload measured once: `None` when it has none, else its
/// decoded size (`None` inside for invalid base64). Pass it to the `_measured`
/// functions so a large payload is scanned a single time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Measured(Option<Option<usize>>);

impl Measured {
    pub(crate) fn of(content: &Content) -> Measured {
        let payload = match content {
            Content::Image(m) | Content::Audio(m) => Some(m.data.as_str()),
            Content::Resource(r) => r.resource.blob.as_deref(),
            _ => None,
        };
        Measured(payload.map(base64_decoded_len))
    }

    /// The decoded size, when the block has a valid payload that is not
    /// empty (an API refuses an empty medium as it does a malformed one).
    pub(crate) fn size(self) -> Option<usize> {
        self.0.flatten().filter(|&n| n > 0)
    }

    /// The decoded size for a placeholder: `Some(0)` for an empty payload.
    fn shown(self) -> Option<usize> {
        self.0.flatten()
    }
}

/// The standard text form of a content block, used where nothing richer applies.
pub(crate) fn text_form_measured(content: &Content, measured: Measured) -> Cow<'_, str> {
    let size = measured.shown();
    match content {
        Content::Text(t) => Cow::Borrowed(&t.text),
        Content::Image(m) => Cow::Owned(sized_placeholder("image", &m.mime_type, size)),
        Content::Audio(m) => Cow::Owned(sized_placeholder("audio", &m.mime_type, size)),
        Content::ResourceLink(link) => Cow::Owned(match &link.mime_type {
            Some(mime) => format!("[resource] {} <{}> ({mime})", link.name, link.uri),
            None => format!("[resource] {} <{}>", link.name, link.uri),
        }),
        Content::Resource(r) => Cow::Owned(resource_text_form(&r.resource, size)),
        Content::Unknown(_) => {
            Cow::Owned(format!("[unsupported content: {}]", content.type_name()))
        }
    }
}

fn resource_text_form(r: &ResourceContents, size: Option<usize>) -> String {
    match (&r.text, &r.blob) {
        (Some(text), _) => format!("[resource: {}]\n{text}", r.uri),
        (None, Some(_)) => {
            let mime = r.mime_type.as_deref().unwrap_or("application/octet-stream");
            match size {
                Some(0) => format!("[resource: {}, {mime}, no data]", r.uri),
                Some(n) => format!("[resource: {}, {mime}, {n} bytes]", r.uri),
                None => format!("[resource: {}, {mime}, invalid base64]", r.uri),
            }
        }
        (None, None) => format!("[resource: {}]", r.uri),
    }
}

fn accepted(mime: &str, types: &[&str], measured: Measured) -> bool {
    measured.size().is_some() && types.contains(&mime)
}

/// Whether a content block can reach a model as it is, or must become a
/// placeholder first (the table in [`Shape`](crate::results::Shape)'s docs).
pub(crate) fn fits_model_measured(content: &Content, measured: Measured) -> bool {
    match content {
        Content::Image(m) => accepted(&normalize_mime(&m.mime_type), MODEL_IMAGE_TYPES, measured),
        Content::Audio(m) => accepted(&normalize_mime(&m.mime_type), MODEL_AUDIO_TYPES, measured),
        Content::Resource(r) => match &r.resource.blob {
            Some(blob) => blob_mime(r.resource.mime_type.as_deref(), blob).is_some_and(|mime| {
                [
                    MODEL_IMAGE_TYPES,
                    MODEL_DOCUMENT_TYPES,
                    MODEL_AUDIO_TYPES,
                    MODEL_VIDEO_TYPES,
                ]
                .iter()
                .any(|types| accepted(&mime, types, measured))
            }),
            None => true,
        },
        _ => true,
    }
}

/// A text form with the reason a medium was not sent, before its closing bracket:
/// `[image: image/png, 6000000 bytes; over ...]`.
pub(crate) fn with_reason(text: &str, reason: &str) -> String {
    match text.strip_suffix(']') {
        Some(open) => format!("{open}; {reason}]"),
        None => format!("{text} [{reason}]"),
    }
}

/// The extension a file of `mime` usually has, for the types the specs send as files.
fn extension(mime: &str) -> Option<&'static str> {
    Some(match mime {
        "application/pdf" => "pdf",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/csv" => "csv",
        "text/html" => "html",
        "image/jpeg" => "jpg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "audio/mpeg" => "mp3",
        "audio/wav" => "wav",
        "video/mp4" => "mp4",
        _ => return None,
    })
}

/// The longest file name [`file_name`] makes, in bytes.
const MAX_FILE_NAME: usize = 100;

/// A file name for a resource: the last segment of its URI's path,
/// percent-decoded, with every character other than ASCII letters, digits,
/// `.`, `_` and `-` replaced by `_`, at most 100 bytes, ending in the MIME
/// type's usual extension; `file` (plus the extension) when nothing is left.
pub(crate) fn file_name(uri: &str, mime: Option<&str>) -> String {
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let segment = path.rsplit('/').next().unwrap_or_default();
    let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
    let mut name: String = decoded
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    let trimmed = name.trim_start_matches('.').len();
    name.drain(..name.len() - trimmed);
    if name.chars().all(|c| c == '_' || c == '.') {
        name = "file".to_owned();
    }
    // The name's own extension stays when the name is cut; the MIME type's is added when missing.
    let (mut stem, mut ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && ext.len() <= MAX_EXTENSION => {
            (stem.to_owned(), format!(".{ext}"))
        }
        _ => (name, String::new()),
    };
    if let Some(wanted) = mime.and_then(extension)
        && !ext.eq_ignore_ascii_case(&format!(".{wanted}"))
    {
        stem.push_str(&ext);
        ext = format!(".{wanted}");
    }
    // Every character is ASCII here, so any byte index is a boundary.
    stem.truncate(MAX_FILE_NAME - ext.len());
    stem + &ext
}

/// The longest extension [`file_name`] keeps when it cuts a name.
const MAX_EXTENSION: usize = 10;

/// The longest document name Bedrock-style APIs take.
const MAX_DOCUMENT_NAME: usize = 200;

/// A document name made only of ASCII letters, digits, single spaces, hyphens,
/// parentheses and square brackets (no dots), at most 200 bytes, unique among
/// the documents of a conversation as long as call ids are: the file name's
/// stem, its extension in parentheses, then the call id and the block's
/// position in brackets: `report (pdf) [toolu-1 item 2]`.
pub(crate) fn document_name(file_name: &str, call_id: Option<&str>, n: usize) -> String {
    let (stem, ext) = match file_name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, Some(ext)),
        _ => (file_name, None),
    };
    let words = |s: &str, sep: char, max: usize| -> String {
        let mapped: String = s
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    sep
                }
            })
            .collect();
        let mut out = if sep == ' ' {
            mapped.split_whitespace().collect::<Vec<_>>().join(" ")
        } else {
            mapped
        };
        // ASCII only, so any byte index is a boundary.
        out.truncate(max);
        out.trim_end().to_owned()
    };
    let tag = match call_id.map(|id| words(id, '-', 64)) {
        Some(id) if !id.is_empty() => format!(" [{id} item {n}]"),
        _ => format!(" [item {n}]"),
    };
    let ext = ext
        .map(|e| words(e, ' ', 16))
        .filter(|e| !e.is_empty())
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    let stem = words(stem, ' ', MAX_DOCUMENT_NAME - tag.len() - ext.len());
    let stem = if stem.is_empty() { "document" } else { &stem };
    format!("{stem}{ext}{tag}")
}

/// A base64 payload inside a structured value, as the text that replaces it.
///
/// Three kinds of string are payloads: a `data:` URI with `;base64,`; a string
/// of at least [`MIN_TAGGED_PAYLOAD`] characters of valid base64 under a `data`
/// or `blob` key whose object names a MIME type (`mimeType`, `mime_type`,
/// `mediaType`, `media_type`); and any string of at least
/// [`MIN_UNTAGGED_PAYLOAD`] characters of valid base64 that mixes upper- and
/// lower-case letters with digits or `+`/`/` (text, identifiers, hex and
/// letter-only sequences do not).
fn payload_placeholder(s: &str, mime_sibling: Option<&str>) -> Option<String> {
    if let Some(rest) = s.strip_prefix("data:")
        && let Some((head, payload)) = rest.split_once(',')
        && let Some(mime) = head.strip_suffix(";base64")
    {
        let mime = normalize_mime(mime);
        return Some(omitted(Some(&mime), base64_decoded_len(payload)));
    }
    if s.len() < MIN_TAGGED_PAYLOAD {
        return None;
    }
    let tagged = mime_sibling.is_some();
    if !tagged && s.len() < MIN_UNTAGGED_PAYLOAD {
        return None;
    }
    let size = base64_decoded_len(s)?;
    if !tagged && !mixes_base64_classes(s) {
        return None;
    }
    Some(omitted(
        mime_sibling.map(normalize_mime).as_deref(),
        Some(size),
    ))
}

/// Tagged payloads shorter than this stay (a few dozen tokens at most).
const MIN_TAGGED_PAYLOAD: usize = 256;
/// Untagged base64-looking strings shorter than this stay.
const MIN_UNTAGGED_PAYLOAD: usize = 1024;

fn mixes_base64_classes(s: &str) -> bool {
    let (mut upper, mut lower, mut other) = (false, false, false);
    for b in s.bytes() {
        upper |= b.is_ascii_uppercase();
        lower |= b.is_ascii_lowercase();
        other |= b.is_ascii_digit() || b == b'+' || b == b'/';
        if upper && lower && other {
            return true;
        }
    }
    false
}

fn omitted(mime: Option<&str>, size: Option<usize>) -> String {
    match (mime, size) {
        (Some(mime), Some(n)) => format!("[{mime}, {n} bytes of base64, omitted]"),
        (Some(mime), None) => format!("[{mime}, invalid base64, omitted]"),
        (None, Some(n)) => format!("[{n} bytes of base64, omitted]"),
        (None, None) => "[invalid base64, omitted]".to_owned(),
    }
}

const MIME_KEYS: [&str; 4] = ["mimeType", "mime_type", "mediaType", "media_type"];
const PAYLOAD_KEYS: [&str; 2] = ["data", "blob"];

fn mime_of(map: &Map<String, Value>) -> Option<&str> {
    MIME_KEYS.iter().find_map(|k| map.get(*k)?.as_str())
}

/// What replaces `value` (a child of `parent`, under `key`) if it is a payload.
fn replacement(value: &Value, parent: Option<(&Map<String, Value>, &str)>) -> Option<String> {
    let s = value.as_str()?;
    let sibling = parent
        .filter(|(_, key)| PAYLOAD_KEYS.contains(key))
        .and_then(|(map, _)| mime_of(map));
    payload_placeholder(s, sibling)
}

fn has_payload(value: &Value, parent: Option<(&Map<String, Value>, &str)>) -> bool {
    match value {
        Value::String(_) => replacement(value, parent).is_some(),
        Value::Array(items) => items.iter().any(|v| has_payload(v, None)),
        Value::Object(map) => map.iter().any(|(k, v)| has_payload(v, Some((map, k)))),
        _ => false,
    }
}

fn without_payloads(value: &Value, parent: Option<(&Map<String, Value>, &str)>) -> Value {
    match value {
        Value::String(_) => match replacement(value, parent) {
            Some(text) => Value::String(text),
            None => value.clone(),
        },
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| without_payloads(v, None)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), without_payloads(v, Some((map, k)))))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A structured value shaped for a model (PI-2): every base64 payload in it
/// (see [`payload_placeholder`]) becomes a placeholder such as
/// `[image/png, 4033 bytes of base64, omitted]`; a value without one is borrowed.
/// The caller bounds the value's depth first.
pub(crate) fn shape_structured(value: &Value) -> Cow<'_, Value> {
    if has_payload(value, None) {
        Cow::Owned(without_payloads(value, None))
    } else {
        Cow::Borrowed(value)
    }
}

/// Whether the JSON `value` repeats the content block `content` (its type and
/// what it carries; annotations and `_meta` aside).
fn repeats(value: &Value, content: &Content) -> bool {
    let Some(map) = value.as_object() else {
        return false;
    };
    let field = |k: &str| map.get(k).and_then(Value::as_str);
    if field("type") != Some(content.type_name()) {
        return false;
    }
    match content {
        Content::Text(t) => field("text") == Some(t.text.as_str()),
        Content::Image(m) | Content::Audio(m) => {
            field("data") == Some(m.data.as_str())
                && field("mimeType") == Some(m.mime_type.as_str())
        }
        Content::ResourceLink(l) => field("uri") == Some(l.uri.as_str()),
        Content::Resource(r) => {
            let Some(inner) = map.get("resource").and_then(Value::as_object) else {
                return false;
            };
            let inner_field = |k: &str| inner.get(k).and_then(Value::as_str);
            inner_field("uri") == Some(r.resource.uri.as_str())
                && inner_field("blob") == r.resource.blob.as_deref()
                && inner_field("text") == r.resource.text.as_deref()
        }
        Content::Unknown(u) => value == u,
    }
}

fn repeats_all(value: &Value, content: &[Content]) -> bool {
    value.as_array().is_some_and(|items| {
        items.len() == content.len() && items.iter().zip(content).all(|(v, c)| repeats(v, c))
    })
}

/// `structuredContent` without what only repeats the content blocks: `None`
/// when it is the list of blocks itself or an object whose every member is
/// (the reference filesystem server's `{"content": [...]}`), the object
/// without those members when some are, else the value as it is.
pub(crate) fn without_mirror<'a>(value: &'a Value, content: &[Content]) -> Option<Cow<'a, Value>> {
    if content.is_empty() {
        return Some(Cow::Borrowed(value));
    }
    if repeats_all(value, content) {
        return None;
    }
    let Some(map) = value.as_object() else {
        return Some(Cow::Borrowed(value));
    };
    let mirrored = map.values().filter(|v| repeats_all(v, content)).count();
    match mirrored {
        0 => Some(Cow::Borrowed(value)),
        n if n == map.len() => None,
        _ => Some(Cow::Owned(Value::Object(
            map.iter()
                .filter(|(_, v)| !repeats_all(v, content))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_lengths() {
        let cases = [
            ("", Some(0)),
            ("QQ==", Some(1)),
            ("QUI=", Some(2)),
            ("QUJD", Some(3)),
            ("QQ", Some(1)),
            ("QUI", Some(2)),
            ("QUJDRA==", Some(4)),
            ("Q", None),
            ("QQ=", None),
            ("Q===", None),
            ("QU JD", None),
            ("QU-_", None),
            ("QUJD\n", None),
        ];
        for (input, want) in cases {
            assert_eq!(base64_decoded_len(input), want, "{input:?}");
        }
    }

    /// The SIMD check agrees with a byte-by-byte reading of the rule: a bad
    /// byte anywhere (inside the checker's blocks, across their edges, in the
    /// last letters) is found, and spare bits in the last letters are allowed.
    #[test]
    fn base64_check_finds_a_bad_byte_anywhere() {
        let reference = |s: &[u8]| {
            let body = s
                .strip_suffix(b"==")
                .or_else(|| s.strip_suffix(b"="))
                .unwrap_or(s);
            let letters = body
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
            let rem = body.len() % 4;
            let valid = matches!(
                (rem, s.len() - body.len()),
                (0, 0) | (2, 0 | 2) | (3, 0 | 1)
            );
            (letters && valid).then(|| body.len() / 4 * 3 + rem.saturating_sub(1))
        };
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for len in 0..140 {
            let good: Vec<u8> = (0..len).map(|i| alphabet[(i * 7 + 3) % 64]).collect();
            let text = std::str::from_utf8(&good).unwrap();
            assert_eq!(base64_decoded_len(text), reference(&good), "length {len}");
            for at in 0..len {
                for bad in [b'-', b'_', b'=', b' ', b'\n', 0x7f, b'.'] {
                    let mut s = good.clone();
                    s[at] = bad;
                    let text = std::str::from_utf8(&s).unwrap();
                    assert_eq!(
                        base64_decoded_len(text),
                        reference(&s),
                        "{bad} at {at} of {len}"
                    );
                }
            }
        }
        // Spare bits set in the last letters ("QR" decodes as "A" with bits left over).
        assert_eq!(base64_decoded_len("QR"), Some(1));
        assert_eq!(base64_decoded_len("QUJ="), Some(2));
    }

    #[test]
    fn mime_normalization() {
        assert_eq!(normalize_mime("Image/JPG"), "image/jpeg");
        assert_eq!(normalize_mime("audio/x-wav; rate=8000"), "audio/wav");
        assert_eq!(normalize_mime("image/svg+xml"), "image/svg+xml");
    }

    #[test]
    fn pdf_blobs_without_a_useful_label_are_pdf() {
        let pdf = "JVBERi0xLjQK";
        assert_eq!(blob_mime(None, pdf).as_deref(), Some("application/pdf"));
        assert_eq!(
            blob_mime(Some("application/octet-stream"), pdf).as_deref(),
            Some("application/pdf")
        );
        assert_eq!(
            blob_mime(Some("text/plain"), pdf).as_deref(),
            Some("text/plain")
        );
        assert_eq!(blob_mime(None, "QUJD"), None);
    }

    #[test]
    fn file_names_are_safe_and_carry_the_extension() {
        let cases = [
            (
                "file:///tmp/My%20Report.pdf",
                Some("application/pdf"),
                "My_Report.pdf",
            ),
            ("file:///tmp/notes", Some("text/plain"), "notes.txt"),
            (
                "https://x.test/a/b.PDF?download=1#p2",
                Some("application/pdf"),
                "b.PDF",
            ),
            ("file:///", Some("application/pdf"), "file.pdf"),
            ("file:///..%2F..%2Fetc", None, "_.._etc"),
            ("urn:x:%E2%80%AEcod.exe", None, "urn_x__cod.exe"),
        ];
        for (uri, mime, want) in cases {
            assert_eq!(file_name(uri, mime), want, "{uri}");
        }
        let long = format!("file:///{}.pdf", "a".repeat(300));
        let name = file_name(&long, Some("application/pdf"));
        assert_eq!(name.len(), MAX_FILE_NAME);
        assert!(name.ends_with(".pdf"), "{name}");
    }

    /// Bedrock's rule for DocumentBlock.name, which its SDK types do not check.
    fn is_document_name(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= MAX_DOCUMENT_NAME
            && !name.contains("  ")
            && name.trim() == name
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || " -()[]".contains(c))
    }

    #[test]
    fn document_names_follow_the_naming_rule_and_differ_per_call_and_block() {
        assert_eq!(
            document_name("report.pdf", Some("toolu_01.A:b"), 2),
            "report (pdf) [toolu-01-A-b item 2]"
        );
        assert_eq!(document_name("file.txt", None, 1), "file (txt) [item 1]");
        assert_eq!(
            document_name("___.pdf", Some("c"), 1),
            "document (pdf) [c item 1]"
        );
        let long_stem = format!("{}.pdf", "x y ".repeat(100));
        let long_id = "i".repeat(300);
        for (file, id) in [
            ("report.pdf", Some("call_1")),
            ("a  b..c.pdf", Some("x")),
            (long_stem.as_str(), Some("call_1")),
            ("report.pdf", Some(long_id.as_str())),
            ("%%%", None),
        ] {
            let name = document_name(file, id, 3);
            assert!(is_document_name(&name), "{name:?}");
        }
        assert_ne!(
            document_name("a.pdf", Some("c1"), 1),
            document_name("a.pdf", Some("c2"), 1)
        );
        assert_ne!(
            document_name("a.pdf", Some("c1"), 1),
            document_name("a.pdf", Some("c1"), 2)
        );
    }

    #[test]
    fn structured_payloads_become_placeholders() {
        let b64 = "iVBORw0KGgo".repeat(40);
        let value = serde_json::json!({
            "image": {"type": "image", "data": b64, "mimeType": "image/png"},
            "uri": format!("data:image/png;base64,{b64}"),
            "screenshot": b64.repeat(3),
            "short": {"data": "QUJD", "mimeType": "text/plain"},
            "sequence": "ACGT".repeat(400),
            "hex": "0123456789abcdef".repeat(100),
            "text": "plain words ".repeat(200),
        });
        let shaped = shape_structured(&value).into_owned();
        assert_eq!(
            shaped["image"]["data"],
            "[image/png, 330 bytes of base64, omitted]"
        );
        assert_eq!(shaped["image"]["mimeType"], "image/png");
        assert_eq!(shaped["uri"], "[image/png, 330 bytes of base64, omitted]");
        assert_eq!(shaped["screenshot"], "[990 bytes of base64, omitted]");
        for kept in ["short", "sequence", "hex", "text"] {
            assert_eq!(shaped[kept], value[kept], "{kept}");
        }
        let plain = serde_json::json!({"a": [1, "two"]});
        assert!(matches!(shape_structured(&plain), Cow::Borrowed(_)));
    }

    #[test]
    fn structured_content_that_repeats_the_blocks_is_left_out() {
        let block = serde_json::json!({"type": "image", "data": "QUJD", "mimeType": "image/png"});
        let content = vec![Content::from_value(block.clone())];
        let mirror = serde_json::json!({"content": [block.clone()]});
        assert!(without_mirror(&mirror, &content).is_none());
        assert!(without_mirror(&serde_json::json!([block.clone()]), &content).is_none());
        let with_more = serde_json::json!({"content": [block.clone()], "path": "/x.png"});
        assert_eq!(
            without_mirror(&with_more, &content).unwrap().into_owned(),
            serde_json::json!({"path": "/x.png"})
        );
        let other = serde_json::json!({"content": [{"type": "image", "data": "QUJE", "mimeType": "image/png"}]});
        assert!(matches!(
            without_mirror(&other, &content),
            Some(Cow::Borrowed(_))
        ));
        let empty: Vec<Content> = Vec::new();
        assert!(without_mirror(&serde_json::json!({"content": []}), &empty).is_some());
    }

    #[test]
    fn reasons_go_inside_the_placeholder() {
        assert_eq!(
            with_reason("[image: image/png, 9 bytes]", "over the limit"),
            "[image: image/png, 9 bytes; over the limit]"
        );
    }

    #[test]
    fn placeholders() {
        assert_eq!(
            sized_placeholder("image", "image/svg+xml", base64_decoded_len("QUJD")),
            "[image: image/svg+xml, 3 bytes]"
        );
        assert_eq!(
            sized_placeholder("image", "image/png", base64_decoded_len("!!")),
            "[image: image/png, invalid base64]"
        );
    }

    #[test]
    fn an_empty_medium_becomes_its_placeholder() {
        let empty: Content = serde_json::from_value(serde_json::json!(
            {"type": "image", "data": "", "mimeType": "image/png"}
        ))
        .unwrap();
        let measured = Measured::of(&empty);
        assert!(!fits_model_measured(&empty, measured));
        assert_eq!(
            text_form_measured(&empty, measured),
            "[image: image/png, no data]"
        );
    }
}
