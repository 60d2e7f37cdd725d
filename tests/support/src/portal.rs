//! A fake XDG desktop portal offering `org.freedesktop.portal.GlobalShortcuts`, on a real
//! private D-Bus daemon (no GNOME or KDE backend can run here). It speaks the documented
//! interface and keeps its rules:
//! - `version` property; `CreateSession`, `BindShortcuts`, `ListShortcuts` answer through a
//!   Request object at `/org/freedesktop/portal/desktop/request/SENDER/TOKEN`, SENDER being the
//!   caller's unique name without ':' and with '.' as '_', TOKEN its `handle_token`;
//! - the `Response` signal is emitted from a separate task once the method has returned, so it
//!   can reach the caller before the method's reply does (the race the documentation warns of);
//! - `CreateSession` requires a valid `session_handle_token` and puts the Session object at
//!   `/org/freedesktop/portal/desktop/session/SENDER/TOKEN`; `BindShortcuts` and
//!   `ListShortcuts` require such a session, open and belonging to the caller;
//! - `Activated`, `Deactivated`, `ShortcutsChanged` carry the session handle; a session's
//!   `Close` removes it.
//!
//! `remote_desktop.rs` serves the RemoteDesktop portal with the same bus, Request and token rules.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};
use zbus::{Connection, fdo, interface};

pub const ROOT: &str = "/org/freedesktop/portal/desktop";

/// A private `dbus-daemon --session`, stopped on drop.
pub struct PrivateBus {
    child: Child,
    pub address: String,
}

impl PrivateBus {
    pub fn start() -> Self {
        let mut child = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .stdout(Stdio::piped())
            // It warns that it cannot raise its file limit, which does not matter here.
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon (Debian package dbus) must be installed: scripts/setup-system.sh");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let address = line.trim().to_owned();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        Self { child, address }
    }

    pub async fn connect(&self) -> Connection {
        zbus::connection::Builder::address(self.address.as_str()).unwrap().build().await.unwrap()
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How the desktop's dialog ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialog {
    /// The user accepts; the trigger is `assign`'s if set, else the preferred one.
    #[default]
    Accept,
    /// Response 0 with an empty `shortcuts` list: KDE Plasma 5.27's answer, which binds nothing.
    AssignNone,
    /// Response 0 listing only these ids; the others are not bound.
    AssignOnly(&'static [&'static str]),
    /// Response 1.
    Cancel,
    /// Response 2.
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub id: String,
    pub description: String,
    pub preferred_trigger: String,
    pub trigger_description: String,
}

#[derive(Debug, Default)]
pub struct Session {
    pub owner: String,
    pub shortcuts: Vec<Bound>,
    pub closed: bool,
}

#[derive(Debug, Default)]
pub struct State {
    pub version: u32,
    pub dialog: Dialog,
    /// What the "user" picks in the dialog instead of the preferred trigger.
    pub assign: Option<String>,
    /// By session handle.
    pub sessions: HashMap<String, Session>,
}

/// A connection to `bus` owning the portal's well-known name, serving `portal` at its path.
pub async fn serve(bus: &PrivateBus, portal: impl zbus::object_server::Interface) -> Connection {
    zbus::connection::Builder::address(bus.address.as_str())
        .unwrap()
        .name("org.freedesktop.portal.Desktop")
        .unwrap()
        .serve_at(ROOT, portal)
        .unwrap()
        .build()
        .await
        .unwrap()
}

/// The portal, serving until dropped.
pub struct FakePortal {
    conn: Connection,
    pub state: Arc<Mutex<State>>,
}

