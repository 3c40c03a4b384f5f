//! DPoP (RFC 9449): the key a client holds and the proofs it signs with it.
//!
//! A proof is a JWS in compact form whose protected header carries the public
//! key (`typ` `dpop+jwt`, `alg`, `jwk`) and whose claims name the request:
//! `jti` (unique), `htm` (the method), `htu` (the URL without query and
//! fragment), `iat`, `ath` (the SHA-256 of the access token, for a resource
//! request) and `nonce` (when the server supplied one). The header is encoded
//! once per key; a proof costs one claims object, one signature and their
//! encodings. Keys are made and used with aws-lc-rs, the library the HTTP
//! stack's TLS already runs on; a key the application holds elsewhere (a KMS,
//! an HSM) signs through its callback ([`Dpop::signer`]).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::JwtAlgorithm;
use crate::error::{Error, Result};
use crate::exec::BoxFuture;

/// A DPoP key pair held in memory: made with [`generate`](Self::generate), or
/// read from PKCS#8 with [`from_pkcs8`](Self::from_pkcs8). Clones share the
/// key.
///
/// Its `Debug` output shows the algorithm and the key's thumbprint (RFC
/// 7638), never the private key.
#[derive(Clone)]
pub struct DpopKey {
    inner: Arc<LocalKey>,
}

struct LocalKey {
    pair: Pair,
    public: PublicKey,
}

enum Pair {
    Ec(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

/// What every proof of one key shares: its algorithm, public JWK, thumbprint
/// and encoded protected header.
struct PublicKey {
    algorithm: JwtAlgorithm,
    jwk: Value,
    thumbprint: String,
    header: String,
}

impl PublicKey {
    fn new(algorithm: JwtAlgorithm, jwk: Value) -> Result<Self> {
        let thumbprint = thumbprint(&jwk)?;
        let header = json!({"typ": "dpop+jwt", "alg": algorithm.name(), "jwk": jwk});
        let header = URL_SAFE_NO_PAD.encode(header.to_string());
        Ok(PublicKey {
            algorithm,
            jwk,
            thumbprint,
            header,
        })
    }
}

fn key_error(what: impl std::fmt::Display) -> Error {
    Error::input(format!("DPoP key: {what}"))
}

fn ecdsa(
    algorithm: JwtAlgorithm,
) -> Option<(&'static signature::EcdsaSigningAlgorithm, &'static str)> {
    match algorithm {
        JwtAlgorithm::Es256 => Some((&signature::ECDSA_P256_SHA256_FIXED_SIGNING, "P-256")),
        JwtAlgorithm::Es384 => Some((&signature::ECDSA_P384_SHA384_FIXED_SIGNING, "P-384")),
        _ => None,
    }
}

fn rsa_padding(algorithm: JwtAlgorithm) -> &'static dyn signature::RsaEncoding {
    match algorithm {
        JwtAlgorithm::Rs384 => &signature::RSA_PKCS1_SHA384,
        JwtAlgorithm::Rs512 => &signature::RSA_PKCS1_SHA512,
        _ => &signature::RSA_PKCS1_SHA256,
    }
}

impl DpopKey {
    /// A new key pair for `algorithm` (ES256 and ES384 on their curves, the
    /// RS algorithms with a 2048-bit RSA key).
    ///
    /// # Errors
    ///
    /// When the system's random source fails.
    pub fn generate(algorithm: JwtAlgorithm) -> Result<Self> {
        let pair = match ecdsa(algorithm) {
            Some((signing, _)) => EcdsaKeyPair::generate(signing).map(Pair::Ec),
            None => RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).map(Pair::Rsa),
        }
        .map_err(|_| key_error(format!("cannot make a {} key", algorithm.name())))?;
        Self::from_pair(algorithm, pair)
    }

