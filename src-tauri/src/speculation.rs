//! WebKit's speculative loads, turned off in Perch's window so that an MCP App's frame opens no
//! connection and resolves no name its Content Security Policy does not allow. No CSP governs
//! them (WebKitGTK 2.50's sources, `WebCore/loader/LinkLoader.cpp`, `html/HTMLAnchorElement.cpp`):
//! - `<link rel=preconnect>` (or a `Link:` header) connects to its origin;
//! - a click on an `<a>`/`<area>` with `target=_blank` (or `_self` in the main frame) connects
//!   to the link's origin, from the web process, right after asking to navigate: the window's
//!   navigation handler answers too late to stop it, whatever it answers;
//! - `<link rel=dns-prefetch>` resolves its host name, and the name itself is the message;
//! - `<link rel=prefetch>` fetches (off by default) and a 103 Early Hints response's preconnect
//!   (top-level navigations only, which a frame is not) connects.
//!
//! Each is a WebKit feature, and all four are turned off for the whole window: Perch's own page
//! loads nothing from the network, so it loses nothing. Prerendering and speculation rules are
//! not implemented in WebKitGTK; the network cache's speculative loads are built for Apple's
//! ports only; the UI process preconnects only for loads Perch itself starts. The features API
//! (`webkit_settings_set_feature_enabled`) is WebKitGTK 2.42's, newer than the 2.40 the
//! `webkit2gtk` crate binds, so its functions are looked up when the window is made: on an older
//! WebKitGTK apps are not shown at all (see [`apps_contained`]).

use std::sync::OnceLock;

/// The features that load on WebKit's own initiative, unchecked by the page's policy.
pub const SPECULATIVE_FEATURES: [&str; 4] =
    ["LinkPreconnect", "LinkDNSPrefetch", "LinkPrefetch", "LinkPreconnectEarlyHints"];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpeculationError {
    #[error(
        "this system's WebKitGTK ({0}) cannot turn off the connections a page opens ahead of time; \
         apps need WebKitGTK 2.42 or newer: update the system's libwebkit2gtk-4.1"
    )]
    TooOld(String),
    #[error("WebKitGTK did not turn off {0}, which would let an app connect where its policy forbids")]
    StillOn(String),
    #[error("Perch's window has no web view yet")]
    NoWebView,
}

static CONTAINED: OnceLock<Result<(), SpeculationError>> = OnceLock::new();

