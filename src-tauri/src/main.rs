// Release builds on Windows have no console window.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use std::path::Path;
use std::process::ExitCode;

// whisper.cpp's Vulkan backend finds the system's Vulkan loader at run time, so Perch starts
// (and dictates on the CPU) where there is none (perch_gpu::loader).
perch_gpu::vulkan_loader_shim!();

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
    keep_freed_memory_returnable();
    perch_desktop_lib::run();
    ExitCode::SUCCESS
}

/// glibc gives threads that allocate at once arenas of their own (up to eight per core) and,
/// after a large block is freed, raises the size above which blocks are mapped on their own.
/// Whisper's buffers, made and freed by whichever thread ran a dictation, and a capture's
/// images then stayed behind in arenas the next one did not reuse: in the soak (`make soak`),
/// the app grew by about 40 MiB with every dictation (279 -> 598 MiB over 8) and never gave it
/// back. With one arena (small blocks still come from each thread's own cache) and blocks of
/// 1 MiB and more always mapped on their own, and so returned whole when freed, it stayed
/// between 244 and 266 MiB over the same 8.
fn keep_freed_memory_returnable() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters, called before any other thread
    // exists (it is not thread-safe against concurrent allocation settings).
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}