    /// The key pair in `der`, an unencrypted PKCS#8 private key, used with
    /// `algorithm`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when `der` is not a PKCS#8 key of
    /// `algorithm`'s kind.
    pub fn from_pkcs8(algorithm: JwtAlgorithm, der: &[u8]) -> Result<Self> {
        let pair = match ecdsa(algorithm) {
            Some((signing, _)) => EcdsaKeyPair::from_pkcs8(signing, der)
                .map(Pair::Ec)
                .map_err(|e| key_error(format!("not a PKCS#8 {} key: {e}", algorithm.name()))),
            None => RsaKeyPair::from_pkcs8(der)
                .map(Pair::Rsa)
                .map_err(|e| key_error(format!("not a PKCS#8 RSA key: {e}"))),
        }?;
        Self::from_pair(algorithm, pair)
    }

    fn from_pair(algorithm: JwtAlgorithm, pair: Pair) -> Result<Self> {
        let jwk = match &pair {
            Pair::Ec(key) => {
                let crv = ecdsa(algorithm).map(|(_, crv)| crv).unwrap_or("P-256");
                // The uncompressed point: 0x04, then x and y of equal length.
                let point = key.public_key().as_ref();
                let (x, y) = point[1..].split_at((point.len() - 1) / 2);
                json!({"kty": "EC", "crv": crv, "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)})
            }
            Pair::Rsa(key) => {
                let public = key.public_key();
                json!({
                    "kty": "RSA",
                    "n": URL_SAFE_NO_PAD.encode(public.modulus().big_endian_without_leading_zero()),
                    "e": URL_SAFE_NO_PAD.encode(public.exponent().big_endian_without_leading_zero()),
                })
            }
        };
        Ok(DpopKey {
            inner: Arc::new(LocalKey {
                pair,
                public: PublicKey::new(algorithm, jwk)?,
            }),
        })
    }

    /// The signing algorithm.
    pub fn algorithm(&self) -> JwtAlgorithm {
        self.inner.public.algorithm
    }

    /// The public key, as the JWK each proof carries.
    pub fn public_jwk(&self) -> &Value {
        &self.inner.public.jwk
    }

    /// The key's JWK SHA-256 thumbprint (RFC 7638, base64url): the `jkt` an
    /// authorization server binds the tokens to. It is public.
    pub fn thumbprint(&self) -> &str {
        &self.inner.public.thumbprint
    }

    /// A fresh proof for a request: `method` and `url` (its query and fragment
    /// are left out of `htu`), with `ath` when `access_token` is given (a
    /// request to a protected resource) and the server's `nonce` when it
    /// supplied one.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when `url` is not an absolute URL; when
    /// signing fails.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String> {
        let input = signing_input(&self.inner.public, method, url, access_token, nonce)?;
        let signature = self.sign(input.as_bytes())?;
        Ok(finish(input, &signature))
    }

    fn sign(&self, input: &[u8]) -> Result<Vec<u8>> {
        let rng = SystemRandom::new();
        let failed = |_| key_error("signing failed");
        match &self.inner.pair {
            Pair::Ec(key) => key
                .sign(&rng, input)
                .map(|s| s.as_ref().to_vec())
                .map_err(failed),
            Pair::Rsa(key) => {
                let mut signature = vec![0; key.public_modulus_len()];
                key.sign(rsa_padding(self.algorithm()), &rng, input, &mut signature)
                    .map_err(failed)?;
                Ok(signature)
            }
        }
    }

    /// The private key in PKCS#8 (for a token store that keeps it).
    pub(crate) fn to_pkcs8(&self) -> Result<Vec<u8>> {
        let der = match &self.inner.pair {
            Pair::Ec(key) => key.to_pkcs8v1().map(|d| d.as_ref().to_vec()),
            Pair::Rsa(key) => key.as_der().map(|d| d.as_ref().to_vec()),
        };
        der.map_err(|_| key_error("cannot encode the key"))
    }
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("algorithm", &self.algorithm())
            .field("thumbprint", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

/// The application's signing callback (see [`Dpop::signer`]): given a
/// proof's JWS signing input, it answers the JWS signature (for ECDSA, the
/// fixed-length `r || s` of RFC 7518 section 3.4, not DER), or why it could
/// not sign.
pub type DpopSignFn =
    dyn Fn(Vec<u8>) -> BoxFuture<'static, std::result::Result<Vec<u8>, String>> + Send + Sync;

/// A key the application holds and signs with through its callback.
pub(crate) struct AppKey {
    public: PublicKey,
    sign: Arc<DpopSignFn>,
}

/// The key proofs are signed with: one in memory, or the application's.
#[derive(Clone)]
pub(crate) enum ProofKey {
    Local(DpopKey),
    App(Arc<AppKey>),
}

impl ProofKey {
    pub(crate) fn algorithm(&self) -> JwtAlgorithm {
        match self {
            ProofKey::Local(key) => key.algorithm(),
            ProofKey::App(key) => key.public.algorithm,
        }
    }

    /// A fresh proof, as [`DpopKey::proof`] signs it.
    pub(crate) async fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String> {
        match self {
            ProofKey::Local(key) => key.proof(method, url, access_token, nonce),
            ProofKey::App(key) => {
                let input = signing_input(&key.public, method, url, access_token, nonce)?;
                let signature = (key.sign)(input.as_bytes().to_vec())
                    .await
                    .map_err(|why| key_error(format!("the application's signer failed: {why}")))?;
                let expected = match key.public.algorithm {
                    JwtAlgorithm::Es256 => Some(64),
                    JwtAlgorithm::Es384 => Some(96),
                    _ => None,
                };
                if let Some(expected) = expected
                    && signature.len() != expected
                {
                    return Err(key_error(format!(
                        "the application's signer answered {} bytes; a {} JWS signature is {expected} (r || s, not DER)",
                        signature.len(),
                        key.public.algorithm.name()
                    )));
                }
                Ok(finish(input, &signature))
            }
        }
    }

    /// The key's thumbprint.
    pub(crate) fn thumbprint(&self) -> &str {
        match self {
            ProofKey::Local(key) => key.thumbprint(),
            ProofKey::App(key) => &key.public.thumbprint,
        }
    }
}

/// The claims of a proof, serialized in this order.
#[derive(Serialize)]
struct Claims<'a> {
    jti: &'a str,
    htm: &'a str,
    htu: &'a str,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<&'a str>,
}

/// `url` as a proof's `htu`: without query and fragment.
fn target_uri(url: &str) -> Result<String> {
    let mut parsed = url::Url::parse(url)
        .map_err(|e| key_error(format!("`{url}` is not an absolute URL: {e}")))?;
    parsed.set_query(None);
    parsed.set_fragment(None);
    Ok(parsed.into())
}

/// The JWS signing input of a fresh proof: the encoded header, a dot, the
/// encoded claims.
fn signing_input(
    public: &PublicKey,
    method: &str,
    url: &str,
    access_token: Option<&str>,
    nonce: Option<&str>,
) -> Result<String> {
    let htu = target_uri(url)?;
    let mut jti = uuid::Uuid::encode_buffer();
    let jti = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut jti);
    let ath = access_token.map(|token| URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())));
    let iat = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let claims = Claims {
        jti,
        htm: method,
        htu: &htu,
        iat,
        ath: ath.as_deref(),
        nonce,
    };
    let claims = serde_json::to_vec(&claims).map_err(|e| key_error(format!("claims: {e}")))?;
    let mut input = String::with_capacity(public.header.len() + 1 + claims.len() * 4 / 3 + 100);
    input.push_str(&public.header);
    input.push('.');
    URL_SAFE_NO_PAD.encode_string(&claims, &mut input);
    Ok(input)
}