/// Turns the speculative loads off in the window's web view; what came of it is kept for
/// [`apps_contained`]. Called once, as the window is made (its settings stay with the view when
/// the page loads again, in a new process too), before any app can open.
pub fn turn_off(window: &tauri::WebviewWindow) {
    #[cfg(target_os = "linux")]
    {
        let asked = window.with_webview(|webview| {
            use webkit2gtk::WebViewExt;
            record(match webview.inner().settings() {
                Some(settings) => linux::turn_off(&settings),
                None => Err(SpeculationError::NoWebView),
            });
        });
        if asked.is_err() {
            record(Err(SpeculationError::NoWebView));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (window, CONTAINED.set(Ok(())));
}

#[cfg(target_os = "linux")]
fn record(outcome: Result<(), SpeculationError>) {
    match &outcome {
        Ok(()) => tracing::info!(features = ?SPECULATIVE_FEATURES, "WebKit's speculative loads are off"),
        Err(e) => tracing::error!(error = %e, "apps will not be shown"),
    }
    let _ = CONTAINED.set(outcome);
}

/// Whether apps may be shown: the window's speculative loads are off. Elsewhere than Linux
/// nothing is claimed here (those webviews are not WebKitGTK).
pub fn apps_contained() -> Result<(), SpeculationError> {
    CONTAINED.get().cloned().unwrap_or(Err(SpeculationError::NoWebView))
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // WebKitGTK's features API, which no binding in the tree covers.
mod linux {
    use std::ffi::{CStr, c_char, c_int, c_void};

    use webkit2gtk::glib::object::ObjectType;

    use super::{SPECULATIVE_FEATURES, SpeculationError};

    type GetAllFeatures = unsafe extern "C" fn() -> *mut c_void;
    type ListLength = unsafe extern "C" fn(*mut c_void) -> usize;
    type ListGet = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
    type ListUnref = unsafe extern "C" fn(*mut c_void);
    type Identifier = unsafe extern "C" fn(*mut c_void) -> *const c_char;
    type SetEnabled = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int);
    type GetEnabled = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;

    /// A function of the WebKitGTK the process runs with, if it has it.
    fn symbol(name: &CStr) -> Option<*mut c_void> {
        // SAFETY: dlsym with RTLD_DEFAULT only reads the loaded objects' symbol tables.
        let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        (!found.is_null()).then_some(found)
    }

    pub fn turn_off(settings: &webkit2gtk::Settings) -> Result<(), SpeculationError> {
        // SAFETY: plain getters WebKitGTK has always had.
        let version = unsafe {
            format!(
                "{}.{}",
                webkit2gtk::ffi::webkit_get_major_version(),
                webkit2gtk::ffi::webkit_get_minor_version()
            )
        };
        let too_old = || SpeculationError::TooOld(version.clone());
        let (all, length, get, unref, identifier, set, enabled) = (
            symbol(c"webkit_settings_get_all_features").ok_or_else(too_old)?,
            symbol(c"webkit_feature_list_get_length").ok_or_else(too_old)?,
            symbol(c"webkit_feature_list_get").ok_or_else(too_old)?,
            symbol(c"webkit_feature_list_unref").ok_or_else(too_old)?,
            symbol(c"webkit_feature_get_identifier").ok_or_else(too_old)?,
            symbol(c"webkit_settings_set_feature_enabled").ok_or_else(too_old)?,
            symbol(c"webkit_settings_get_feature_enabled").ok_or_else(too_old)?,
        );
        // SAFETY: each pointer is the WebKitGTK function of that name, with the C signature
        // its header (WebKitSettings.h, WebKitFeature.h, 2.42) declares.
        let (all, length, get, unref, identifier, set, enabled) = unsafe {
            (
                std::mem::transmute::<*mut c_void, GetAllFeatures>(all),
                std::mem::transmute::<*mut c_void, ListLength>(length),
                std::mem::transmute::<*mut c_void, ListGet>(get),
                std::mem::transmute::<*mut c_void, ListUnref>(unref),
                std::mem::transmute::<*mut c_void, Identifier>(identifier),
                std::mem::transmute::<*mut c_void, SetEnabled>(set),
                std::mem::transmute::<*mut c_void, GetEnabled>(enabled),
            )
        };
        let settings = settings.as_ptr().cast::<c_void>();
        let mut found = Vec::new();
        let mut still_on = Vec::new();
        // SAFETY: the list is ours (transfer full) until unref; its features live as long as
        // it does; the identifiers are static strings; `settings` is a live WebKitSettings.
        unsafe {
            let list = all();
            for i in 0..length(list) {
                let feature = get(list, i);
                let id = CStr::from_ptr(identifier(feature)).to_string_lossy();
                if let Some(name) = SPECULATIVE_FEATURES.iter().find(|name| **name == id) {
                    set(settings, feature, 0);
                    found.push(*name);
                    if enabled(settings, feature) != 0 {
                        still_on.push(*name);
                    }
                }
            }
            unref(list);
        }
        if let Some(name) = still_on.first() {
            return Err(SpeculationError::StillOn((*name).to_owned()));
        }
        // Preconnecting is what every WebKitGTK with this API does; a build without the
        // feature's switch could not be told to stop. The others came later than 2.42 or are off
        // by default where they are missing (DNS prefetching was a setting, off, until 2.48).
        if !found.contains(&"LinkPreconnect") {
            return Err(SpeculationError::StillOn("LinkPreconnect (not found)".into()));
        }
        Ok(())
    }
}
