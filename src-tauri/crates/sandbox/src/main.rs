//! `perch-sandbox`: applies a sandbox policy, then runs the command (see the library).
//! Exit status 126 means the sandbox could not be set up, 127 that the program was not found;
//! the command's own status otherwise (128 + N when signal N ended it).

use std::process::ExitCode;

fn main() -> ExitCode {
    match perch_sandbox::main(std::env::args_os().skip(1).collect()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("perch-sandbox: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
