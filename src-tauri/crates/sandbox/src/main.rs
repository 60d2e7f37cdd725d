//! `perch-sandbox`: applies a sandbox policy to itself, then runs the command (see the library).
//! Exit status 126 means the sandbox could not be set up, 127 that the program was not found;
//! the command's own status otherwise.

use std::process::ExitCode;

use perch_sandbox::{Invocation, SandboxError, exec, parse_args, restrict_self};

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("perch-sandbox: {e}");
            let not_found = matches!(&e, SandboxError::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound);
            ExitCode::from(if not_found { 127 } else { 126 })
        }
    }
}

fn run() -> Result<ExitCode, SandboxError> {
    match parse_args(std::env::args_os().skip(1))? {
        Invocation::Probe(mut policy) => {
            if policy.writable.is_empty() {
                policy.writable.push(std::env::temp_dir());
            }
            let enforced = restrict_self(&policy)?;
            println!("{}", enforced.to_line());
            Ok(ExitCode::SUCCESS)
        }
        Invocation::Run(policy, command) => {
            let enforced = restrict_self(&policy)?;
            if cfg!(target_os = "linux") && enforced.landlock_abi == 0 {
                return Err(SandboxError::NoLandlock);
            }
            Err(exec(&command))
        }
    }
}