/// The compact JWS: the signing input, a dot, the encoded signature.
fn finish(mut input: String, signature: &[u8]) -> String {
    input.push('.');
    URL_SAFE_NO_PAD.encode_string(signature, &mut input);
    input
}

/// The JWK SHA-256 thumbprint of `jwk` (RFC 7638): its required members,
/// in lexicographic order, without whitespace.
fn thumbprint(jwk: &Value) -> Result<String> {
    let member = |name: &str| {
        jwk.get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| key_error(format!("the public JWK has no `{name}`")))
    };
    let required: &[&str] = match member("kty")? {
        "EC" => &["crv", "kty", "x", "y"],
        "RSA" => &["e", "kty", "n"],
        "OKP" => &["crv", "kty", "x"],
        other => {
            return Err(key_error(format!(
                "the public JWK's `kty` `{other}` is not EC, RSA or OKP"
            )));
        }
    };
    let mut canonical = serde_json::Map::new();
    for name in required {
        canonical.insert((*name).to_owned(), Value::String(member(name)?.to_owned()));
    }
    // serde_json keeps insertion order here (preserve_order), which is the
    // lexicographic order `required` lists.
    let text = Value::Object(canonical).to_string();
    Ok(URL_SAFE_NO_PAD.encode(Sha256::digest(text.as_bytes())))
}

