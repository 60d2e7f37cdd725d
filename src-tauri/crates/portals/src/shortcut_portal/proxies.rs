//! Client proxies of the portal interfaces Perch uses, as documented in
//! <https://flatpak.github.io/xdg-desktop-portal/docs/> (GlobalShortcuts; the Request and Session interfaces are `crate::portal`'s).

use std::collections::HashMap;

use zbus::proxy;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};

/// The body of `Activated` and `Deactivated`, which share it: the session handle, the
/// shortcut's id, a timestamp and options. They are received by name (`KEY_SIGNALS`).
pub type KeySignal = (OwnedObjectPath, String, u64, HashMap<String, OwnedValue>);
pub const KEY_SIGNALS: [&str; 2] = ["Activated", "Deactivated"];

/// A shortcut as sent to `BindShortcuts`: its id and `description` / `preferred_trigger`.
pub type OfferedShortcut = (String, HashMap<&'static str, Value<'static>>);

#[proxy(
    interface = "org.freedesktop.portal.GlobalShortcuts",
    default_service = "org.freedesktop.portal.Desktop",
    default_path = "/org/freedesktop/portal/desktop"
)]
pub trait GlobalShortcuts {
    fn create_session(&self, options: HashMap<&str, Value<'_>>) -> zbus::Result<OwnedObjectPath>;

    fn bind_shortcuts(
        &self,
        session_handle: &ObjectPath<'_>,
        shortcuts: Vec<OfferedShortcut>,
        parent_window: &str,
        options: HashMap<&str, Value<'_>>,
    ) -> zbus::Result<OwnedObjectPath>;

    fn list_shortcuts(
        &self,
        session_handle: &ObjectPath<'_>,
        options: HashMap<&str, Value<'_>>,
    ) -> zbus::Result<OwnedObjectPath>;

    #[zbus(signal)]
    fn shortcuts_changed(
        &self,
        session_handle: ObjectPath<'_>,
        shortcuts: Vec<(String, HashMap<String, OwnedValue>)>,
    ) -> zbus::Result<()>;

    #[zbus(property, name = "version")]
    fn version(&self) -> zbus::Result<u32>;
}
