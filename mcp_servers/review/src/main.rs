fn main() -> std::process::ExitCode {
    perch_mcp_review::main()
}
