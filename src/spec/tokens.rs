//! The `tokens:` section: how the provider's models count the tokens of a
//! tool result, for result budgets. Text is counted by a public tokenizer
//! where the provider has one, and by the estimate the spec declares
//! otherwise; an image by the provider's documented rule over its size; any
//! other medium by a flat figure.

use serde::Deserialize;

use crate::error::Problem;

/// How the provider's models count a tool result's tokens, for result
/// budgets (`ResultOptions::max_result_tokens`). Without this section: 3
/// bytes a token, 1,600 tokens an image or other medium.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct TokensDoc {
    pub text: TokensTextDoc,
    #[serde(default)]
    pub image: Option<ImageDoc>,
    /// Tokens for a medium that is not an image (audio, a document, a
    /// video), an estimate: 1,600 when absent.
    // The providers' rules for these go by duration or pages, which the
    // library does not read.
    #[serde(default)]
    pub other_media: Option<u64>,
}

/// How text is counted.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct TokensTextDoc {
    /// A public tokenizer the library counts with exactly (with the
    /// `tokenizers` feature).
    #[serde(default)]
    pub tokenizer: Option<Tokenizer>,
    /// Bytes of UTF-8 text per token: the estimate, used without a
    /// tokenizer, and with one for the text a budget leaves out.
    #[cfg_attr(test, schemars(range(min = 1, max = 16)))]
    pub bytes_per_token: f64,
}

/// An image's tokens, from the size its header gives: give one of `tiles`,
/// `patches` and `fixed`.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(extend("oneOf" = [{"required": ["tiles"]}, {"required": ["patches"]}, {"required": ["fixed"]}]))
)]
#[serde(deny_unknown_fields)]
pub(super) struct ImageDoc {
    #[serde(default)]
    pub tiles: Option<Tiles>,
    #[serde(default)]
    pub patches: Option<Patches>,
    /// The same tokens for any image.
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct Tiles {
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub size: u64,
    pub tokens: u64,
    #[serde(default)]
    pub base: u64,
    #[serde(default)]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub fit: Option<u64>,
    #[serde(default)]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub short_side: Option<u64>,
}

/// Square patches: the image is scaled down so that its long edge is at most
/// `max_long_edge` and it has at most `max_patches` patches of `size` ×
/// `size` (a partial patch counts whole); it costs its patches times
/// `multiplier`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct Patches {
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub size: u64,
    #[serde(default)]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_long_edge: Option<u64>,
    #[serde(default)]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_patches: Option<u64>,
    #[serde(default = "one")]
    #[cfg_attr(test, schemars(extend("exclusiveMinimum" = 0)))]
    pub multiplier: f64,
}

fn one() -> f64 {
    1.0
}

/// The public tokenizers a spec may name (the `tiktoken` encodings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
