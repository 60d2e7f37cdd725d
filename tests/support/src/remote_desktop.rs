//! A fake `org.freedesktop.portal.RemoteDesktop` on the private bus of `portal.rs`, keeping the
//! documented rules (version 2):
//! - `AvailableDeviceTypes` (1 keyboard, 2 pointer, 4 touchscreen) and `version` properties;
//! - `CreateSession`, `SelectDevices`, `Start` answer through Request objects (`portal::respond`,
//!   Response after the method returns); `CreateSession` requires a `session_handle_token` and
//!   returns `session_handle` as an object path, as documented;
//! - `SelectDevices` needs the caller's open, unstarted session and types the portal has;
//!   `Start` needs devices selected. The "dialog" is shown unless a valid restore token was
//!   given; each token works once, and a new one is given when `persist_mode` is not 0;
//! - `NotifyKeyboardKeysym` needs a started session granted the keyboard, and is recorded.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use zbus::message::Header;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue};
use zbus::{Connection, fdo, interface};

use crate::portal::{
    Dialog, OwnedSession, PrivateBus, ROOT, SessionObject, escaped_sender, respond, serve, token, value,
};

pub const KEYBOARD: u32 = 1;
pub const POINTER: u32 = 2;

/// What `SelectDevices` was asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selected {
    pub types: Option<u32>,
    pub persist_mode: Option<u32>,
    pub restore_token: Option<String>,
}

#[derive(Debug, Default)]
pub struct Session {
    pub owner: String,
    pub selected: Option<Selected>,
    pub started: bool,
    pub devices: u32,
    pub closed: bool,
}

impl OwnedSession for Session {
    fn owner(&self) -> &str {
        &self.owner
    }
    fn mark_closed(&mut self) {
        self.closed = true;
    }
}

#[derive(Debug, Default)]
pub struct State {
    pub available: u32,
    pub dialog: Dialog,
    /// How many times the consent dialog was shown.
    pub dialogs: usize,
    /// Restore tokens given and not used yet.
    pub valid_tokens: Vec<String>,
    pub tokens_given: usize,
    /// By session handle.
    pub sessions: HashMap<String, Session>,
    /// Every `NotifyKeyboardKeysym`: session handle, keysym, state.
    pub keys: Vec<(String, i32, u32)>,
}

/// The portal, serving until dropped.
pub struct FakeRemoteDesktop {
    conn: Connection,
    pub state: Arc<Mutex<State>>,
}

impl FakeRemoteDesktop {
    pub async fn start(bus: &PrivateBus, available: u32, dialog: Dialog) -> Self {
        let state = Arc::new(Mutex::new(State { available, dialog, ..State::default() }));
        let conn = serve(bus, RemoteDesktop { state: state.clone() }).await;
        Self { conn, state }
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// Every session's `SelectDevices` options, in no particular order.
    pub fn selected(&self) -> Vec<Selected> {
        self.state().sessions.values().filter_map(|s| s.selected.clone()).collect()
    }

    /// The keysyms sent, with their states.
    pub fn keys(&self) -> Vec<(i32, u32)> {
        self.state().keys.iter().map(|(_, k, s)| (*k, *s)).collect()
    }

    pub fn is_closed(&self, session: &str) -> bool {
        self.state().sessions.get(session).is_some_and(|s| s.closed)
    }

    /// The desktop ends a session (the user stops sharing from the desktop's indicator).
    pub async fn end(&self, session: &str) {
        self.state().sessions.get_mut(session).unwrap().closed = true;
        let _ = self.conn.object_server().remove::<SessionObject, _>(session).await;
    }
}

struct RemoteDesktop {
    state: Arc<Mutex<State>>,
}

impl RemoteDesktop {
    /// The caller's open session at `handle`.
    fn with_session<T>(
        &self,
        header: &Header<'_>,
        handle: &ObjectPath<'_>,
        f: impl FnOnce(&mut State, &str) -> fdo::Result<T>,
    ) -> fdo::Result<T> {
        let (sender, _) = escaped_sender(header)?;
        let mut state = self.state.lock().unwrap();
        match state.sessions.get(handle.as_str()) {
            Some(s) if s.owner != sender => return Err(fdo::Error::AccessDenied("not your session".into())),
            Some(s) if !s.closed => {}
            _ => return Err(fdo::Error::InvalidArgs(format!("no open session {handle}"))),
        }
        f(&mut state, handle.as_str())
    }
}

fn number(options: &HashMap<String, OwnedValue>, key: &str) -> fdo::Result<Option<u32>> {
    options
        .get(key)
        .map(|v| u32::try_from(&**v).map_err(|_| fdo::Error::InvalidArgs(format!("{key} is not a u32"))))
        .transpose()
}

#[interface(name = "org.freedesktop.portal.RemoteDesktop")]
impl RemoteDesktop {
    #[zbus(property, name = "AvailableDeviceTypes")]
    fn available_device_types(&self) -> u32 {
        self.state.lock().unwrap().available
    }

