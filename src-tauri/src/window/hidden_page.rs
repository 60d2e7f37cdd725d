//! Gives the page's memory back while the window stays hidden (and, 20 s into a hide, the app's
//! own free heap pages: `perch_core::memory`). The web process holds the page
//! (about half of Perch at rest); once the window has been hidden for the time set in
//! Settings -> General, that process is ended, and showing the window loads the page again. The
//! route is in the URL and the draft in local storage, so the page comes back where it was; a
//! page holding work a reload would lose (file chips, pictures, an edit, the settings) says so and
//! is kept, and so is a page while an answer is being written. A page whose process has grown
//! well past what it took when it loaded (a long conversation, a flood of terminal output) is
//! loaded again sooner, at once and still hidden, since WebKit keeps most of what a page once
//! used. A web process that crashes is reloaded the same way instead of leaving a blank window,
//! unless it keeps crashing.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tauri::{AppHandle, Manager, WebviewWindow};

use perch_core::crash_loop::CrashLoop;

use crate::page_process;
use crate::state::AppState;

/// How often a release put off by an answer or by unsent work is tried again.
const RETRY: Duration = Duration::from_secs(30);

/// How long after a hide the app's own heap gives back its free pages (what the turns, captures
/// and dictations before the hide freed; see `perch_core::memory`): long enough that a
/// quick hide and show does not pay for it.
const GIVE_BACK_HEAP_AFTER: Duration = Duration::from_secs(20);

/// How far past its size after loading the page's process may grow before a hide loads it
/// again. Above the first answer's cost (the renderer's code, about 22 MiB) and a few turns
/// (2-4 MiB each); below what a 200-message conversation still holds 30 s into a hide (66 MiB
/// in `long_conversation.mjs`).
const GROWN_BY: u64 = 48 << 20;
/// How long after a load the page is measured: its start-up work done, its first frames drawn.
const SETTLE: Duration = Duration::from_secs(10);

/// How many crashes in a row are answered with a reload (the next one is a loop), counted while
/// the page never stayed up for [`HEALTHY_AFTER`]. A page whose process dies as it starts (WebKit aborts when
/// it cannot open an EGL display, for one) was otherwise loaded again and again, some 15 times a
/// second, for as long as the app ran.
const RELOADS: u32 = 2;
const HEALTHY_AFTER: Duration = Duration::from_secs(60);

/// The page's crashes, to tell a crash from a crash loop.
struct Crashes(CrashLoop);

impl Default for Crashes {
    fn default() -> Self {
        Self(CrashLoop::new(RELOADS, HEALTHY_AFTER))
    }
}

#[derive(Default)]
pub struct HiddenPage {
    /// Bumped by every hide and show, so a timer from an earlier hide does nothing.
    generation: AtomicU64,
    /// The web process was ended; the page must load again before it is seen.
    released: AtomicBool,
    /// The page said it holds work a reload would lose.
    holds_unsent: AtomicBool,
    crashes: Mutex<Crashes>,
    /// Bumped by every page load, so a measurement of an earlier page is not kept.
    loads: AtomicU64,
    /// The page process's PSS once the page had settled after loading, in bytes; 0 unknown.
    settled_size: AtomicU64,
}

/// The page finished loading: once it settles, note what its process takes.
pub fn loaded(app: &AppHandle) {
    let page = app.state::<HiddenPage>();
    page.crashes.lock().unwrap_or_else(|e| e.into_inner()).0.started(Instant::now());
    let load = page.loads.fetch_add(1, Ordering::SeqCst) + 1;
    page.settled_size.store(0, Ordering::SeqCst);
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SETTLE).await;
        let page = app.state::<HiddenPage>();
        let Some(size) = page_process::page_memory() else { return };
        if page.loads.load(Ordering::SeqCst) == load {
            page.settled_size.store(size, Ordering::SeqCst);
            tracing::info!(mib = size >> 20, "the page has settled after loading");
        }
    });
}

impl HiddenPage {
    /// How far the page's process has grown past its settled size, in bytes, when that is more
    /// than [`GROWN_BY`].
    fn grown_past_limit(&self) -> Option<u64> {
        let settled = Some(self.settled_size.load(Ordering::SeqCst)).filter(|&size| size > 0)?;
        let grown = page_process::page_memory()?.saturating_sub(settled);
        (grown > GROWN_BY).then_some(grown)
    }

