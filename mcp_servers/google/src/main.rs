fn main() -> std::process::ExitCode {
    perch_mcp_google::server::main()
}
