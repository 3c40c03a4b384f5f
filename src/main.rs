//! The `mcp-adapters` command: a thin layer over the library. JSON on stdout,
//! errors on stderr with a non-zero exit.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
