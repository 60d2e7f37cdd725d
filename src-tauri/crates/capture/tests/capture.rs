#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! Captures against a real X server: Xvfb with openbox, the root window painted with a known
//! picture, the screen split into two monitors with `xrandr --setmonitor`, a real client
//! window. The capture code reads `DISPLAY` from the environment, which a test cannot change
//! for its own process safely, so the outer test starts the display and runs the checks in a
//! child process of this same test binary.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use image::{Rgba, RgbaImage};
use perch_capture::{CaptureError, CaptureSettings, Captures, Rect, Target, screen};

const W: u32 = 1280;
const H: u32 = 800;
const INNER: &str = "PERCH_CAPTURE_TEST_INNER";

/// The picture on the root window: a colour per quarter with a marker square, so a wrong
/// offset or a swapped monitor shows up in the pixels.
fn pattern() -> RgbaImage {
    RgbaImage::from_fn(W, H, |x, y| {
        let marker = (x % 320) < 16 && (y % 200) < 16;
        match (x < W / 2, y < H / 2, marker) {
            (_, _, true) => Rgba([255, 255, 255, 255]),
            (true, true, _) => Rgba([220, 30, 30, 255]),
            (false, true, _) => Rgba([30, 30, 220, 255]),
            (true, false, _) => Rgba([30, 200, 30, 255]),
            (false, false, _) => Rgba([230, 200, 20, 255]),
        }
    })
}

use perch_test_support::xvfb;
use xvfb::wait_until;