    #[zbus(property, name = "version")]
    fn version(&self) -> u32 {
        2
    }

    async fn create_session(
        &self,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> fdo::Result<OwnedObjectPath> {
        let session_token = token(&options, "session_handle_token")?
            .ok_or_else(|| fdo::Error::InvalidArgs("session_handle_token is required".into()))?;
        let (sender, escaped) = escaped_sender(&header)?;
        let handle = OwnedObjectPath::try_from(format!("{ROOT}/session/{escaped}/{session_token}")).unwrap();
        let object = SessionObject::new(self.state.clone(), handle.to_string(), |s, h| s.sessions.get_mut(h));
        if !conn.object_server().at(&handle, object).await? {
            return Err(fdo::Error::InvalidArgs(format!("session {handle} exists")));
        }
        self.state
            .lock()
            .unwrap()
            .sessions
            .insert(handle.to_string(), Session { owner: sender, ..Session::default() });
        let results = HashMap::from([("session_handle".to_owned(), value(handle))]);
        respond(conn, &header, &options, (0, results)).await
    }

    async fn select_devices(
        &self,
        session_handle: ObjectPath<'_>,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> fdo::Result<OwnedObjectPath> {
        let selected = Selected {
            types: number(&options, "types")?,
            persist_mode: number(&options, "persist_mode")?,
            restore_token: options
                .get("restore_token")
                .and_then(|v| <&str>::try_from(&**v).ok())
                .map(str::to_owned),
        };
        self.with_session(&header, &session_handle, |state, handle| {
            if selected.types.is_some_and(|t| t & !state.available != 0) {
                return Err(fdo::Error::InvalidArgs("a device type the portal does not have".into()));
            }
            let session = state.sessions.get_mut(handle).unwrap();
            if session.started {
                return Err(fdo::Error::Failed("the session is already started".into()));
            }
            session.selected = Some(selected);
            Ok(())
        })?;
        respond(conn, &header, &options, (0, HashMap::new())).await
    }

    async fn start(
        &self,
        session_handle: ObjectPath<'_>,
        _parent_window: String,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> fdo::Result<OwnedObjectPath> {
        let answer = self.with_session(&header, &session_handle, |state, handle| {
            let selected = state.sessions[handle]
                .selected
                .clone()
                .ok_or_else(|| fdo::Error::Failed("SelectDevices was not called".into()))?;
            let restored = selected.restore_token.as_ref().and_then(|t| {
                let at = state.valid_tokens.iter().position(|v| v == t)?;
                Some(state.valid_tokens.remove(at))
            });
            if restored.is_none() {
                state.dialogs += 1;
                match state.dialog {
                    Dialog::Cancel => return Ok((1, HashMap::new())),
                    Dialog::Fail => return Ok((2, HashMap::new())),
                    // The shortcut answers mean nothing to RemoteDesktop: the user accepts.
                    Dialog::Accept | Dialog::AssignNone | Dialog::AssignOnly(_) => {}
                }
            }
            let devices = selected.types.unwrap_or(state.available);
            let mut results = HashMap::from([("devices".to_owned(), value(devices))]);
            if selected.persist_mode.unwrap_or(0) != 0 {
                state.tokens_given += 1;
                let token = format!("restore-{}", state.tokens_given);
                state.valid_tokens.push(token.clone());
                results.insert("restore_token".to_owned(), value(token));
            }
            let session = state.sessions.get_mut(handle).unwrap();
            session.started = true;
            session.devices = devices;
            Ok((0, results))
        })?;
        respond(conn, &header, &options, answer).await
    }

    async fn notify_keyboard_keysym(
        &self,
        session_handle: ObjectPath<'_>,
        _options: HashMap<String, OwnedValue>,
        keysym: i32,
        key_state: u32,
        #[zbus(header)] header: Header<'_>,
    ) -> fdo::Result<()> {
        self.with_session(&header, &session_handle, |state, handle| {
            let session = &state.sessions[handle];
            if !session.started || session.devices & KEYBOARD == 0 {
                return Err(fdo::Error::AccessDenied("the keyboard was not granted".into()));
            }
            if key_state > 1 {
                return Err(fdo::Error::InvalidArgs(format!("key state {key_state}")));
            }
            state.keys.push((handle.to_owned(), keysym, key_state));
            Ok(())
        })
    }
}
