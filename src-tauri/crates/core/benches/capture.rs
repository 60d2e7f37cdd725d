//! Capture figures, side by side with the seed's Python stack in one run, on a real X server
//! (`make bench` runs this under `xvfb-run` with a 3840x2160 screen):
//! - capture + encode of 1920x1080 and 3840x2160: Perch's grab (xcb, MIT-SHM; the first grab
//!   of the process, which sets up the shared memory, apart), then everything a chip
//!   needs (the lossless original, the copy for the model at 1568 px, the thumbnail, the files),
//!   against `mss` + Pillow doing the same work;
//! - what a chip holds: the engine's record (with its thumbnail) and the files on disk.
//!
//! The screen shows a generated screen-like picture (panels and lines of "text"), since a black
//! screen would be refused and a flat one would flatter PNG.
#![allow(clippy::unwrap_used)]

use std::process::Command;
use std::time::{Duration, Instant};

use image::{Rgba, RgbaImage};
use perch_core::capture::{CaptureSettings, Captures, Rect, Target, screen};

mod common;

const PYTHON: &str = r#"
import io, json, sys, time, mss
from PIL import Image
w, h, runs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
grab, prepare = [], []
with mss.mss() as sct:
    for _ in range(runs):
        t0 = time.perf_counter()
        shot = sct.grab({"left": 0, "top": 0, "width": w, "height": h})
        t1 = time.perf_counter()
        img = Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")
        original = io.BytesIO(); img.save(original, "PNG")
        scale = 1568 / max(img.size)
        model = img.resize((round(img.width * scale), round(img.height * scale)), Image.BILINEAR) if scale < 1 else img
        buf = io.BytesIO(); model.save(buf, "PNG")
        thumb = model.copy(); thumb.thumbnail((160, 160)); tb = io.BytesIO(); thumb.save(tb, "JPEG", quality=80)
        t2 = time.perf_counter()
        grab.append((t1 - t0) * 1000); prepare.append((t2 - t1) * 1000)
print(json.dumps({"grab": sorted(grab)[len(grab) // 2], "prepare": sorted(prepare)[len(prepare) // 2], "original_bytes": len(original.getvalue())}))
"#;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Flat panels, a sidebar, and lines of dark "glyphs" with anti-aliased edges.
fn screen_like(w: u32, h: u32) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, y| {
        let line = y % 22;
        let glyph = (x / 7 + y / 22) % 5 != 0 && x % 7 < 5;
        if x < w / 6 {
            Rgba([38, 42, 52, 255])
        } else if (4..16).contains(&line) && glyph && (x / 400) % 3 != 2 {
            let edge = if line == 4 || line == 15 { 120 } else { 30 };
            Rgba([edge, edge, edge + 10, 255])
        } else {
            Rgba([250, 250, 248, 255])
        }
    })
}

fn main() {
    let Ok(display) = std::env::var("DISPLAY") else {
        eprintln!("the capture benchmark needs a display: run it with `make bench` (xvfb-run)");
        return;
    };
    let monitors = screen::monitors().unwrap();
    let bounds = monitors.iter().map(|m| m.rect).reduce(|a, b| a.union(&b)).unwrap();
    assert!(bounds.width >= 3840 && bounds.height >= 2160, "needs a 3840x2160 screen, got {bounds:?}");
    let tmp = tempfile::tempdir().unwrap();
    let picture = tmp.path().join("screen.png");
    screen_like(bounds.width, bounds.height).save(&picture).unwrap();
    let _ = Command::new("display").args(["-window", "root"]).arg(&picture).env("DISPLAY", &display).status();

    let runs = common::scaled(10, 1);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let captures = Captures::open(tmp.path().join("captures"), Duration::from_secs(3600));
    let settings = CaptureSettings::default();
    let python = std::env::var("PERCH_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());

    // The first grab opens the connection and its shared memory; later ones find them warm.
    let t = Instant::now();
    drop(screen::grab(Rect::new(0, 0, 3840, 2160), &monitors).unwrap());
    println!(
        "first 3840x2160 grab of the process (cold: connection and shared memory set up): {:.1} ms",
        ms(t.elapsed())
    );
    println!("capture + encode, median of {runs} (ms)");
    println!(
        "{:<11} {:>12} {:>14} {:>12} | {:>12} {:>14} {:>12}",
        "size", "perch grab", "perch prepare", "perch total", "mss grab", "Pillow prepare", "python total"
    );
    for (w, h) in [(1920u32, 1080u32), (3840, 2160)] {
        let rect = Rect::new(0, 0, w, h);
        let (mut grab, mut total) = (Vec::new(), Vec::new());
        let mut last = None;
        for _ in 0..runs {
            let t = Instant::now();
            let image = screen::grab(rect, &monitors).unwrap();
            grab.push(ms(t.elapsed()));
            drop(image);
            let t = Instant::now();
            let capture = runtime.block_on(captures.capture(Target::Region { rect }, &settings)).unwrap();
            total.push(ms(t.elapsed()));
            if let Some(old) = last.replace(capture.id.clone()) {
                captures.remove(&old).unwrap();
            }
        }
        let (grab, total) = (median(grab), median(total));
        let out = Command::new(&python)
            .args(["-c", PYTHON, &w.to_string(), &h.to_string(), &runs.to_string()])
            .env("DISPLAY", &display)
            .output();
        let peer = match out {
            Ok(o) if o.status.success() => {
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                let (g, p) = (v["grab"].as_f64().unwrap(), v["prepare"].as_f64().unwrap());
                format!("{g:>12.1} {p:>14.1} {:>12.1}", g + p)
            }
            Ok(o) => {
                format!("python failed: {}", String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or(""))
            }
            Err(e) => format!("python not found ({e}); set PERCH_BENCH_PYTHON"),
        };
        println!("{:<11} {grab:>12.1} {:>14.1} {total:>12.1} | {peer}", format!("{w}x{h}"), total - grab);
        if let Some(id) = last {
            let chip = captures.shelf().get(&id).unwrap();
            let record = serde_json::to_vec(&chip).unwrap().len();
            let files: u64 = std::fs::read_dir(captures.shelf().dir())
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&id))
                .map(|e| e.metadata().unwrap().len())
                .sum();
            println!(
                "            chip: {record} bytes held in memory (record and thumbnail), {:.1} MB on disk (original {}x{} PNG + {}x{} {:?} for the model)",
                files as f64 / 1e6,
                chip.width,
                chip.height,
                chip.model_width,
                chip.model_height,
                chip.format
            );
            captures.remove(&id).unwrap();
        }
    }
}
