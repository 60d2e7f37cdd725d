//! A private X server for the tests that need one: Xvfb with openbox on a free display number.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Child processes ended (killed and reaped) when this goes.
pub struct Kill(pub Vec<Child>);

impl Drop for Kill {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ok() {
        assert!(Instant::now() < deadline, "{what} did not happen within 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `program` on `display`; its output when it succeeds.
pub fn output(display: &str, program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).env("DISPLAY", display).stderr(Stdio::null()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Xvfb at `width`x`height` with openbox managing it: the display's name and its processes.
pub fn start(width: u32, height: u32) -> (String, Kill) {
    // Start the search past the e2e harness's numbers, at a place that differs per process.
    let start = 400 + std::process::id() % 400;
    let free = |n: &u32| {
        !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
    };
    let display = format!(":{}", (start..start + 400).find(free).unwrap());
    let mut children = Kill(Vec::new());
    children.0.push(
        Command::new("Xvfb")
            .args([&display, "-screen", "0", &format!("{width}x{height}x24"), "-nolisten", "tcp", "-noreset"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until("Xvfb", || output(&display, "xdpyinfo", &[]).is_some());
    children.0.push(Command::new("openbox").env("DISPLAY", &display).stderr(Stdio::null()).spawn().unwrap());
    wait_until("openbox", || {
        output(&display, "xprop", &["-root", "_NET_SUPPORTING_WM_CHECK"])
            .is_some_and(|o| o.contains("window id"))
    });
    (display, children)
}
