fn main() -> std::process::ExitCode {
    perch_cli::main()
}
