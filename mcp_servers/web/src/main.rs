fn main() -> std::process::ExitCode {
    perch_mcp_web::server::main()
}
