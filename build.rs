//! Embeds every YAML file under `providers/` (and `providers/rules/`) in the
//! library, so built-in specs load through the same code path as a user's folder.

use std::fs;
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=providers");
    let mut out = String::from(
        "/// Built-in specs: (kind, id, file name, text).\npub(crate) const BUILTIN: &[(&str, &str, &str, &str)] = &[\n",
    );
    for (kind, dir) in [("spec", "providers"), ("rules", "providers/rules")] {
        let mut files: Vec<_> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading {dir}: {e}"))
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        for path in files {
            println!("cargo::rerun-if-changed={}", path.display());
            let id = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("a UTF-8 file name");
            let abs = Path::new(env!("CARGO_MANIFEST_DIR")).join(&path);
            out.push_str(&format!(
                "    ({kind:?}, {id:?}, {:?}, include_str!({:?})),\n",
                path.display().to_string(),
                abs.display().to_string()
            ));
        }
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("builtin.rs");
    fs::write(dest, out).expect("writing builtin.rs");
}
