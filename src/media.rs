//! Shaping results for a model (PI-2), before any provider mapping.

use std::borrow::Cow;

use crate::mcp::{Content, ResourceContents};

/// Image types every built-in provider accepts inline.
pub(crate) const MODEL_IMAGE_TYPES: &[&str] =
    &["image/jpeg", "image/png", "image/gif", "image/webp"];
/// Audio types a model may be given.
pub(crate) const MODEL_AUDIO_TYPES: &[&str] = &[
    "audio/wav",
    "audio/mpeg",
    "audio/ogg",
    "audio/webm",
    "audio/flac",
];

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
    // Branch-free within each chunk so the check vectorizes: images run to
    // tens of megabytes, and a byte-at-a-time short-circuiting scan was the
    // slowest step of answering one.
    let valid_chunk = |chunk: &[u8]| {
        chunk.iter().fold(true, |ok, &b| {
            ok & (b.is_ascii_alphanumeric() | (b == b'+') | (b == b'/'))
        })
    };
    if !body.chunks(64).all(valid_chunk) {
        return None;
    }
    let padding = bytes.len() - body.len();
    let rem = body.len() % 4;
    let valid = matches!((rem, padding), (0, 0) | (2, 0 | 2) | (3, 0 | 1));
    valid.then(|| body.len() / 4 * 3 + rem.saturating_sub(1))
}

/// `[image: image/png, 1024 bytes]`, or `[image: image/png, invalid base64]`.
fn sized_placeholder(kind: &str, mime: &str, size: Option<usize>) -> String {
    match size {
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

    /// The decoded size, when the block has a valid payload.
    pub(crate) fn size(self) -> Option<usize> {
        self.0.flatten()
    }
}

/// The standard text form of a content block, used where nothing richer applies.
pub(crate) fn text_form_measured(content: &Content, measured: Measured) -> Cow<'_, str> {
    let size = measured.size();
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
                Some(n) => format!("[resource: {}, {mime}, {n} bytes]", r.uri),
                None => format!("[resource: {}, {mime}, invalid base64]", r.uri),
            }
        }
        (None, None) => format!("[resource: {}]", r.uri),
    }
}

fn accepted(mime: &str, types: &[&str], measured: Measured) -> bool {
    measured.size().is_some() && types.contains(&normalize_mime(mime).as_ref())
}

/// Whether a content block can reach a model as it is, or must become a
/// placeholder first (the table in the [module docs](self)).
pub(crate) fn fits_model_measured(content: &Content, measured: Measured) -> bool {
    match content {
        Content::Image(m) => accepted(&m.mime_type, MODEL_IMAGE_TYPES, measured),
        Content::Audio(m) => accepted(&m.mime_type, MODEL_AUDIO_TYPES, measured),
        Content::Resource(r) => match (&r.resource.blob, &r.resource.mime_type) {
            (Some(_), Some(mime)) => accepted(mime, MODEL_IMAGE_TYPES, measured),
            (Some(_), None) => false,
            (None, _) => true,
        },
        _ => true,
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

    #[test]
    fn mime_normalization() {
        assert_eq!(normalize_mime("Image/JPG"), "image/jpeg");
        assert_eq!(normalize_mime("audio/x-wav; rate=8000"), "audio/wav");
        assert_eq!(normalize_mime("image/svg+xml"), "image/svg+xml");
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
}