/// The private members a public JWK must not carry.
const PRIVATE_MEMBERS: &[&str] = &["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// How the client uses DPoP (RFC 9449) with the servers it signs in to:
/// give it to [`OAuth::dpop`](super::OAuth::dpop).
///
/// By default ([`Dpop::when_supported`]) tokens are DPoP-bound whenever the
/// authorization server's metadata lists `dpop_signing_alg_values_supported`,
/// the server's resource metadata says `dpop_bound_access_tokens_required`,
/// or its challenge offers the `DPoP` scheme (not when the authorization
/// server alone supports it and the server's challenge offers `Bearer`
/// alone: that server would refuse a bound token): the client holds a key pair for
/// that server (ES256 unless the server lists only others it can use), sends
/// a fresh proof with every token request and every request to the server,
/// presents the token with the `DPoP` scheme, and answers a server's
/// `use_dpop_nonce` with one retry carrying the nonce. Refreshes are bound to
/// the same key. The key lives in memory, as long as the [`OAuth`](super::OAuth)
/// (so that a reconnection keeps using it); [`keep_key_in_store`](Self::keep_key_in_store)
/// keeps it beside the tokens instead, so that a sign-in kept in a file
/// survives a restart.
///
/// Nothing falls back silently: a server that requires DPoP fails with a
/// clear error when DPoP is [off](Self::off), a client that
/// [requires](Self::required) it refuses a Bearer token, and a DPoP-bound
/// token is never sent as a Bearer token.
///
/// Its `Debug` output never shows a private key.
#[derive(Clone)]
pub struct Dpop {
    pub(crate) mode: DpopMode,
    pub(crate) key: Option<ProofKey>,
    pub(crate) keep_key: bool,
}

/// When DPoP is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DpopMode {
    WhenSupported,
    Required,
    Off,
}

impl Default for Dpop {
    fn default() -> Self {
        Dpop::when_supported()
    }
}

impl Dpop {
    /// DPoP with the servers that support it, Bearer tokens with the others
    /// (the default).
    pub fn when_supported() -> Self {
        Dpop {
            mode: DpopMode::WhenSupported,
            key: None,
            keep_key: false,
        }
    }

    /// DPoP with every server: a sign-in whose authorization server issues a
    /// Bearer token fails, saying so.
    pub fn required() -> Self {
        Dpop {
            mode: DpopMode::Required,
            ..Dpop::when_supported()
        }
    }

    /// Never DPoP: a server that requires DPoP-bound tokens fails to sign in,
    /// saying so.
    pub fn off() -> Self {
        Dpop {
            mode: DpopMode::Off,
            ..Dpop::when_supported()
        }
    }

    /// Signs every proof with `key`, with every server, instead of a key
    /// made for each server.
    pub fn key(mut self, key: DpopKey) -> Self {
        self.key = Some(ProofKey::Local(key));
        self
    }

