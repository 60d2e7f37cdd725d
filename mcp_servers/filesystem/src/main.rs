fn main() -> std::process::ExitCode {
    perch_mcp_filesystem::main()
}