impl FakePortal {
    pub async fn start(bus: &PrivateBus, version: u32, dialog: Dialog) -> Self {
        let state = Arc::new(Mutex::new(State { version, dialog, ..State::default() }));
        let conn = serve(bus, GlobalShortcuts { state: state.clone() }).await;
        Self { conn, state }
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// Every shortcut bound, with its session.
    pub fn bound(&self) -> Vec<(String, Bound)> {
        let state = self.state();
        let mut out: Vec<(String, Bound)> = state
            .sessions
            .iter()
            .flat_map(|(path, s)| s.shortcuts.iter().map(move |b| (path.clone(), b.clone())))
            .collect();
        out.sort_by(|a, b| a.1.id.cmp(&b.1.id));
        out
    }

    pub fn is_closed(&self, session: &str) -> bool {
        self.state().sessions.get(session).is_some_and(|s| s.closed)
    }

    /// The user presses (`true`) or releases a bound shortcut: `Activated` or `Deactivated`,
    /// which share their arguments (session handle, shortcut id, timestamp, options).
    pub async fn key(&self, session: &str, id: &str, pressed: bool) {
        let name = if pressed { "Activated" } else { "Deactivated" };
        let body = (ObjectPath::try_from(session).unwrap(), id, 1000u64, HashMap::<&str, Value<'_>>::new());
        self.conn
            .emit_signal(None::<&str>, ROOT, "org.freedesktop.portal.GlobalShortcuts", name, &body)
            .await
            .unwrap();
    }

    /// The user gives a shortcut another trigger in the desktop's settings.
    pub async fn change(&self, session: &str, id: &str, trigger: &str) {
        let list = {
            let mut state = self.state();
            let s = state.sessions.get_mut(session).unwrap();
            for b in s.shortcuts.iter_mut().filter(|b| b.id == id) {
                b.trigger_description = trigger.to_owned();
            }
            described(&s.shortcuts)
        };
        let emitter = self.emitter().await;
        GlobalShortcuts::shortcuts_changed(&emitter, ObjectPath::try_from(session).unwrap(), list)
            .await
            .unwrap();
    }

    async fn emitter(&self) -> SignalEmitter<'static> {
        SignalEmitter::new(&self.conn, ROOT).unwrap().into_owned()
    }
}

pub fn escaped_sender(header: &Header<'_>) -> fdo::Result<(String, String)> {
    let sender = header.sender().ok_or_else(|| fdo::Error::Failed("no sender".into()))?.to_string();
    let escaped = sender.trim_start_matches(':').replace('.', "_");
    Ok((sender, escaped))
}

/// A token as an object path element must be: non-empty, letters, digits and '_'.
pub fn token(options: &HashMap<String, OwnedValue>, key: &str) -> fdo::Result<Option<String>> {
    let Some(value) = options.get(key) else { return Ok(None) };
    let text =
        <&str>::try_from(&**value).map_err(|_| fdo::Error::InvalidArgs(format!("{key} is not a string")))?;
    if text.is_empty() || !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(fdo::Error::InvalidArgs(format!("{key} {text:?} is not a valid object path element")));
    }
    Ok(Some(text.to_owned()))
}

fn described(shortcuts: &[Bound]) -> Vec<(String, HashMap<String, OwnedValue>)> {
    shortcuts
        .iter()
        .map(|b| {
            let props = HashMap::from([
                (
                    "description".to_owned(),
                    OwnedValue::try_from(Value::from(b.description.as_str())).unwrap(),
                ),
                (
                    "trigger_description".to_owned(),
                    OwnedValue::try_from(Value::from(b.trigger_description.as_str())).unwrap(),
                ),
            ]);
            (b.id.clone(), props)
        })
        .collect()
}

/// Puts a Request object at the documented path and returns it; `answer` is sent as its
/// Response once this method has returned.
pub async fn respond(
    conn: &Connection,
    header: &Header<'_>,
    options: &HashMap<String, OwnedValue>,
    answer: (u32, HashMap<String, OwnedValue>),
) -> fdo::Result<OwnedObjectPath> {
    let (sender, escaped) = escaped_sender(header)?;
    let token = token(options, "handle_token")?.unwrap_or_else(|| "portal_chosen".into());
    let path = OwnedObjectPath::try_from(format!("{ROOT}/request/{escaped}/{token}")).unwrap();
    if !conn.object_server().at(&path, Request).await? {
        return Err(fdo::Error::InvalidArgs(format!("a request {path} is already pending")));
    }
    let (conn, reply_path) = (conn.clone(), path.clone());
    conn.clone()
        .executor()
        .spawn(
            async move {
                let _ = conn
                    .emit_signal(
                        Some(sender.as_str()),
                        &reply_path,
                        "org.freedesktop.portal.Request",
                        "Response",
                        &answer,
                    )
                    .await;
                let _ = conn.object_server().remove::<Request, _>(&reply_path).await;
            },
            "fake portal response",
        )
        .detach();
    Ok(path)
}

struct GlobalShortcuts {
    state: Arc<Mutex<State>>,
}

impl GlobalShortcuts {
    /// A Request answered with `answer` (see [`respond`]).
    async fn request(
        &self,
        conn: &Connection,
        header: &Header<'_>,
        options: &HashMap<String, OwnedValue>,
        answer: (u32, HashMap<String, OwnedValue>),
    ) -> fdo::Result<OwnedObjectPath> {
        respond(conn, header, options, answer).await
    }

    /// The caller's open session at `handle`, or the portal's refusal.
    fn check_session(&self, header: &Header<'_>, handle: &ObjectPath<'_>) -> fdo::Result<()> {
        let (sender, _) = escaped_sender(header)?;
        let state = self.state.lock().unwrap();
        match state.sessions.get(handle.as_str()) {
            Some(s) if s.owner == sender && !s.closed => Ok(()),
            Some(s) if s.owner != sender => Err(fdo::Error::AccessDenied("not your session".into())),
            _ => Err(fdo::Error::InvalidArgs(format!("no open session {handle}: call CreateSession first"))),
        }
    }
}

pub fn value(v: impl Into<Value<'static>>) -> OwnedValue {
    OwnedValue::try_from(v.into()).unwrap()
}

#[interface(name = "org.freedesktop.portal.GlobalShortcuts")]
impl GlobalShortcuts {
    #[zbus(property, name = "version")]
    fn version(&self) -> u32 {
        self.state.lock().unwrap().version
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
        let handle = format!("{ROOT}/session/{escaped}/{session_token}");
        let object = SessionObject::new(self.state.clone(), handle.clone(), |s, h| s.sessions.get_mut(h));
        if !conn.object_server().at(handle.as_str(), object).await? {
            return Err(fdo::Error::InvalidArgs(format!("session {handle} exists")));
        }
        self.state
            .lock()
            .unwrap()
            .sessions
            .insert(handle.clone(), Session { owner: sender, ..Session::default() });
        // Documented as a string holding the session's object path.
        let results = HashMap::from([("session_handle".to_owned(), value(handle))]);
        self.request(conn, &header, &options, (0, results)).await
    }

