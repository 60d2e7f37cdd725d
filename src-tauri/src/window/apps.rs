//! MCP Apps in the window: the `perch-app:` scheme that serves each app's page once with its
//! own Content Security Policy, the navigation guard that keeps the window and every frame on
//! Perch's pages, and the watchdog that stops apps when the page's memory runs away.
//!
//! An app's frame is sandboxed without `allow-same-origin` (an opaque origin: no access to
//! Perch's page, storage or IPC, whose scripts are only injected into the main frame), and its
//! page comes from this scheme rather than `srcdoc`, because a `srcdoc` document inherits the
//! page's own policy (which forbids inline scripts, so no real app would run) and a `<meta>`
//! policy inside it would leave the markup before it unpoliced. The policy travels as a
//! response header here, as in Tauri's own isolation frame.

use std::sync::Mutex;
#[cfg(target_os = "linux")]
use std::time::Instant;

#[cfg(target_os = "linux")]
use perch_core::mcp::apps::watch::{Liveness, Probe};
use perch_core::mcp::apps::watch::{MemoryWatch, WATCH_EVERY};
use tauri::http::{Response, StatusCode, header};
use tauri::{AppHandle, Manager, Runtime, Url};
use tauri_specta::Event;

use crate::state::AppState;

pub const SCHEME: &str = "perch-app";

/// An app was stopped by Perch (not by its card): the card says why and shows the text.
#[derive(Debug, Clone, serde::Serialize, specta::Type, tauri_specta::Event)]
pub struct McpAppStopped {
    pub session: String,
    pub reason: AppStopReason,
}

#[derive(Debug, Clone, Copy, serde::Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AppStopReason {
    /// The page grew past its budget while apps were open.
    Memory,
    /// The user turned this server's apps off.
    TurnedOff,
}

/// Run in every frame before its own scripts; in a frame (an app) it makes WebKit's message
/// channel to the window's IPC handler inert. WebKitGTK exposes that handler in subframes too,
/// and `window.webkit` cannot be removed (it is read-only and not configurable), so the
/// handler's `postMessage` is replaced in this realm before the app's scripts run; the app has
/// no other realm to take a native one from (no frames, no pop-ups). A message through it would
/// fail Tauri's invoke-key check anyway, but would still reach the handler and write an error
/// line each time.
pub const FRAME_GUARD_SCRIPT: &str = r#"
if (window.top !== window) {
  try {
    const ipc = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.ipc;
    if (ipc) {
      Object.defineProperty(Object.getPrototypeOf(ipc), "postMessage", {
        value: function postMessage() {},
        writable: false,
        configurable: false,
      });
    }
  } catch (_) {}
}
"#;

/// The frame's address for a page token (Windows serves custom schemes over http).
pub fn frame_url(token: &str) -> String {
    if cfg!(windows) {
        format!("http://{SCHEME}.localhost/{token}")
    } else {
        format!("{SCHEME}://localhost/{token}")
    }
}

