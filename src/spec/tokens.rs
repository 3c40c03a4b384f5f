//! The `tokens:` section: how the provider's models count the tokens of a
//! tool result, for result budgets. Text is counted by a public tokenizer
//! where the provider has one, and by the estimate the spec declares
//! otherwise; an image by the provider's documented rule over its size; any
//! other medium by a flat figure.

use serde::Deserialize;

use crate::error::Problem;

/// The `tokens:` section.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TokensDoc {
    pub text: TextDoc,
    #[serde(default)]
    pub image: Option<ImageDoc>,
    /// Tokens counted for a medium that is not an image (audio, a document,
    /// a video): the provider's rules for these go by duration or pages,
    /// which the library does not read.
    #[serde(default)]
    pub other_media: Option<u64>,
}

/// How text is counted.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TextDoc {
    /// A public tokenizer the library counts with exactly.
    #[serde(default)]
    pub tokenizer: Option<Tokenizer>,
    /// Bytes of UTF-8 text per token: the estimate, used without a
    /// tokenizer, and with one for the text a budget leaves out.
    pub bytes_per_token: f64,
}

/// How an image is counted: one of `tiles`, `patches` and `fixed`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ImageDoc {
    #[serde(default)]
    pub tiles: Option<Tiles>,
    #[serde(default)]
    pub patches: Option<Patches>,
    #[serde(default)]
    pub fixed: Option<u64>,
    /// Tokens for an image whose size cannot be read from its header.
    #[serde(rename = "unsized")]
    pub unsized_tokens: u64,
}

/// Square tiles: the image is scaled to fit `fit` × `fit`, then down so its
/// short side is at most `short_side`; each `size` × `size` tile costs
/// `tokens`, plus `base` once.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Tiles {
    pub size: u64,
    pub tokens: u64,
    #[serde(default)]
    pub base: u64,
    #[serde(default)]
    pub fit: Option<u64>,
    #[serde(default)]
    pub short_side: Option<u64>,
}

/// Square patches: the image is scaled down so that its long edge is at most
/// `max_long_edge` and it has at most `max_patches` patches of `size` ×
/// `size` (a partial patch counts whole); it costs its patches times
/// `multiplier`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Patches {
    pub size: u64,
    #[serde(default)]
    pub max_long_edge: Option<u64>,
    #[serde(default)]
    pub max_patches: Option<u64>,
    #[serde(default = "one")]
    pub multiplier: f64,
}

fn one() -> f64 {
    1.0
}

/// The public tokenizers a spec may name (the `tiktoken` encodings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub(crate) enum Tokenizer {
    O200kBase,
    Cl100kBase,
}

/// The compiled section.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TokensPlan {
    pub tokenizer: Option<Tokenizer>,
    pub bytes_per_token: f64,
    pub image: ImageRule,
    pub unsized_image: u64,
    pub other_media: u64,
}

/// The rule an image's tokens follow.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ImageRule {
    Tiles(Tiles),
    Patches(Patches),
    Fixed(u64),
}

impl Default for TokensPlan {
    /// For a spec without the section: a conservative estimate (3 bytes a
    /// token counts more tokens than any tokenizer measured on English,
    /// code and JSON), and 1,600 tokens an image or other medium.
    fn default() -> Self {
        TokensPlan {
            tokenizer: None,
            bytes_per_token: 3.0,
            image: ImageRule::Fixed(1600),
            unsized_image: 1600,
            other_media: 1600,
        }
    }
}

/// Compiles the `tokens:` section.
pub(super) fn compile(doc: TokensDoc) -> Result<TokensPlan, Problem> {
    let bpt = doc.text.bytes_per_token;
    if !(bpt.is_finite() && (1.0..=16.0).contains(&bpt)) {
        return Err(Problem::at(
            "/tokens/text/bytes_per_token",
            format!("{bpt} bytes per token: expected a number from 1 to 16"),
        ));
    }
    let default = TokensPlan::default();
    let (image, unsized_image) = match doc.image {
        None => (default.image, default.unsized_image),
        Some(image) => (compile_image(&image)?, image.unsized_tokens),
    };
    Ok(TokensPlan {
        tokenizer: doc.text.tokenizer,
        bytes_per_token: bpt,
        image,
        unsized_image,
        other_media: doc.other_media.unwrap_or(default.other_media),
    })
}

fn compile_image(doc: &ImageDoc) -> Result<ImageRule, Problem> {
    match (doc.tiles, doc.patches, doc.fixed) {
        (Some(tiles), None, None) if tiles.size == 0 => Err(Problem::at(
            "/tokens/image/tiles/size",
            "a tile of 0 pixels",
        )),
        (Some(tiles), None, None) => Ok(ImageRule::Tiles(tiles)),
        (None, Some(patches), None) if patches.size == 0 => Err(Problem::at(
            "/tokens/image/patches/size",
            "a patch of 0 pixels",
        )),
        (None, Some(patches), None)
            if !(patches.multiplier.is_finite() && patches.multiplier > 0.0) =>
        {
            Err(Problem::at(
                "/tokens/image/patches/multiplier",
                "expected a number over 0",
            ))
        }
        (None, Some(patches), None) => Ok(ImageRule::Patches(patches)),
        (None, None, Some(fixed)) => Ok(ImageRule::Fixed(fixed)),
        _ => Err(Problem::at(
            "/tokens/image",
            "give exactly one of `tiles`, `patches` and `fixed`",
        )),
    }
}