    /// Nothing a reload would lose: no answer being written, no unsent work on the page.
    fn can_reload(&self, app: &AppHandle) -> bool {
        let answering = app.state::<AppState>().engine.as_ref().is_ok_and(|e| e.runs().active() > 0);
        !answering && !self.holds_unsent.load(Ordering::SeqCst)
    }
}

/// The page says whether it holds work a reload would lose.
pub fn set_holds_unsent(app: &AppHandle, holds: bool) {
    app.state::<HiddenPage>().holds_unsent.store(holds, Ordering::SeqCst);
}

/// The window was hidden: after the configured times, load a grown page again, then end the
/// page's web process.
pub fn hidden(app: &AppHandle) {
    // WebView2 and WKWebView manage their processes themselves; a release there would only cost
    // a reload.
    if !cfg!(target_os = "linux") {
        return;
    }
    let page = app.state::<HiddenPage>();
    let generation = page.generation.fetch_add(1, Ordering::SeqCst) + 1;
    let app = app.clone();
    let heap_app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(GIVE_BACK_HEAP_AFTER).await;
        let still_hidden = heap_app.state::<HiddenPage>().generation.load(Ordering::SeqCst) == generation;
        // The walk holds the allocator's lock, which a dictation into another app (recording
        // while the window is hidden) must not wait on; the model's release gives back after it.
        let dictating = heap_app.state::<AppState>().engine.as_ref().is_ok_and(|e| e.voice().is_active());
        if still_hidden && !dictating {
            let _ = tauri::async_runtime::spawn_blocking(perch_core::memory::give_back_free_heap).await;
        }
    });
    tauri::async_runtime::spawn(async move {
        let Some(engine) = app.state::<AppState>().engine.as_ref().ok().cloned() else { return };
        let settings = engine.settings().get().await.hidden;
        if settings.release_page_after_secs == 0 {
            return;
        }
        let release_after = Duration::from_secs(settings.release_page_after_secs.into());
        let reload_after = Duration::from_secs(settings.reload_grown_page_after_secs.into());
        let still_hidden = |window: &WebviewWindow| {
            app.state::<HiddenPage>().generation.load(Ordering::SeqCst) == generation
                && !window.is_visible().unwrap_or(true)
        };
        let mut waited = Duration::ZERO;
        if !reload_after.is_zero() && reload_after < release_after {
            tokio::time::sleep(reload_after).await;
            waited = reload_after;
            let page = app.state::<HiddenPage>();
            let Ok(window) = crate::window::main_window(&app) else { return };
            if !still_hidden(&window) {
                return;
            }
            if let Some(grown) = page.grown_past_limit()
                && page.can_reload(&app)
            {
                reload_fresh(&window, &page, grown);
            }
        }
        tokio::time::sleep(release_after - waited).await;
        loop {
            let page = app.state::<HiddenPage>();
            let Ok(window) = crate::window::main_window(&app) else { return };
            if !still_hidden(&window) {
                return;
            }
            if page.can_reload(&app) {
                release(&window, &page);
                return;
            }
            tokio::time::sleep(RETRY).await;
        }
    });
}

/// The window is about to show: a released page loads again.
pub fn shown(app: &AppHandle) {
    let page = app.state::<HiddenPage>();
    page.generation.fetch_add(1, Ordering::SeqCst);
    if page.released.swap(false, Ordering::SeqCst)
        && let Ok(window) = crate::window::main_window(app)
    {
        tracing::info!("loading the page again after it was released while hidden");
        // The user asked for the window: crashes before this no longer count.
        page.crashes.lock().unwrap_or_else(|e| e.into_inner()).0.forgive();
        reload(&window);
    }
}