    /// Signs every proof through `sign`, for a key the application holds
    /// outside the process (a KMS, an HSM): `algorithm` is the key's,
    /// `public_jwk` its public half as a JWK (`kty`, `crv`, `x`, `y` for an
    /// EC key; `kty`, `n`, `e` for an RSA key), and `sign` is given each
    /// proof's JWS signing input and answers its signature (see
    /// [`DpopSignFn`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when `public_jwk` is not a public JWK (not an
    /// object, a missing member, or a private member such as `d`).
    pub fn signer<F>(mut self, algorithm: JwtAlgorithm, public_jwk: Value, sign: F) -> Result<Self>
    where
        F: Fn(Vec<u8>) -> BoxFuture<'static, std::result::Result<Vec<u8>, String>>
            + Send
            + Sync
            + 'static,
    {
        let Value::Object(members) = &public_jwk else {
            return Err(key_error("the public JWK is not a JSON object"));
        };
        if let Some(private) = PRIVATE_MEMBERS.iter().find(|m| members.contains_key(**m)) {
            return Err(key_error(format!(
                "the public JWK carries the private member `{private}`: give the public half only"
            )));
        }
        let kty = members
            .get("kty")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let fits = match algorithm {
            JwtAlgorithm::Es256 | JwtAlgorithm::Es384 => kty == "EC",
            _ => kty == "RSA",
        };
        if !fits {
            return Err(key_error(format!(
                "a `{kty}` JWK cannot verify {} signatures",
                algorithm.name()
            )));
        }
        self.key = Some(ProofKey::App(Arc::new(AppKey {
            public: PublicKey::new(algorithm, public_jwk)?,
            sign: Arc::new(sign),
        })));
        Ok(self)
    }