fn run(display: &str, program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .env("DISPLAY", display)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn have(program: &str) -> bool {
    which::which(program).is_ok()
}

#[test]
fn captures_on_a_real_x_server() {
    if std::env::var_os(INNER).is_some() {
        return; // the child runs the checks below
    }
    for tool in ["Xvfb", "openbox", "xrandr", "display", "xdotool", "xmessage"] {
        assert!(have(tool), "{tool} is missing: run `make deps` (scripts/setup-system.sh --test)");
    }
    let (display, _children) = xvfb::start(W, H);

    let tmp = tempfile::tempdir().unwrap();
    let picture = tmp.path().join("pattern.png");
    pattern().save(&picture).unwrap();
    // Once through MIT-SHM (Xvfb offers it), once through the plain GetImage fallback.
    for no_mitshm in [false, true] {
        // `display` exits after setting the background, with a status that varies; check pixels instead.
        run(&display, "display", &["-window", "root", picture.to_str().unwrap()]);
        let mut inner = Command::new(std::env::current_exe().unwrap());
        inner
            .args(["--exact", "inner_checks", "--ignored", "--nocapture", "--test-threads=1"])
            .env("DISPLAY", &display)
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("XDG_SESSION_TYPE")
            .env_remove("PERCH_X11_NO_MITSHM")
            .env(INNER, tmp.path());
        if no_mitshm {
            inner.env("PERCH_X11_NO_MITSHM", "1");
        }
        let status = inner.status().unwrap();
        assert!(
            status.success(),
            "the checks on {display} (MIT-SHM off: {no_mitshm}) failed (see the output above)"
        );
        // The checks leave one virtual monitor behind.
        run(&display, "xrandr", &["--delmonitor", "LEFT"]);
    }
    compositor_is_read_from_the_x_server(&display);
    selection_is_read_from_the_x_server(&display, "_NET_SYSTEM_TRAY_S", &|d| {
        perch_portals::desktop::tray_on_x11(Some(d)) == Some(true)
    });
}

/// openbox draws no transparency: not composited. A client owning `_NET_WM_CM_S0`, as a
/// compositing manager does, makes it composited, until it goes away.
fn compositor_is_read_from_the_x_server(display: &str) {
    selection_is_read_from_the_x_server(display, "_NET_WM_CM_S", &|d| {
        perch_portals::desktop::composited(Some(d))
    });
}

/// openbox alone owns neither the compositing nor the tray selection; a client owning
/// `<prefix><screen>`, as a compositing manager or a tray does, makes `present` true until it
/// goes away.
fn selection_is_read_from_the_x_server(display: &str, prefix: &str, present: &dyn Fn(&str) -> bool) {
    use xcb::x;
    assert!(!present(display), "openbox alone owns no {prefix} selection");
    let (conn, screen) = xcb::Connection::connect(Some(display)).unwrap();
    let root = conn.get_setup().roots().nth(usize::try_from(screen).unwrap()).unwrap().root();
    let window: x::Window = conn.generate_id();
    conn.send_and_check_request(&x::CreateWindow {
        depth: x::COPY_FROM_PARENT as u8,
        wid: window,
        parent: root,
        x: 0,
        y: 0,
        width: 1,
        height: 1,
        border_width: 0,
        class: x::WindowClass::InputOnly,
        visual: x::COPY_FROM_PARENT,
        value_list: &[],
    })
    .unwrap();
    let name = format!("{prefix}{screen}");
    let atom = conn
        .wait_for_reply(conn.send_request(&x::InternAtom { only_if_exists: false, name: name.as_bytes() }))
        .unwrap()
        .atom();
    conn.send_and_check_request(&x::SetSelectionOwner {
        owner: window,
        selection: atom,
        time: x::CURRENT_TIME,
    })
    .unwrap();
    assert!(present(display), "a client owns {name}");
    drop(conn);
    assert!(!present(display), "its owner gone, {name} is free again");
}

fn assert_region_matches(image: &RgbaImage, origin: (u32, u32)) {
    let expected = pattern();
    for (x, y, p) in image.enumerate_pixels() {
        let want = expected.get_pixel(origin.0 + x, origin.1 + y);
        assert_eq!(p.0[..3], want.0[..3], "pixel ({x}, {y}) of a capture at {origin:?}");
    }
}

fn decode(bytes: &[u8]) -> RgbaImage {
    image::load_from_memory(bytes).unwrap().to_rgba8()
}

#[test]
#[ignore = "run by captures_on_a_real_x_server, on its display"]
fn inner_checks() {
    let Some(tmp) = std::env::var_os(INNER) else { return };
    let display = std::env::var("DISPLAY").unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let captures = Captures::open(Path::new(&tmp).join("captures"), Duration::from_secs(3600));
    let settings = CaptureSettings { max_edge: 400, ..CaptureSettings::default() };

    // One monitor, the whole screen, exactly the picture.
    let monitors = screen::monitors().unwrap();
    assert_eq!(monitors.len(), 1, "{monitors:?}");
    let probe = perch_capture::probe();
    assert!(probe.available, "{}", probe.detail);
    let transport = if std::env::var_os("PERCH_X11_NO_MITSHM").is_some() { "GetImage" } else { "MIT-SHM" };
    assert_eq!(probe.detail, format!("X11 through {transport}: screen 1280x800"));
    assert_eq!(monitors[0].rect, Rect::new(0, 0, W, H));
    let all = runtime.block_on(captures.capture(Target::AllMonitors, &settings)).unwrap();
    assert_eq!((all.width, all.height, all.model_width, all.model_height), (W, H, 400, 250));
    let files = runtime.block_on(captures.files(&all.id)).unwrap();
    assert_region_matches(&decode(&files.original), (0, 0));
    assert_eq!(decode(&files.model).dimensions(), (400, 250));

    // Two monitors from one screen, as `xrandr --setmonitor` makes them (the right one has no
    // output of its own). The cursor picks the monitor; each capture is its half.
    assert!(run(&display, "xrandr", &["--setmonitor", "LEFT", "640/170x800/210+0+0", "screen"]));
    assert!(run(&display, "xrandr", &["--setmonitor", "RIGHT", "640/170x800/210+640+0", "none"]));
    let monitors = screen::monitors().unwrap();
    let names: Vec<&str> = monitors.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["LEFT", "RIGHT"], "{monitors:?}");
    assert!(run(&display, "xdotool", &["mousemove", "1000", "300"]));
    assert_eq!(screen::cursor(), Some((1000, 300)));
    let right = runtime.block_on(captures.capture(Target::Cursor { point: None }, &settings)).unwrap();
    assert_eq!((right.width, right.height, right.source.as_str()), (640, 800, "Monitor RIGHT"));
    assert_region_matches(&decode(&runtime.block_on(captures.files(&right.id)).unwrap().original), (640, 0));
    let left = runtime.block_on(captures.capture(Target::Cursor { point: Some((5, 5)) }, &settings)).unwrap();
    assert_region_matches(&decode(&runtime.block_on(captures.files(&left.id)).unwrap().original), (0, 0));
    let stitched = runtime.block_on(captures.capture(Target::AllMonitors, &settings)).unwrap();
    assert_eq!((stitched.width, stitched.source.as_str()), (W, "All monitors"));

    // The overlay's path: freeze every monitor, then cut a region spanning both.
    let frozen = runtime.block_on(captures.freeze()).unwrap();
    assert_eq!(frozen.monitors.len(), 2);
    let preview = runtime.block_on(captures.frozen_preview("RIGHT", 320, 400)).unwrap();
    assert_eq!(decode(&preview).dimensions(), (320, 400));
    let region = Rect::new(600, 380, 100, 50);
    let cut = runtime.block_on(captures.take_frozen(region, "Region".into(), &settings)).unwrap();
    assert_region_matches(&decode(&runtime.block_on(captures.files(&cut.id)).unwrap().original), (600, 380));
    let again = runtime.block_on(captures.take_frozen(region, "Region".into(), &settings));
    assert!(matches!(again, Err(CaptureError::NotSelecting)), "the frozen screen is gone once taken");

    // A monitor unplugged between the press and the capture.
    assert!(run(&display, "xrandr", &["--delmonitor", "RIGHT"]));
    let gone = runtime.block_on(captures.capture(Target::Monitor { id: "RIGHT".into() }, &settings));
    assert!(matches!(gone, Err(CaptureError::MonitorGone(ref m)) if m == "RIGHT"), "{gone:?}");

    // A real window (xmessage sets only the old WM_NAME, so it is known by its class): listed
    // with its place, captured by id at its size.
    let mut window = Command::new("xmessage")
        .args(["-geometry", "300x120+100+100", "-title", "Perch test window", "hello from the test"])
        .env("DISPLAY", &display)
        .spawn()
        .unwrap();
    let mut found = None;
    wait_until("the test window to be listed", || {
        found =
            screen::windows(std::process::id()).unwrap_or_default().into_iter().find(|w| w.app == "Xmessage");
        found.is_some()
    });
    let info = found.unwrap();
    let shot = runtime.block_on(captures.capture(Target::Window { id: info.id }, &settings)).unwrap();
    assert_eq!(shot.source, "Window: Xmessage");
    assert_eq!((shot.width, shot.height), (info.rect.width, info.rect.height));
    let _ = window.kill();
    let _ = window.wait();

    // A black screen is refused with the reason, and nothing lands on the shelf.
    let before = captures.pending().len();
    assert!(run(&display, "xsetroot", &["-solid", "black"]));
    let black = runtime.block_on(captures.capture(Target::Cursor { point: Some((5, 5)) }, &settings));
    assert!(matches!(black, Err(CaptureError::AllBlack { .. })), "{black:?}");
    let probe = perch_capture::probe();
    assert!(!probe.available && probe.detail.contains("all black"), "perch doctor says so: {}", probe.detail);
    assert_eq!(captures.pending().len(), before);

    // Removing a chip deletes its files.
    captures.remove(&all.id).unwrap();
    assert!(matches!(runtime.block_on(captures.files(&all.id)), Err(CaptureError::NotFound(_))));
}

#[test]
fn without_a_display_capture_says_so() {
    if std::env::var_os(INNER).is_some() || std::env::var_os("PERCH_CAPTURE_TEST_NO_DISPLAY").is_some() {
        if std::env::var_os("PERCH_CAPTURE_TEST_NO_DISPLAY").is_some() {
            assert!(matches!(screen::monitors(), Err(CaptureError::NoDisplay)));
            let probe = perch_capture::probe();
            assert!(!probe.available);
            assert!(probe.detail.contains("no display"), "{}", probe.detail);
        }
        return;
    }
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "without_a_display_capture_says_so", "--nocapture"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("XDG_SESSION_TYPE")
        .env("PERCH_CAPTURE_TEST_NO_DISPLAY", "1")
        .status()
        .unwrap();
    assert!(status.success());
}
