//! Signing a DPoP proof (RFC 9449) for a request to an MCP server, against
//! the signature alone: what a proof adds to the one ECDSA signature it
//! needs (its claims, a fresh `jti`, the `ath` hash of the access token, the
//! encodings), measured in the same run.

use std::hint::black_box;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use criterion::{Criterion, criterion_group};
use mcp_adapters::client::auth::{DpopKey, JwtAlgorithm};

mod support;

const URL: &str = "https://mcp.example.com/mcp?session=1";
const NONCE: &str = "eyJ7S_zG.eyJH0-Z.HX4w-7v";

/// An access token of the size a JWT access token has (about 900 bytes).
fn access_token() -> String {
    format!(
        "eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.{}.{}",
        "x".repeat(760),
        "s".repeat(86)
    )
}

fn dpop(c: &mut Criterion) {
    let key = DpopKey::generate(JwtAlgorithm::Es256).expect("key");
    let token = access_token();
    let proof = || {
        key.proof("POST", URL, Some(&token), Some(NONCE))
            .expect("proof")
    };
    // The baseline signs, with a key on the same curve, an input as long as
    // a proof's signing input.
    let signing_input = proof().rsplit_once('.').expect("a JWS").0.to_owned();
    let raw = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).expect("raw key");
    let rng = SystemRandom::new();
    let signature = || raw.sign(&rng, signing_input.as_bytes()).expect("signature");

    let mut group = c.benchmark_group("dpop");
    group.bench_function("ES256 proof (resource request, with ath and nonce)", |b| {
        b.iter(|| black_box(proof()))
    });
    group.bench_function("ES256 signature alone", |b| {
        b.iter(|| black_box(signature()))
    });
    group.finish();

    let ratio = support::median_ratio(support::rounds(), proof, signature);
    support::report(
        "DPoP proof ES256 / ECDSA P-256 signature alone",
        ratio,
        Some(1.5),
    );
}

criterion_group!(benches, dpop);

fn main() {
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
