//! Answering a call whose result carries a 20 MiB PNG image, for each core
//! provider, and a 20 MiB PDF, for each provider with the `media: full`
//! option (the document in the answer or in a follow-up), against copying the
//! same base64 text once; and the peak memory each answer takes, as a
//! multiple of the payload. Then a 20 MiB text result answered under a
//! budget of 4,000 tokens, for each core provider, against copying the text
//! once (run with `--features tokenizers` for the providers counted by a
//! public tokenizer; without it they are estimated too). Last, a selection
//! filter run on a 20 MiB structured result against parsing its JSON text
//! with serde_json.

use std::hint::black_box;
use std::sync::atomic::Ordering;

use criterion::{Criterion, criterion_group};
use mcp_adapters::Registry;
use mcp_adapters::{CallToolResult, Content};
use mcp_adapters::{Outcome, ResultOptions, Turn};
use serde_json::json;

#[path = "support/counting.rs"]
mod counting;
mod support;

use counting::{CURRENT, Counting, PEAK, peak_of};

const FORMATS: [&str; 4] = ["anthropic", "openai-chat", "openai-responses", "gemini"];
/// Every provider with a `media` option (Ollama has none).
const MEDIA_FORMATS: [&str; 7] = [
    "anthropic",
    "openai-chat",
    "openai-responses",
    "gemini",
    "gemini-multimodal",
    "bedrock-converse",
    "mistral",
];
const IMAGE_BYTES: usize = 20 * 1024 * 1024;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]);
            } else {
                out.push(b'=');
            }
        }
    }
    String::from_utf8(out).expect("base64 is ASCII")
}

/// 20 MiB of pseudo-random bytes (a PNG signature first), base64-encoded.
fn image_base64() -> String {
    payload_base64(b"\x89PNG\r\n\x1a\n")
}

/// 20 MiB of pseudo-random bytes after a PDF header, base64-encoded.
fn pdf_base64() -> String {
    payload_base64(b"%PDF-1.7\n")
}