    /// Keeps each key the client makes in the [`TokenStore`](super::TokenStore),
    /// beside the tokens bound to it (a [`FileTokenStore`](super::FileTokenStore)
    /// writes it with the same owner-only permissions), so that a kept
    /// sign-in is still usable after a restart. Whoever can read the store
    /// can then use its tokens: DPoP still keeps a token that leaks elsewhere
    /// (a log, a trace, a proxy) from being used. Without it, keys live in
    /// memory only. A key given with [`key`](Self::key) or
    /// [`signer`](Self::signer) is the application's to keep.
    pub fn keep_key_in_store(mut self) -> Self {
        self.keep_key = true;
        self
    }
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = self.key.as_ref().map(|key| match key {
            ProofKey::Local(key) => format!("{:?} {}", key.algorithm(), key.thumbprint()),
            ProofKey::App(key) => format!(
                "{:?} {} (the application's signer)",
                key.public.algorithm, key.public.thumbprint
            ),
        });
        f.debug_struct("Dpop")
            .field("mode", &self.mode)
            .field("key", &key)
            .field("keep_key_in_store", &self.keep_key)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks a proof with another JWT library: the signature over the JWK it
    /// carries, the header and the claims.
    fn verify(proof: &str) -> (jsonwebtoken::Header, Value) {
        let header = jsonwebtoken::decode_header(proof).unwrap();
        let jwk = header.jwk.clone().expect("a jwk header");
        let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let mut validation = jsonwebtoken::Validation::new(header.alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let data = jsonwebtoken::decode::<Value>(proof, &key, &validation).unwrap();
        (header, data.claims)
    }

    #[test]
    fn a_proof_verifies_and_names_the_request() {
        for algorithm in [
            JwtAlgorithm::Es256,
            JwtAlgorithm::Es384,
            JwtAlgorithm::Rs256,
        ] {
            let key = DpopKey::generate(algorithm).unwrap();
            let proof = key
                .proof(
                    "POST",
                    "https://mcp.example.com/mcp?x=1#f",
                    Some("at-1"),
                    Some("n-1"),
                )
                .unwrap();
            let (header, claims) = verify(&proof);
            assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
            assert_eq!(claims["htm"], "POST");
            assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
            assert_eq!(claims["nonce"], "n-1");
            assert_eq!(
                claims["ath"],
                URL_SAFE_NO_PAD.encode(Sha256::digest(b"at-1")).as_str()
            );
            assert!(claims["iat"].as_u64().unwrap() > 1_700_000_000);
            let jwk: jsonwebtoken::jwk::Jwk =
                serde_json::from_value(key.public_jwk().clone()).unwrap();
            assert_eq!(
                jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
                    .unwrap(),
                key.thumbprint()
            );
            assert!(!key.public_jwk().as_object().unwrap().contains_key("d"));
        }
    }

    #[test]
    fn every_proof_has_its_own_jti_and_a_token_request_no_ath() {
        let key = DpopKey::generate(JwtAlgorithm::Es256).unwrap();
        let a = verify(
            &key.proof("POST", "https://as.example/token", None, None)
                .unwrap(),
        )
        .1;
        let b = verify(
            &key.proof("POST", "https://as.example/token", None, None)
                .unwrap(),
        )
        .1;
        assert_ne!(a["jti"], b["jti"]);
        assert!(a.get("ath").is_none() && a.get("nonce").is_none());
    }

    #[test]
    fn a_key_survives_pkcs8_and_hides_in_debug() {
        let key = DpopKey::generate(JwtAlgorithm::Es256).unwrap();
        let der = key.to_pkcs8().unwrap();
        let back = DpopKey::from_pkcs8(JwtAlgorithm::Es256, &der).unwrap();
        assert_eq!(back.thumbprint(), key.thumbprint());
        let text = format!("{key:?} {:?}", Dpop::when_supported().key(key.clone()));
        assert!(text.contains(key.thumbprint()), "{text}");
        assert!(!text.contains(&URL_SAFE_NO_PAD.encode(&der)), "{text}");
        let err = DpopKey::from_pkcs8(JwtAlgorithm::Es384, &der).unwrap_err();
        assert!(err.to_string().contains("ES384"), "{err}");
    }

    #[tokio::test]
    async fn an_application_signer_signs_and_a_private_jwk_is_refused() {
        let held = DpopKey::generate(JwtAlgorithm::Es256).unwrap();
        let signer = held.clone();
        let dpop = Dpop::when_supported()
            .signer(
                JwtAlgorithm::Es256,
                held.public_jwk().clone(),
                move |input| {
                    let signed = signer.sign(&input).map_err(|e| e.to_string());
                    Box::pin(async move { signed })
                },
            )
            .unwrap();
        let key = dpop.key.unwrap();
        let proof = key
            .proof("GET", "https://mcp.example/mcp", Some("t"), None)
            .await
            .unwrap();
        let (header, claims) = verify(&proof);
        assert_eq!(header.alg, jsonwebtoken::Algorithm::ES256);
        assert_eq!(claims["htm"], "GET");
        assert_eq!(key.thumbprint(), held.thumbprint());

        let mut private = held.public_jwk().clone();
        private["d"] = json!("secret");
        let err = Dpop::when_supported()
            .signer(JwtAlgorithm::Es256, private, |_| {
                Box::pin(async { Ok(vec![]) })
            })
            .unwrap_err();
        assert!(err.to_string().contains("`d`"), "{err}");
        let wrong = Dpop::when_supported()
            .signer(JwtAlgorithm::Rs256, held.public_jwk().clone(), |_| {
                Box::pin(async { Ok(vec![]) })
            })
            .unwrap_err();
        assert!(wrong.to_string().contains("RS256"), "{wrong}");
    }

    #[tokio::test]
    async fn a_der_signature_from_a_signer_is_refused_with_the_reason() {
        let held = DpopKey::generate(JwtAlgorithm::Es256).unwrap();
        let dpop = Dpop::when_supported()
            .signer(JwtAlgorithm::Es256, held.public_jwk().clone(), |_| {
                Box::pin(async { Ok(vec![0x30; 71]) })
            })
            .unwrap();
        let err = dpop
            .key
            .unwrap()
            .proof("POST", "https://as.example/token", None, None)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not DER"), "{err}");
    }
}