fn release(window: &WebviewWindow, page: &HiddenPage) {
    page.released.store(true, Ordering::SeqCst);
    // The next page reports for itself.
    page.holds_unsent.store(false, Ordering::SeqCst);
    tracing::info!(
        "the window has been hidden for a while; ending the page's web process to free its memory"
    );
    #[cfg(target_os = "linux")]
    let _ = window.with_webview(|webview| {
        use webkit2gtk::WebViewExt;
        webview.inner().terminate_web_process();
    });
    #[cfg(not(target_os = "linux"))]
    let _ = window;
}

/// Ends the page's process and loads the page in a new one at once, while the window is hidden.
/// A new process, not a reload in the old one: a process keeps much of the memory its page has
/// used (leaving a long conversation gave none of it back), and a new one starts from nothing.
fn reload_fresh(window: &WebviewWindow, page: &HiddenPage, grown: u64) {
    tracing::info!(
        grown_mib = grown >> 20,
        "the page's process has grown since it loaded; loading the page again while the window is hidden"
    );
    reload_in_new_process(window, page);
}

/// Ends the page's web process (a hung page answers nothing, a reload in it included) and loads
/// the page in a new one: the route and the draft come back with it (see `unsentWork.ts`).
fn reload_in_new_process(window: &WebviewWindow, page: &HiddenPage) {
    page.holds_unsent.store(false, Ordering::SeqCst);
    #[cfg(target_os = "linux")]
    let _ = window.with_webview(|webview| {
        use webkit2gtk::WebViewExt;
        webview.inner().terminate_web_process();
    });
    reload(window);
}

/// The page stopped answering (an app's script that never returns): it is loaded again in a new
/// process, visible or not.
pub fn reload_hung(app: &AppHandle) {
    let Ok(window) = crate::window::main_window(app) else { return };
    reload_in_new_process(&window, &app.state::<HiddenPage>());
}

/// The page's process was ended while the window is hidden, and is loaded again on show.
pub fn released(app: &AppHandle) -> bool {
    app.state::<HiddenPage>().released.load(Ordering::SeqCst)
}

fn reload(window: &WebviewWindow) {
    if let Err(e) = window.reload() {
        tracing::warn!(error = %e, "could not load the page again");
    }
}

/// Reloads the page when its web process dies on its own (a crash, the system's memory limit):
/// at once when the window is visible, else when it next shows.
pub fn watch_crashes(window: &WebviewWindow) {
    #[cfg(target_os = "linux")]
    {
        let app = window.app_handle().clone();
        let _ = window.with_webview(move |webview| {
            use webkit2gtk::{WebProcessTerminationReason, WebViewExt};
            webview.inner().connect_web_process_terminated(move |_, reason| {
                if reason == WebProcessTerminationReason::TerminatedByApi {
                    return; // Released while hidden: `shown` reloads it.
                }
                let Ok(window) = crate::window::main_window(&app) else { return };
                let page = app.state::<HiddenPage>();
                let again = page.crashes.lock().unwrap_or_else(|e| e.into_inner()).0.crashed(Instant::now());
                if again.is_none() {
                    // Loaded again when the window next shows, which is the user asking for it.
                    page.released.store(true, Ordering::SeqCst);
                    tracing::error!(
                        ?reason,
                        "the page's web process ended unexpectedly {} times in a row, each within {} s of \
                         loading; not loading it again until the window is shown",
                        RELOADS + 1,
                        HEALTHY_AFTER.as_secs()
                    );
                    tell_the_page_keeps_crashing(&app);
                    return;
                }
                tracing::error!(?reason, "the page's web process ended unexpectedly; loading the page again");
                if window.is_visible().unwrap_or(false) {
                    reload(&window);
                } else {
                    page.released.store(true, Ordering::SeqCst);
                }
            });
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = window;
}

/// The page cannot say it, so a native dialog does.
#[cfg(target_os = "linux")]
fn tell_the_page_keeps_crashing(app: &AppHandle) {
    use tauri_plugin_dialog::{DialogExt, MessageDialogKind};
    app.dialog()
        .message(format!(
            "Perch's window stopped working {} times in a row, each soon after it loaded: WebKit's \
             web process crashed each time, and the log says why. Perch keeps running; the window \
             is loaded again the next time you open it.",
            RELOADS + 1
        ))
        .title("Perch's window keeps crashing")
        .kind(MessageDialogKind::Error)
        .show(|_| {});
}