fn payload_base64(signature: &[u8]) -> String {
    let mut bytes = Vec::with_capacity(IMAGE_BYTES);
    bytes.extend_from_slice(signature);
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    while bytes.len() < IMAGE_BYTES {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(IMAGE_BYTES);
    base64(&bytes)
}

fn image_result(data: &str) -> CallToolResult {
    let block = json!({"type": "image", "data": data, "mimeType": "image/png"});
    let result: CallToolResult =
        serde_json::from_value(json!({"content": [block]})).expect("valid result");
    assert!(matches!(result.content[0], Content::Image(_)));
    result
}

/// A result with one embedded PDF, labelled as the reference filesystem server labels it.
fn pdf_result(data: &str) -> CallToolResult {
    let block = json!({"type": "resource", "resource": {
        "uri": "file:///reports/annual.pdf", "mimeType": "application/pdf", "blob": data}});
    serde_json::from_value(json!({"content": [block]})).expect("valid result")
}

/// The answer and its follow-ups, as a turn of one call with `media: full`.
fn answer_full(provider: &mcp_adapters::Provider, result: &CallToolResult) -> Turn {
    provider
        .answer_all(
            [(Some("call_1"), "report", Outcome::Completed(result))],
            &ResultOptions::new().option("media", "full"),
        )
        .expect("answer")
}

fn answering(c: &mut Criterion) {
    let data = image_base64();
    let result = image_result(&data);
    let registry = Registry::builtin().expect("built-in specs");
    let options = ResultOptions::default();
    let mut group = c.benchmark_group("20 MiB image");
    group.sample_size(10);
    group.bench_function("memcpy", |b| b.iter(|| black_box(&data).clone()));
    for id in FORMATS {
        let provider = registry.get(id).expect("core provider");
        group.bench_function(id, |b| {
            b.iter(|| {
                provider.answer(
                    Some("call_1"),
                    "shot",
                    Outcome::Completed(black_box(&result)),
                    &options,
                )
            })
        });
    }
    group.finish();
    let pdf = pdf_base64();
    let result = pdf_result(&pdf);
    let mut group = c.benchmark_group("20 MiB PDF, media=full");
    group.sample_size(10);
    group.bench_function("memcpy", |b| b.iter(|| black_box(&pdf).clone()));
    for id in MEDIA_FORMATS {
        let provider = registry.get(id).expect("provider");
        group.bench_function(id, |b| b.iter(|| answer_full(provider, black_box(&result))));
    }
    group.finish();
}

fn pdf_ratios(rounds: usize) {
    let data = pdf_base64();
    let result = pdf_result(&data);
    let registry = Registry::builtin().expect("built-in specs");
    println!();
    println!(
        "payload: {IMAGE_BYTES} bytes of PDF, {} bytes of base64, answered with media=full",
        data.len()
    );
    for id in MEDIA_FORMATS {
        let provider = registry.get(id).expect("provider");
        let ratio =
            support::median_ratio(rounds, || answer_full(provider, &result), || data.clone());
        support::report(&format!("20 MiB PDF {id} / memcpy"), ratio, Some(3.0));
        let (peak, kept, turn) = peak_of(|| answer_full(provider, &result));
        let payload = data.len() as f64;
        support::report(
            &format!("peak memory {id} PDF / payload"),
            peak as f64 / payload,
            Some(3.0),
        );
        let carried = if !turn.follow_ups.is_empty() {
            "goes in a follow-up"
        } else if turn.results[0]
            .to_string()
            .contains("over the provider's limit")
        {
            "is over the spec's documented limit, so a placeholder answers"
        } else {
            "goes in the answer"
        };
        println!("  ({peak} bytes at peak, {kept} bytes kept; the document {carried})");
        drop(turn);
    }
}

fn ratios() {
    let rounds = support::rounds();
    let data = image_base64();
    let result = image_result(&data);
    let registry = Registry::builtin().expect("built-in specs");
    let options = ResultOptions::default();
    println!();
    println!(
        "payload: {IMAGE_BYTES} bytes of image, {} bytes of base64",
        data.len()
    );
    for id in FORMATS {
        let provider = registry.get(id).expect("core provider");
        let answer = || {
            provider
                .answer(
                    Some("call_1"),
                    "shot",
                    Outcome::Completed(&result),
                    &options,
                )
                .expect("answer")
        };
        let ratio = support::median_ratio(rounds, answer, || data.clone());
        support::report(&format!("20 MiB image {id} / memcpy"), ratio, Some(3.0));

        let before = CURRENT.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let value = black_box(answer());
        let peak = PEAK.load(Ordering::Relaxed) - before;
        let kept = CURRENT.load(Ordering::Relaxed) - before;
        drop(value);
        let payload = data.len() as f64;
        support::report(
            &format!("peak memory {id} / payload"),
            peak as f64 / payload,
            Some(3.0),
        );
        println!(
            "  ({peak} bytes at peak, {kept} bytes kept in the answer, payload {} bytes)",
            data.len()
        );
    }
    pdf_ratios(rounds);
    budget_ratios(rounds);
    select_ratio(rounds);
}

const TEXT_BYTES: usize = 20 * 1024 * 1024;
const BUDGET: u64 = 4_000;

/// 20 MiB of log lines.
fn log_text() -> String {
    let mut text = String::with_capacity(TEXT_BYTES + 128);
    let mut i = 0u64;
    while text.len() < TEXT_BYTES {
        text.push_str(&format!(
            "2026-12-04T12:{:02}:{:02}.{:03}Z INFO request {i:08} served in {} ms\n",
            i / 3600 % 60,
            i / 60 % 60,
            i % 1000,
            i % 97
        ));
        i += 1;
    }
    text
}

fn budgeted(provider: &mcp_adapters::Provider, result: &CallToolResult) -> serde_json::Value {
    provider
        .answer(
            Some("call_1"),
            "logs__tail",
            Outcome::Completed(result),
            &ResultOptions::new().max_result_tokens(BUDGET),
        )
        .expect("answer")
}

fn budgeting(c: &mut Criterion) {
    let text = log_text();
    let result = CallToolResult::text(text.clone());
    let registry = Registry::builtin().expect("built-in specs");
    let mut group = c.benchmark_group("20 MiB text, 4,000-token budget");
    group.sample_size(10);
    group.bench_function("copy", |b| b.iter(|| black_box(&text).clone()));
    for id in FORMATS {
        let provider = registry.get(id).expect("core provider");
        group.bench_function(id, |b| b.iter(|| budgeted(provider, black_box(&result))));
    }
    group.finish();
}

fn budget_ratios(rounds: usize) {
    let text = log_text();
    let result = CallToolResult::text(text.clone());
    let registry = Registry::builtin().expect("built-in specs");
    println!();
    println!(
        "payload: {} bytes of text, answered under a budget of {BUDGET} tokens",
        text.len()
    );
    for id in FORMATS {
        let provider = registry.get(id).expect("core provider");
        // Warm: a tokenizer's tables load once, on first use.
        black_box(budgeted(provider, &result));
        let ratio = support::median_ratio(rounds, || budgeted(provider, &result), || text.clone());
        let counted = if provider.counts_tokens_exactly() {
            "counted by its tokenizer"
        } else {
            "estimated"
        };
        support::report(
            &format!("20 MiB text budgeted {id} ({counted}) / copy"),
            ratio,
            Some(1.5),
        );
    }
}

/// A 20 MiB structured result: `{"items": [{"id", "name", "path", "size", "tags"}...]}`,
/// and its JSON text.
fn structured_result() -> (serde_json::Value, String) {
    let mut items = Vec::new();
    let mut bytes = 0;
    let mut i = 0u64;
    while bytes < TEXT_BYTES {
        let item = json!({
            "id": i,
            "name": format!("file-{i:08}.rs"),
            "path": format!("src/module-{}/file-{i:08}.rs", i % 97),
            "size": i * 37 % 100_000,
            "tags": ["source", if i.is_multiple_of(3) { "test" } else { "lib" }],
        });
        bytes += item.to_string().len() + 1;
        items.push(item);
        i += 1;
    }
    let value = json!({ "items": items });
    let text = value.to_string();
    (value, text)
}

const SELECT_FILTER: &str = r#"[.items[] | select(.size < 1000) | {name, path}]"#;

/// The filter run as a call's result is: the value lent to the filter's
/// thread, not copied.
fn selected(value: &std::sync::Arc<serde_json::Value>) -> String {
    let limits = mcp_adapters::SelectLimits::default().time(std::time::Duration::from_secs(600));
    mcp_adapters::select::select_blocking(SELECT_FILTER, std::sync::Arc::clone(value), &limits)
        .expect("selected")
}

fn selecting(c: &mut Criterion) {
    let (value, text) = structured_result();
    let value = std::sync::Arc::new(value);
    let mut group = c.benchmark_group("20 MiB structured result, selected");
    group.sample_size(10);
    group.bench_function("serde_json parse", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap())
    });
    group.bench_function("select", |b| b.iter(|| selected(black_box(&value))));
    group.finish();
}

fn select_ratio(rounds: usize) {
    let (value, text) = structured_result();
    let value = std::sync::Arc::new(value);
    println!();
    println!(
        "payload: {} bytes of structured result, selected with {SELECT_FILTER}",
        text.len()
    );
    let ratio = support::median_ratio(
        rounds,
        || selected(&value),
        || serde_json::from_str::<serde_json::Value>(&text).unwrap(),
    );
    support::report(
        "20 MiB structured result selected / serde_json parse",
        ratio,
        Some(2.0),
    );
}

criterion_group!(benches, answering, budgeting, selecting);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratios();
}
