//! Probes of the machine's optional parts: display server, audio input, OS keyring, Ollama,
//! MCP package runners (npx, uvx). Each answers truthfully and quickly; none is required to run Perch.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::shell_path;

pub use perch_foundation::probe::Probe;

/// Which display server the session uses, and whether it answers.
pub fn display() -> Probe {
    display_from(
        std::env::var("WAYLAND_DISPLAY").ok().filter(|v| !v.is_empty()),
        std::env::var("DISPLAY").ok().filter(|v| !v.is_empty()),
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
    )
}

fn display_from(wayland: Option<String>, x11: Option<String>, runtime: Option<PathBuf>) -> Probe {
    if !cfg!(target_os = "linux") {
        return Probe::yes("display", "the system's native display");
    }
    if let Some(name) = wayland {
        let socket = if Path::new(&name).is_absolute() {
            PathBuf::from(&name)
        } else {
            runtime.unwrap_or_default().join(&name)
        };
        return if can_connect(&socket) {
            Probe::yes(
                "display",
                format!("Wayland ({name}){}", x11.map(|d| format!(", XWayland at {d}")).unwrap_or_default()),
            )
        } else {
            Probe::no(
                "display",
                format!("WAYLAND_DISPLAY={name} but nothing listens at {}", socket.display()),
            )
        };
    }
    let Some(display) = x11 else {
        return Probe::no(
            "display",
            "none: no DISPLAY or WAYLAND_DISPLAY (headless); the window cannot open here",
        );
    };
    match x11_socket(&display) {
        Some(socket) if can_connect(&socket) => Probe::yes("display", format!("X11 at {display}")),
        Some(socket) => {
            Probe::no("display", format!("DISPLAY={display} but no X server listens at {}", socket.display()))
        }
        None => Probe::yes("display", format!("X11 at {display} (remote display, not probed)")),
    }
}

/// `:99` or `:99.0` -> `/tmp/.X11-unix/X99`; a display with a host part is remote.
fn x11_socket(display: &str) -> Option<PathBuf> {
    let number = display.strip_prefix(':').or_else(|| display.strip_prefix("unix:"))?;
    let number = number.split('.').next()?;
    number.parse::<u32>().ok()?;
    Some(PathBuf::from(format!("/tmp/.X11-unix/X{number}")))
}

#[cfg(unix)]
fn can_connect(socket: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(socket).is_ok()
}
#[cfg(not(unix))]
fn can_connect(_: &Path) -> bool {
    true
}

/// Whether the desktop offers the XDG GlobalShortcuts portal, through which Perch binds its
/// shortcuts on Wayland (X11 key grabs only reach XWayland windows).
pub async fn global_shortcuts_portal() -> Probe {
    const NAME: &str = "global shortcuts portal";
    #[cfg(target_os = "linux")]
    {
        use crate::shortcut_portal::{session_bus, version};
        match async { version(&session_bus().await?).await }.await {
            Ok(v) => Probe::yes(
                NAME,
                format!(
                    "org.freedesktop.portal.GlobalShortcuts version {v}: Perch binds its shortcuts through it on Wayland"
                ),
            ),
            // What the bus said, kept for `perch doctor` (Settings shows the sentence alone).
            Err(e) => match &e {
                crate::shortcut_portal::PortalError::NoPortal(why) => Probe::no(NAME, format!("{e} ({why})")),
                _ => Probe::no(NAME, e.to_string()),
            },
        }
    }
    #[cfg(not(target_os = "linux"))]
    Probe::no(NAME, "not needed: the system's own global shortcuts are used")
}

/// On a Wayland session, what `perch doctor` says of the desktop: which it is, and for each
/// portal Perch uses there, whether it answered (its version) and what Perch does without it.
pub async fn wayland_desktop() -> Vec<Probe> {
    use crate::desktop_shortcuts::{Desktop, how_to_bind};
    let value = std::env::var("XDG_CURRENT_DESKTOP").unwrap_or_default();
    let desktop = Desktop::named(&value);
    let named = if value.is_empty() { "unknown (XDG_CURRENT_DESKTOP is not set)".to_owned() } else { value };
    let mut out = vec![Probe::yes("desktop", format!("{named} on Wayland"))];
    #[cfg(target_os = "linux")]
    {
        let conn = zbus::Connection::session().await.map_err(|e| NoVersion::NoBus(e.to_string()));
        let version = |interface: &'static str| {
            let conn = conn.clone();
            async move { portal_version(&conn?, interface).await }
        };
        let (screenshot, remote) = tokio::join!(
            version("org.freedesktop.portal.Screenshot"),
            version("org.freedesktop.portal.RemoteDesktop")
        );
        out.push(match screenshot {
            Ok(v) => Probe::yes("screenshot portal", format!("version {v}: captures go through it")),
            Err(e) => Probe::no(
                "screenshot portal",
                format!("not offered ({e}): captures cannot see Wayland windows; install xdg-desktop-portal and your desktop's backend (xdg-desktop-portal-gnome, -kde or -wlr)"),
            ),
        });
        out.push(match remote {
            Ok(v) => Probe::yes(
                "remote desktop portal",
                format!("version {v}: dictate-anywhere types through it (the desktop may ask first; before version 2, once each time Perch starts)"),
            ),
            Err(e) => Probe::no(
                "remote desktop portal",
                format!("not offered ({e}): dictate-anywhere types with wtype where the compositor lets it (sway and other wlroots desktops), else with ydotool, else the words go to the clipboard"),
            ),
        });
    }
    let mut shortcuts = global_shortcuts_portal().await;
    if !shortcuts.available {
        shortcuts.detail = format!(
            "{}. Bind the keys in the desktop's own settings instead (Settings shows how for each); for example: {}",
            shortcuts.detail,
            how_to_bind(desktop, "screenshot", "Alt+Period")
        );
    }
    out.push(shortcuts);
    out
}