    async fn bind_shortcuts(
        &self,
        session_handle: ObjectPath<'_>,
        shortcuts: Vec<(String, HashMap<String, OwnedValue>)>,
        _parent_window: String,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> fdo::Result<OwnedObjectPath> {
        self.check_session(&header, &session_handle)?;
        let text = |props: &HashMap<String, OwnedValue>, key: &str| {
            props.get(key).and_then(|v| <&str>::try_from(&**v).ok()).unwrap_or_default().to_owned()
        };
        let answer = {
            let mut state = self.state.lock().unwrap();
            let (dialog, assign) = (state.dialog, state.assign.clone());
            let session = state.sessions.get_mut(session_handle.as_str()).unwrap();
            match dialog {
                Dialog::Cancel => (1, HashMap::new()),
                Dialog::Fail => (2, HashMap::new()),
                Dialog::Accept | Dialog::AssignNone | Dialog::AssignOnly(_) => {
                    let kept = |id: &str| match dialog {
                        Dialog::AssignNone => false,
                        Dialog::AssignOnly(ids) => ids.contains(&id),
                        _ => true,
                    };
                    session.shortcuts = shortcuts
                        .iter()
                        .filter(|(id, _)| kept(id))
                        .map(|(id, props)| Bound {
                            id: id.clone(),
                            description: text(props, "description"),
                            preferred_trigger: text(props, "preferred_trigger"),
                            trigger_description: assign
                                .clone()
                                .unwrap_or_else(|| text(props, "preferred_trigger")),
                        })
                        .collect();
                    (0, HashMap::from([("shortcuts".to_owned(), value(described(&session.shortcuts)))]))
                }
            }
        };
        self.request(conn, &header, &options, answer).await
    }

    async fn list_shortcuts(
        &self,
        session_handle: ObjectPath<'_>,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> fdo::Result<OwnedObjectPath> {
        self.check_session(&header, &session_handle)?;
        let list = described(&self.state.lock().unwrap().sessions[session_handle.as_str()].shortcuts);
        self.request(conn, &header, &options, (0, HashMap::from([("shortcuts".to_owned(), value(list))])))
            .await
    }

    #[zbus(signal)]
    async fn shortcuts_changed(
        emitter: &SignalEmitter<'_>,
        session_handle: ObjectPath<'_>,
        shortcuts: Vec<(String, HashMap<String, OwnedValue>)>,
    ) -> zbus::Result<()>;
}

pub struct Request;

#[interface(name = "org.freedesktop.portal.Request")]
impl Request {
    async fn close(&self) {}
}

/// What a fake portal keeps of a session: who opened it, and whether it was closed.
pub trait OwnedSession {
    fn owner(&self) -> &str;
    fn mark_closed(&mut self);
}

impl OwnedSession for Session {
    fn owner(&self) -> &str {
        &self.owner
    }
    fn mark_closed(&mut self) {
        self.closed = true;
    }
}

/// A portal session's object, for every fake portal: `Close` is refused to any caller but the
/// session's owner, marks the session closed in the fake's state, and removes the object.
pub struct SessionObject {
    handle: String,
    close: Box<Closer>,
}

/// Given the caller's unique name, checks it owns the session and marks the session closed.
type Closer = dyn Fn(&str) -> fdo::Result<()> + Send + Sync;

impl SessionObject {
    /// The object of session `handle`, which `find` looks up in the fake's `state`.
    pub fn new<S: Send + 'static, E: OwnedSession + 'static>(
        state: Arc<Mutex<S>>,
        handle: String,
        find: for<'a> fn(&'a mut S, &str) -> Option<&'a mut E>,
    ) -> Self {
        let closing = handle.clone();
        let close = move |sender: &str| {
            let mut state = state.lock().unwrap();
            let session = find(&mut state, &closing).unwrap();
            if session.owner() != sender {
                return Err(fdo::Error::AccessDenied("not your session".into()));
            }
            session.mark_closed();
            Ok(())
        };
        Self { handle, close: Box::new(close) }
    }
}

#[interface(name = "org.freedesktop.portal.Session")]
impl SessionObject {
    async fn close(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> fdo::Result<()> {
        let (sender, _) = escaped_sender(&header)?;
        (self.close)(&sender)?;
        // Removed by another task: the object is in use until this call returns.
        let (server_conn, handle) = (conn.clone(), self.handle.clone());
        conn.executor()
            .spawn(
                async move {
                    let _ = server_conn.object_server().remove::<SessionObject, _>(handle.as_str()).await;
                },
                "fake portal session close",
            )
            .detach();
        Ok(())
    }

    #[zbus(property, name = "version")]
    fn version(&self) -> u32 {
        1
    }
}
