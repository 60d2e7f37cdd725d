//! "Add server" links (`perch://mcp/add?...`) from the desktop. The deep-link plugin hears them:
//! at a launch with the link as its argument, and, through the single-instance plugin, from a
//! later launch (on Linux a link starts a new process, which hands its arguments over). Each link
//! is read by the engine (`mcp::add_link::parse`), kept here until the user answers, and the
//! window comes up with the confirmation. Add saves the proposal kept here, never one the page
//! sends, through the engine (`perch_core::engine::add_link_save`), which refuses a name that a server or a
//! permission already has; the user's `mcp_servers.json` stays the one record of their servers.

use std::sync::Mutex;

use perch_core::mcp::add_link::{self, ProposedServer};
use perch_core::window_state::WindowMode;
use serde::Serialize;
use tauri::{App, AppHandle, Manager};
use tauri_plugin_deep_link::DeepLinkExt;
use tauri_specta::Event;

use crate::window;

/// Links waiting at once; a page that fires links in a loop cannot pile up more than this.
const MAX_PENDING: usize = 5;

/// A link the user has not answered yet: what it proposes, or why it cannot be used.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct AddLinkRequest {
    pub id: u32,
    pub proposal: Option<ProposedServer>,
    pub error: Option<String>,
}

/// The links waiting for an answer, oldest first. They stay until answered, so a page loaded
/// again (after a hide, or a crash) asks again.
#[derive(Default)]
pub struct AddLinks {
    state: Mutex<(u32, Vec<AddLinkRequest>)>,
}

impl AddLinks {
    /// Reads a link and keeps it; the same proposal twice is kept once.
    fn receive(&self, link: &str) -> u32 {
        let (proposal, error) = match add_link::parse(link) {
            Ok(proposal) => (Some(proposal), None),
            Err(e) => {
                tracing::warn!(error = %e, "an add-server link was refused");
                (None, Some(e.to_string()))
            }
        };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (next, pending) = &mut *state;
        if let Some(same) = pending.iter().find(|r| r.proposal.is_some() && r.proposal == proposal) {
            return same.id;
        }
        *next += 1;
        pending.push(AddLinkRequest { id: *next, proposal, error });
        let excess = pending.len().saturating_sub(MAX_PENDING);
        pending.drain(..excess);
        *next
    }

    pub fn pending(&self) -> Vec<AddLinkRequest> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1.clone()
    }

    /// What link `id` proposes, while it waits.
    pub fn proposal(&self, id: u32) -> Option<ProposedServer> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.1.iter().find(|r| r.id == id).and_then(|r| r.proposal.clone())
    }

    /// The user answered (Add or Cancel); true when it was waiting.
    pub fn dismiss(&self, id: u32) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let before = state.1.len();
        state.1.retain(|r| r.id != id);
        state.1.len() != before
    }
}

/// An add-server link arrived: ask for the waiting links (`mcp_add_links`).
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct AddLinkArrived {
    pub id: u32,
}

/// Listens for links, takes the one Perch was started with, and in development builds makes
/// this binary the desktop's handler of `perch:` links (a package's desktop file does it when
/// installed). Call after the deep-link plugin is set up.
pub fn start(app: &App) {
    app.manage(AddLinks::default());
    let handle = app.handle().clone();
    app.deep_link().on_open_url(move |event| {
        for url in event.urls() {
            receive(&handle, url.as_str());
        }
    });
    // Started with a link (the desktop launched Perch for it).
    if let Ok(Some(urls)) = app.deep_link().get_current() {
        for url in urls {
            receive(app.handle(), url.as_str());
        }
    }
    // Tests set PERCH_DATA_DIR and deliver links themselves: the desktop's handlers stay untouched.
    if cfg!(debug_assertions) && std::env::var_os("PERCH_DATA_DIR").is_none() {
        let handle = app.handle().clone();
        // xdg-mime and update-desktop-database take a while; never in the way of the window.
        std::thread::spawn(move || {
            if let Err(e) = handle.deep_link().register_all() {
                tracing::debug!(error = %e, "perch: links are not handled by this development build");
            }
        });
    }
}

fn receive(app: &AppHandle, link: &str) {
    let id = app.state::<AddLinks>().receive(link);
    if let Err(e) = window::set_mode(app, WindowMode::Normal).and_then(|()| window::show(app)) {
        tracing::warn!(error = %e, "could not show the window for an add-server link");
    }
    hide_tooltip(app);
    let _ = AddLinkArrived { id }.emit(app);
}

/// A tooltip GTK showed where the pointer rests (a title bar button's) would stay over the
/// dialog until the pointer moves: WebKit updates it only on pointer motion. It is hidden here
/// as WebKit hides one itself (no tooltip, then a query), and the widget's "has a tooltip" is
/// put back at once: WebKit sets it only when the text under the pointer changes, so leaving it
/// off would keep every later tooltip of the same text from showing.
fn hide_tooltip(app: &AppHandle) {
    #[cfg(target_os = "linux")]
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.with_webview(|webview| {
            use gtk::prelude::WidgetExt;
            let widget = webview.inner();
            let had_tooltip = widget.has_tooltip();
            widget.set_has_tooltip(false);
            widget.trigger_tooltip_query();
            widget.set_has_tooltip(had_tooltip);
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = app;
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK: &str = "perch://mcp/add?name=time&command=uvx&arg=mcp-server-time";

    #[test]
    fn links_wait_until_answered_and_the_same_one_is_kept_once() {
        let links = AddLinks::default();
        let first = links.receive(LINK);
        assert_eq!(links.receive(LINK), first, "the same proposal again");
        let refused = links.receive("perch://mcp/add?name=bad name");
        let pending = links.pending();
        assert_eq!(pending.len(), 2);
        assert!(pending[0].proposal.as_ref().is_some_and(|p| p.name == "time"));
        assert!(pending[1].proposal.is_none() && pending[1].error.is_some());
        assert!(links.dismiss(first));
        assert!(!links.dismiss(first), "answered once");
        assert_eq!(links.pending().iter().map(|r| r.id).collect::<Vec<_>>(), [refused]);
    }

    #[test]
    fn at_most_a_few_links_wait() {
        let links = AddLinks::default();
        for i in 0..20 {
            links.receive(&format!("perch://mcp/add?name=s{i}&url=https://a.example/{i}"));
        }
        let pending = links.pending();
        assert_eq!(pending.len(), MAX_PENDING);
        assert!(
            pending.last().and_then(|r| r.proposal.as_ref()).is_some_and(|p| p.name == "s19"),
            "the newest kept"
        );
    }
}
