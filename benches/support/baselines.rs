//! What several benches measure against: the hand-written listing converter,
//! the built-in spec files as text, Bedrock's events as binary frames, and a
//! bare spawn and join.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use mcp_adapters::ToolSet;
use mcp_adapters::spec::SpecFile;
use mcp_adapters::toolset::sanitize_description;
use serde_json::{Map, Value};

/// A hand-written converter for the Anthropic shape, doing the work a
/// listing does: exposed names from the toolset, descriptions through
/// `sanitize_description`, `{name, description?, input_schema}` objects with
/// the schema cloned.
pub fn handwritten_anthropic(toolset: &ToolSet) -> Vec<Value> {
    toolset
        .tools()
        .iter()
        .map(|t| {
            let mut def = Map::with_capacity(3);
            def.insert("name".into(), Value::String(t.exposed_name.clone()));
            if let Some(d) = &t.tool.description {
                def.insert(
                    "description".into(),
                    Value::String(sanitize_description(d).into_owned()),
                );
            }
            def.insert("input_schema".into(), t.tool.input_schema.clone());
            Value::Object(def)
        })
        .collect()
}

/// Every built-in spec and rules file (`providers/*.yaml`,
/// `providers/rules/*.yaml`), read.
pub fn builtin_sources() -> Vec<SpecFile> {
    let read = |dir: &Path| -> Vec<(String, PathBuf, String)> {
        let mut out: Vec<_> = std::fs::read_dir(dir)
            .expect("providers folder")
            .map(|e| e.expect("providers entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .map(|p| {
                let id = p
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .expect("id")
                    .to_owned();
                let text = std::fs::read_to_string(&p).expect("spec file");
                (id, p, text)
            })
            .collect();
        out.sort();
        out
    };
    let providers = Path::new(env!("CARGO_MANIFEST_DIR")).join("providers");
    let mut sources: Vec<SpecFile> = read(&providers)
        .into_iter()
        .map(|(id, file, text)| SpecFile::provider(id, file, text))
        .collect();
    sources.extend(
        read(&providers.join("rules"))
            .into_iter()
            .map(|(id, file, text)| SpecFile::rules(id, file, text)),
    );
    sources
}

/// The events (one JSON object per line, `{"<event type>": payload}`) as
/// `application/vnd.amazon.eventstream` frames, written by the AWS SDK's
/// codec, and each frame's payload.
#[cfg(feature = "eventstream")]
pub fn event_stream_body(events: &[String]) -> (Vec<u8>, Vec<Vec<u8>>) {
    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
    let mut bytes = Vec::new();
    let mut payloads = Vec::new();
    for event in events {
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(event) else {
            panic!("a Bedrock event is an object: {event}");
        };
        let (name, value) = event.into_iter().next().expect("one member");
        let payload = serde_json::to_vec(&value).unwrap();
        let message = Message::new(payload.clone())
            .add_header(Header::new(":event-type", HeaderValue::String(name.into())))
            .add_header(Header::new(
                ":content-type",
                HeaderValue::String("application/json".into()),
            ))
            .add_header(Header::new(
                ":message-type",
                HeaderValue::String("event".into()),
            ));
        write_message_to(&message, &mut bytes).unwrap();
        payloads.push(payload);
    }
    (bytes, payloads)
}

/// `n` no-op tasks spawned, then joined.
pub async fn spawn_join(n: usize) {
    let handles: Vec<_> = (0..n)
        .map(|_| tokio::spawn(async { black_box(1) }))
        .collect();
    for h in handles {
        h.await.unwrap();
    }
}
