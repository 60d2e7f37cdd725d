// Release builds on Windows have no console window.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use std::path::Path;
use std::process::ExitCode;

/// Whether this binary was started as `perch`: packages install that name as a link to the app,
/// so the command line costs the package nothing but its own code.
fn started_as_cli() -> bool {
    std::env::args_os()
        .next()
        .is_some_and(|arg0| Path::new(&arg0).file_stem().is_some_and(|name| name == "perch"))
}

fn main() -> ExitCode {
    if started_as_cli() {
        return perch_cli::main();
    }
    // WebKitGTK's accelerated compositing costs about 55 MiB and 60 ms of start-up for a small
    // text window, and is the usual cause of blank windows on some GPU drivers. Software
    // compositing is Perch's default; PERCH_GPU_COMPOSITING=1 turns it back on.
    #[cfg(target_os = "linux")]
    if std::env::var_os("PERCH_GPU_COMPOSITING").is_none()
        && std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none()
    {
        // SAFETY: the first statement of main: no other thread exists yet to read the environment.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
        }
    }
    perch_desktop_lib::run();
    ExitCode::SUCCESS
}