/// The page token in a frame's address, if it is one of ours.
fn token_of(url: &Url) -> Option<&str> {
    let ours = match url.scheme() {
        SCHEME => url.host_str() == Some("localhost"),
        "http" => url.host_str() == Some("perch-app.localhost"),
        _ => false,
    };
    let token = url.path().strip_prefix('/')?;
    (ours && url.query().is_none() && token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(token)
}

/// Serves `perch-app://localhost/<token>`: the page once, with its policy; anything else 404.
pub fn serve<R: Runtime>(app: &AppHandle<R>, request: &tauri::http::Request<Vec<u8>>) -> Response<Vec<u8>> {
    let not_found = || Response::builder().status(StatusCode::NOT_FOUND).body(Vec::new()).unwrap_or_default();
    let Ok(url) = Url::parse(&request.uri().to_string()) else { return not_found() };
    let Some(token) = token_of(&url) else { return not_found() };
    let state = app.state::<AppState>();
    let Ok(engine) = state.engine() else { return not_found() };
    let Some(page) = engine.app_page(token) else { return not_found() };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header(header::CONTENT_SECURITY_POLICY, page.csp)
        .header(header::REFERRER_POLICY, "no-referrer")
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header("Permissions-Policy", "camera=(), microphone=(), geolocation=(), clipboard-read=(), clipboard-write=(), usb=(), serial=(), hid=()")
        .body(page.html.into_bytes())
        .unwrap_or_else(|_| not_found())
}

/// Whether the window (or any frame in it) may go to `url`: Perch's own page, and an app's page
/// whose token was minted and not yet loaded. An app cannot send its frame to the network or
/// the window anywhere (a link is opened by the system browser, never in the window).
pub fn may_navigate<R: Runtime>(app: &AppHandle<R>, url: &Url) -> bool {
    let own = match url.scheme() {
        "tauri" => url.host_str() == Some("localhost"),
        "http" | "https" => {
            url.host_str() == Some("tauri.localhost") || (cfg!(debug_assertions) && dev_server(url))
        }
        "about" => url.path() == "blank" || url.path() == "srcdoc",
        _ => false,
    };
    if own {
        return true;
    }
    let allowed = token_of(url).is_some_and(|token| {
        app.state::<AppState>().engine().is_ok_and(|engine| engine.app_sessions().page_pending(token))
    });
    if !allowed {
        tracing::warn!(url = %url, "a navigation away from Perch's pages was stopped");
    }
    allowed
}

/// The page (re)loaded: apps it showed are gone with their frames, so their sessions end.
pub fn page_loaded<R: Runtime>(app: &AppHandle<R>) {
    if let Ok(engine) = app.state::<AppState>().engine() {
        let closed = engine.app_sessions().close_all();
        if closed > 0 {
            tracing::info!(closed, "the page reloaded: its apps' sessions are closed");
        }
    }
}

/// The development server (`tauri dev`).
fn dev_server(url: &Url) -> bool {
    url.host_str() == Some("localhost") && url.port() == Some(5173)
}

/// The page's probes: a trivial script sent on each look, whose answer tells a live page from a
/// hung one (the rule: `perch_core::mcp::apps::watch::Liveness`).
#[cfg(target_os = "linux")]
#[derive(Default)]
struct PageProbe {
    rule: Liveness,
    /// Set when the probe out now comes back.
    answered: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[cfg(target_os = "linux")]
impl PageProbe {
    /// True once a probe has gone unanswered too long; otherwise sends the next one when the
    /// last came back.
    fn hung(&mut self, app: &AppHandle) -> bool {
        use std::sync::atomic::{AtomicBool, Ordering};
        match self.rule.look(Instant::now(), self.answered.load(Ordering::SeqCst)) {
            Probe::Waiting => false,
            Probe::Hung => true,
            Probe::SendNext => {
                let Ok(window) = crate::window::main_window(app) else { return false };
                let answered = std::sync::Arc::new(AtomicBool::new(false));
                let flag = answered.clone();
                let sent = window.with_webview(move |webview| {
                    use webkit2gtk::WebViewExt;
                    // An error (the page is between loads) is an answer too: only silence is a hang.
                    webview.inner().evaluate_javascript(
                        "0",
                        None,
                        None,
                        None::<&webkit2gtk::gio::Cancellable>,
                        move |_| {
                            flag.store(true, Ordering::SeqCst);
                        },
                    );
                });
                if sent.is_ok() {
                    self.answered = answered;
                    self.rule.sent(Instant::now());
                }
                false
            }
        }
    }
}

/// Stops every open app when the page's memory grows past its budget (`MemoryWatch`), or when
/// the page stops answering (then loaded again in a new process, without those apps). A stopped
/// app's frame is removed by its card, which frees its memory at the next collection. Linux
/// only: the figure is read from `/proc` (elsewhere `page_memory` has none and nothing is
/// stopped).
pub fn watch_memory(app: &AppHandle, session: &str) {
    // Each open app with the page's memory when it opened.
    static OPENED_AT: Mutex<MemoryWatch> = Mutex::new(MemoryWatch::new());
    // Whether a watcher runs; it decides to end while holding this, after seeing no open app,
    // so an app opened meanwhile either is seen by it or starts a new one.
    static WATCHING: Mutex<bool> = Mutex::new(false);
    if let Some(memory) = crate::page_process::page_memory() {
        OPENED_AT.lock().unwrap_or_else(|p| p.into_inner()).opened(session, memory);
    }
    {
        let mut watching = WATCHING.lock().unwrap_or_else(|p| p.into_inner());
        if *watching {
            return;
        }
        *watching = true;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        #[cfg(target_os = "linux")]
        let mut probe = PageProbe::default();
        loop {
            tokio::time::sleep(WATCH_EVERY).await;
            let state = app.state::<AppState>();
            let Ok(engine) = state.engine() else { break };
            let open = engine.app_sessions().open_ids();
            if open.is_empty() {
                let mut watching = WATCHING.lock().unwrap_or_else(|p| p.into_inner());
                if engine.app_sessions().open_count() == 0 {
                    OPENED_AT.lock().unwrap_or_else(|p| p.into_inner()).clear();
                    *watching = false;
                    return;
                }
                continue;
            }
            // A page released while hidden runs nothing; it closes its apps when it loads again.
            #[cfg(target_os = "linux")]
            if !crate::window::hidden_page::released(&app) && probe.hung(&app) {
                let stopped = engine.app_sessions().close_hung();
                tracing::warn!(
                    apps = stopped.len(),
                    "the page stopped answering with apps open: they are stopped and the page is loaded again in a new process"
                );
                crate::window::hidden_page::reload_hung(&app);
                continue;
            }
            let Some(now) = crate::page_process::page_memory() else { continue };
            let (over, base) = {
                let mut opened = OPENED_AT.lock().unwrap_or_else(|p| p.into_inner());
                (opened.over_budget(&open, now), opened.base().unwrap_or_default())
            };
            if over {
                tracing::warn!(
                    base_mib = base / (1 << 20),
                    now_mib = now / (1 << 20),
                    apps = open.len(),
                    "the page grew past its budget with apps open: they are stopped"
                );
                for session in open {
                    engine.close_app(&session);
                    let _ = McpAppStopped { session, reason: AppStopReason::Memory }.emit(&app);
                }
            }
        }
        *WATCHING.lock().unwrap_or_else(|p| p.into_inner()) = false;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_app_addresses_carry_a_token() {
        let token = "0123456789abcdef0123456789abcdef";
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(token_of(&url(&frame_url(token))), Some(token));
        assert_eq!(token_of(&url(&format!("http://perch-app.localhost/{token}"))), Some(token));
        for bad in [
            format!("perch-app://evil/{token}"),
            format!("perch-app://localhost/{token}?x=1"),
            format!("perch-app://localhost/{token}/more"),
            "perch-app://localhost/short".to_owned(),
            format!("http://127.0.0.1/{token}"),
            format!("https://perch-app.localhost.evil.com/{token}"),
        ] {
            assert_eq!(token_of(&url(&bad)), None, "{bad}");
        }
    }
}
