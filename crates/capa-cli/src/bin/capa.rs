//! `capa`: the Capabilities hub's command line.
fn main() -> std::process::ExitCode {
    capa_cli::main()
}
