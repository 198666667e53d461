//! `capabilities`: the same program as `capa`, under the product's full name.
fn main() -> std::process::ExitCode {
    capa_cli::main()
}