/// Why a portal interface has no version to read.
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, thiserror::Error)]
enum NoVersion {
    /// The session bus itself could not be reached.
    #[error("{0}")]
    NoBus(String),
    /// The bus's or the portal's error name (`org.freedesktop.DBus.Error.UnknownInterface`...).
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Unreadable(String),
}

/// The `version` property of a portal interface on the session bus, or why it has none.
#[cfg(target_os = "linux")]
async fn portal_version(conn: &zbus::Connection, interface: &str) -> Result<u32, NoVersion> {
    let reply = conn
        .call_method(
            Some("org.freedesktop.portal.Desktop"),
            "/org/freedesktop/portal/desktop",
            Some("org.freedesktop.DBus.Properties"),
            "Get",
            &(interface, "version"),
        )
        .await
        .map_err(|e| match e {
            zbus::Error::MethodError(name, _, _) => NoVersion::Refused(name.to_string()),
            other => NoVersion::Refused(other.to_string()),
        })?;
    let value: zbus::zvariant::OwnedValue =
        reply.body().deserialize().map_err(|e| NoVersion::Unreadable(e.to_string()))?;
    u32::try_from(value).map_err(|e| NoVersion::Unreadable(e.to_string()))
}

/// Whether the OS keyring (Secret Service, Keychain, Credential Manager) stores keys. Blocking.
pub fn keyring() -> Probe {
    if crate::keys::keyring_works() {
        Probe::yes("keyring", "API keys are kept in the OS keyring")
    } else {
        Probe::no(
            "keyring",
            "no OS keyring answers here: API keys are kept in an encrypted file in the data folder, \
             readable by anyone who can read your files",
        )
    }
}

/// Whether secure connections can be checked: the system's trusted root certificates load.
pub fn root_certificates() -> Probe {
    if perch_foundation::http::system_has_root_certificates() {
        Probe::yes("certificates", "the system's trusted roots check secure connections")
    } else {
        Probe::no("certificates", perch_foundation::http::NO_ROOT_CERTIFICATES)
    }
}

/// Whether Ollama answers at `base_url`, within two seconds.
pub async fn ollama(base_url: &str) -> Probe {
    let client = match crate::providers::http::client_builder()
        .connect_timeout(Duration::from_millis(1500))
        .timeout(Duration::from_secs(2))
        .build()
    {
        Ok(c) => c,
        Err(e) => return Probe::no("ollama", format!("no HTTP client: {e}")),
    };
    #[derive(serde::Deserialize)]
    struct Version {
        version: String,
    }
    let url = format!("{base_url}/api/version");
    match client.get(&url).send().await {
        Ok(resp) if resp.status().is_success() => match resp.json::<Version>().await {
            Ok(v) => Probe::yes("ollama", format!("version {} at {base_url}", v.version)),
            Err(_) => Probe::no("ollama", format!("something answers at {base_url}, but it is not Ollama")),
        },
        Ok(resp) => Probe::no("ollama", format!("{base_url} answered {}", resp.status())),
        Err(e) if e.is_timeout() => Probe::no("ollama", format!("no answer from {base_url} within 2 s")),
        Err(_) => Probe::no(
            "ollama",
            format!(
                "not running at {base_url}; start it with `ollama serve`, or set its URL in Settings or OLLAMA_HOST"
            ),
        ),
    }
}

/// The programs MCP servers are commonly launched with, found on the login PATH.
pub async fn package_runners() -> Vec<Probe> {
    let mut out = Vec::new();
    for program in ["npx", "uvx", "node", "python3"] {
        out.push(match shell_path::find(program).await {
            Some(path) => Probe::yes(program, path.display().to_string()),
            None => Probe::no(program, "not found on the login PATH"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_kind_is_reported_from_the_environment() {
        let p = display_from(None, None, None);
        assert!(!p.available && p.detail.contains("headless"), "{p:?}");

        let p = display_from(None, Some(":4242".into()), None);
        assert!(!p.available && p.detail.contains("/tmp/.X11-unix/X4242"), "{p:?}");

        let p = display_from(Some("wayland-perch-test".into()), None, Some("/nonexistent".into()));
        assert!(
            !p.available && p.detail.contains("Wayland") || p.detail.contains("WAYLAND_DISPLAY"),
            "{p:?}"
        );

        let p = display_from(None, Some("otherhost:0".into()), None);
        assert!(p.available && p.detail.contains("remote"), "{p:?}");
    }

    #[test]
    fn x11_display_names_map_to_sockets() {
        assert_eq!(x11_socket(":99"), Some(PathBuf::from("/tmp/.X11-unix/X99")));
        assert_eq!(x11_socket(":0.1"), Some(PathBuf::from("/tmp/.X11-unix/X0")));
        assert_eq!(x11_socket("host:0"), None);
    }

    #[tokio::test]
    async fn ollama_probe_says_not_running_quickly_when_nothing_listens() {
        // Bind then drop a listener to get a port nobody listens on.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let p = ollama(&format!("http://127.0.0.1:{port}")).await;
        assert!(!p.available);
        assert!(p.detail.contains("ollama serve"), "{p:?}");
    }
}
