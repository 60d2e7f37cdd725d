fn main() -> std::process::ExitCode {
    perch_mcp_demo::main()
}
