//! Root-window grabs through MIT-SHM, the way mss and most X screenshot tools read the screen:
//! Perch makes a memfd, hands it to the server (`AttachFd`, MIT-SHM 1.2), and the server copies
//! the pixels into it; Perch converts them from its own mapping of the same pages. Plain
//! GetImage sends the same bytes down the X socket instead, in replies libxcb must read and
//! reassemble: 33 MB at 3840x2160. Remote displays (ssh -X) cannot share memory; there `grab`
//! says why and the caller falls back to GetImage.
//!
//! What a 4K grab costs is mostly page faults: the server's first write to each page of a new
//! segment, and ours. So the connection and its segment stay warm for `KEEP` after a grab
//! (captures come in bursts: the overlay freezes each monitor in turn), as mss keeps its own
//! for the life of its object; then a reaper thread gives the memory back.

use std::fs::File;
use std::os::fd::IntoRawFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use memmap2::{Mmap, MmapOptions};
use nix::fcntl::{FallocateFlags, fallocate};
use nix::sys::memfd::{MFdFlags, memfd_create};
use xcb::{shm, x};

use super::CaptureError;
use super::geometry::Rect;
use super::x11::Display;

/// How long an idle connection and its shared memory are kept.
const KEEP: Duration = Duration::from_secs(10);

/// A connection to the X server with the shared memory attached to it, if any yet.
pub(super) struct Warm {
    pub(super) display: Display,
    segment: Option<Segment>,
    used: Instant,
}

/// Shared memory the server writes grabs into: attached on `Warm`'s connection.
struct Segment {
    id: shm::Seg,
    map: Mmap,
}

impl Drop for Warm {
    fn drop(&mut self) {
        if let Some(segment) = self.segment.take() {
            self.display.conn.send_request(&shm::Detach { shmseg: segment.id });
            let _ = self.display.conn.flush();
        }
    }
}

static WARM: Mutex<Option<Warm>> = Mutex::new(None);
static REAPER: AtomicBool = AtomicBool::new(false);

/// Runs `f` on the warm connection (opened with `open` if there is none, or it is stale), and
/// keeps it warm for `KEEP` after.
pub(super) fn with_warm<T>(
    open: impl FnOnce() -> Result<Display, CaptureError>,
    f: impl FnOnce(&mut Warm) -> Result<T, CaptureError>,
) -> Result<T, CaptureError> {
    let mut slot = WARM.lock().unwrap_or_else(|p| p.into_inner());
    let mut warm = match slot.take() {
        // A broken connection (the server restarted) is dropped and a new one opened.
        Some(w) if w.display.conn.has_error().is_ok() => w,
        _ => Warm { display: open()?, segment: None, used: Instant::now() },
    };
    let result = f(&mut warm);
    warm.used = Instant::now();
    *slot = Some(warm);
    drop(slot);
    if !REAPER.swap(true, Ordering::AcqRel) {
        let spawned = std::thread::Builder::new().name("perch-x11-reaper".into()).spawn(reap);
        if spawned.is_err() {
            REAPER.store(false, Ordering::Release);
        }
    }
    result
}

/// Drops the warm connection once it has been idle for `KEEP`.
fn reap() {
    loop {
        std::thread::sleep(KEEP);
        let mut slot = WARM.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_none_or(|w| w.used.elapsed() >= KEEP) {
            *slot = None;
            REAPER.store(false, Ordering::Release);
            return;
        }
    }
}

impl Warm {
    /// Grabs `rect` of the root window into the shared memory and gives its first `len` bytes,
    /// or says why shared memory cannot be used.
    pub(super) fn grab(&mut self, rect: Rect, len: usize) -> Result<&[u8], ShmError> {
        if self.segment.as_ref().is_none_or(|s| s.map.len() < len) {
            if let Some(old) = self.segment.take() {
                self.display.conn.send_request(&shm::Detach { shmseg: old.id });
            }
            self.segment = Some(attach(&self.display, len)?);
        }
        let Some(segment) = &self.segment else { unreachable!("attached above") };
        let d = &self.display;
        let reply = d
            .conn
            .wait_for_reply(d.conn.send_request(&shm::GetImage {
                drawable: x::Drawable::Window(d.root),
                x: rect.x as i16,
                y: rect.y as i16,
                width: rect.width as u16,
                height: rect.height as u16,
                plane_mask: u32::MAX,
                format: x::ImageFormat::ZPixmap as u8,
                shmseg: segment.id,
                offset: 0,
            }))
            .map_err(|e| ShmError::Server(e.to_string()))?;
        if (reply.size() as usize) < len {
            return Err(ShmError::Short { wrote: reply.size() as usize, asked: len });
        }
        Ok(&segment.map[..len])
    }
}

/// Why a grab cannot go through shared memory (the GetImage replies are used instead).
#[derive(Debug, thiserror::Error)]
pub(super) enum ShmError {
    #[error("the X server offers no MIT-SHM")]
    NoExtension,
    #[error("MIT-SHM {major}.{minor} cannot take a file descriptor")]
    TooOld { major: u16, minor: u16 },
    #[error("the shared memory could not be made ({0})")]
    Memory(#[from] std::io::Error),
    #[error("the X server could not attach shared memory (a remote display?): {0}")]
    Attach(String),
    #[error("the X server refused: {0}")]
    Server(String),
    #[error("the X server wrote {wrote} bytes of the {asked} asked for")]
    Short { wrote: usize, asked: usize },
}

/// A memfd of `len` bytes, mapped here and attached to the server.
fn attach(d: &Display, len: usize) -> Result<Segment, ShmError> {
    if !d.conn.active_extensions().any(|e| e == xcb::Extension::Shm) {
        return Err(ShmError::NoExtension);
    }
    let version = d
        .conn
        .wait_for_reply(d.conn.send_request(&shm::QueryVersion {}))
        .map_err(|e| ShmError::Server(e.to_string()))?;
    let (major, minor) = (version.major_version(), version.minor_version());
    if (major, minor) < (1, 2) {
        return Err(ShmError::TooOld { major, minor });
    }
    let file =
        File::from(memfd_create(c"perch-capture", MFdFlags::MFD_CLOEXEC).map_err(std::io::Error::from)?);
    file.set_len(len as u64)?;
    // Pages allocated in one call rather than one fault at a time as the server first writes.
    if let Err(e) = fallocate(&file, FallocateFlags::empty(), 0, i64::try_from(len).unwrap_or(i64::MAX)) {
        tracing::debug!(error = %e, "fallocate on the capture memfd");
    }
    // SAFETY: the memfd is Perch's own and is never resized while mapped; only the server
    // writes into it, during a GetImage Perch waits for with the warm slot locked, so nothing
    // changes the bytes while a slice of the map is read.
    #[allow(unsafe_code)]
    let map = unsafe { MmapOptions::new().len(len).map(&file) }?;
    // libxcb closes the descriptor it is given once sent, so it gets one of its own.
    let shared = file.try_clone()?;
    let id = d.conn.generate_id();
    d.conn
        .send_and_check_request(&shm::AttachFd { shmseg: id, shm_fd: shared.into_raw_fd(), read_only: false })
        .map_err(|e| ShmError::Attach(e.to_string()))?;
    Ok(Segment { id, map })
}
