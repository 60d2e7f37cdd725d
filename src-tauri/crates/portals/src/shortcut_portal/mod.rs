//! Global shortcuts through the XDG desktop portal (`org.freedesktop.portal.GlobalShortcuts`),
//! the way an application gets keys for the whole desktop on Wayland, where X11 key grabs reach
//! only XWayland windows.
//!
//! One [`PortalShortcuts`] is one portal session: `CreateSession`, then `BindShortcuts` (the
//! desktop may show a dialog, and may assign another trigger than the one asked for), then the
//! session's `Activated` / `Deactivated` signals become [`ShortcutEvent`]s. Dropping it closes
//! the session. Both calls answer through a Request object's `Response` signal; see
//! `crate::portal::request` for how that is awaited without a race.

mod plan;
mod proxies;
pub mod request;
mod trigger;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use zbus::Connection;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};

use crate::portal::{CallError, SessionProxy};
pub use plan::{Batch, SessionPlan, Standing};
use proxies::GlobalShortcutsProxy;
pub use trigger::{NoTrigger, portal_trigger};

/// The oldest interface version with everything used here (`BindShortcuts` and the signals).
pub const MIN_VERSION: u32 = 1;

/// What went wrong, in words a user can act on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PortalError {
    #[error("there is no D-Bus session bus, so the desktop portal cannot be reached ({0})")]
    NoBus(String),
    #[error(
        "this desktop does not offer the GlobalShortcuts portal, so Perch cannot bind keys for the whole desktop itself"
    )]
    NoPortal(String),
    #[error(
        "this desktop's GlobalShortcuts portal is version {found}; Perch needs version {MIN_VERSION} or later: update xdg-desktop-portal and your desktop's portal backend"
    )]
    OldVersion { found: u32 },
    #[error("{accelerator:?} cannot be offered to the desktop: {reason}")]
    Trigger { accelerator: String, reason: NoTrigger },
    #[error(
        "the desktop's shortcut dialog was cancelled, so {0} is not bound; set the shortcut again in Settings to be asked again"
    )]
    Cancelled(String),
    #[error(
        "the desktop did not assign a key to {}: give Perch's shortcuts a key in your desktop's shortcut settings (KDE: System Settings -> Shortcuts -> Perch)",
        .0.iter().map(|id| id.replace('_', " ")).collect::<Vec<_>>().join(", ")
    )]
    NotAssigned(Vec<String>),
    #[error("the desktop refused to bind {0}; check its keyboard settings")]
    Refused(String),
    #[error("the desktop portal answered in a way Perch does not understand: {0}")]
    Protocol(String),
    #[error("the desktop portal failed: {0}")]
    Bus(#[from] zbus::Error),
}

impl From<CallError> for PortalError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::NoBus(m) => Self::NoBus(m),
            CallError::NoPortal(m) => Self::NoPortal(m),
            CallError::Protocol(m) => Self::Protocol(m),
            CallError::Bus(e) => Self::Bus(e),
        }
    }
}

/// A shortcut to ask the desktop for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortcutRequest {
    /// A stable id ("screenshot"); the desktop remembers the user's choice under it.
    pub id: String,
    /// What the shortcut does, shown in the desktop's dialog and settings.
    pub description: String,
    /// Perch's accelerator form ("Alt+Period"), sent as the preferred trigger.
    pub accelerator: String,
}

/// What the desktop bound: its own description of the trigger, which may differ from the one
/// asked for (the user may pick another in the dialog), or None if it gave none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assigned {
    pub id: String,
    pub trigger: Option<String>,
}

/// What the session hears.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShortcutEvent {
    Pressed(String),
    Released(String),
    /// The user changed the triggers in the desktop's settings.
    Changed(Vec<Assigned>),
    /// The desktop closed the session; the shortcuts no longer work.
    Closed,
}

/// A bound portal session. Dropping it closes the session.
pub struct PortalShortcuts {
    conn: Connection,
    session: OwnedObjectPath,
    assigned: Arc<Mutex<Vec<Assigned>>>,
    /// Asked for but left out of the desktop's answer, so not bound.
    unassigned: Vec<String>,
    listener: Option<tokio::task::JoinHandle<()>>,
    closed: bool,
}

/// The session bus, or why there is none.
pub async fn session_bus() -> Result<Connection, PortalError> {
    Connection::session().await.map_err(|e| PortalError::NoBus(e.to_string()))
}

/// The portal's interface version, or why it cannot be used.
pub async fn version(conn: &Connection) -> Result<u32, PortalError> {
    let proxy = GlobalShortcutsProxy::builder(conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await?;
    let found = proxy.version().await.map_err(|e| PortalError::NoPortal(short(&e)))?;
    if found < MIN_VERSION { Err(PortalError::OldVersion { found }) } else { Ok(found) }
}

impl PortalShortcuts {
    /// [`bind`](Self::bind) on the user's session bus.
    pub async fn bind_on_session_bus(
        shortcuts: &[ShortcutRequest],
        on_event: impl Fn(ShortcutEvent) + Send + Sync + 'static,
    ) -> Result<Self, PortalError> {
        Self::bind(&session_bus().await?, shortcuts, on_event).await
    }

    /// Opens a session and binds `shortcuts` in it; `on_event` hears their presses and releases
    /// (on a tokio task) until the session is dropped. Waits for the desktop's answer, which may
    /// take as long as the user spends in its dialog. A shortcut the answer leaves out is not
    /// bound: see [`unassigned`](Self::unassigned); when it leaves out all of them, the error is
    /// [`PortalError::NotAssigned`] and no session stays open.
    pub async fn bind(
        conn: &Connection,
        shortcuts: &[ShortcutRequest],
        on_event: impl Fn(ShortcutEvent) + Send + Sync + 'static,
    ) -> Result<Self, PortalError> {
        let mut offered = Vec::with_capacity(shortcuts.len());
        for s in shortcuts {
            let trigger = portal_trigger(&s.accelerator)
                .map_err(|reason| PortalError::Trigger { accelerator: s.accelerator.clone(), reason })?;
            offered.push((s.id.clone(), s.description.clone(), trigger));
        }
        version(conn).await?;
        let portal = GlobalShortcutsProxy::new(conn).await?;
        let what = names(shortcuts);

        let session_token = request::token();
        let created = request::call(conn, &what, |handle_token| {
            let options = HashMap::from([
                ("handle_token", Value::from(handle_token)),
                ("session_handle_token", Value::from(session_token.clone())),
            ]);
            let portal = portal.clone();
            async move { portal.create_session(options).await }
        })
        .await?;
        let session = session_handle(&created)?;
        let mut this = Self {
            conn: conn.clone(),
            session: session.clone(),
            assigned: Arc::default(),
            unassigned: Vec::new(),
            listener: None,
            closed: false,
        };
        // Subscribed before binding, so a press right after the dialog is not missed.
        let signals = match Signals::subscribe(conn, &portal, &session).await {
            Ok(signals) => signals,
            Err(e) => {
                this.close().await;
                return Err(e);
            }
        };
        let bound = request::call(conn, &what, |handle_token| {
            let options = HashMap::from([("handle_token", Value::from(handle_token))]);
            let list: Vec<(String, HashMap<&'static str, Value<'static>>)> = offered
                .iter()
                .map(|(id, description, trigger)| {
                    let props = HashMap::from([
                        ("description", Value::from(description.clone())),
                        ("preferred_trigger", Value::from(trigger.clone())),
                    ]);
                    (id.clone(), props)
                })
                .collect();
            let (portal, session) = (portal.clone(), session.clone());
            async move { portal.bind_shortcuts(&session, list, "", options).await }
        })
        .await
        .and_then(|results| assigned_from(results.get("shortcuts")));
        // Success with shortcuts left out of the answer binds those not: KDE Plasma 5.27
        // answers with an empty list and binds nothing.
        let bound = bound.and_then(|assigned| {
            let unassigned: Vec<String> = shortcuts
                .iter()
                .filter(|s| !assigned.iter().any(|a| a.id == s.id))
                .map(|s| s.id.clone())
                .collect();
            if !unassigned.is_empty() && unassigned.len() == shortcuts.len() {
                Err(PortalError::NotAssigned(unassigned))
            } else {
                Ok((assigned, unassigned))
            }
        });
        match bound {
            Ok((assigned, unassigned)) => {
                *lock(&this.assigned) = assigned;
                this.unassigned = unassigned;
                let task = signals.forward(session, this.assigned.clone(), Arc::new(on_event));
                this.listener = Some(tokio::spawn(task));
                Ok(this)
            }
            Err(e) => {
                this.close().await;
                Err(e)
            }
        }
    }

    /// What the desktop assigned to each shortcut, kept current by `ShortcutsChanged`.
    pub fn assigned(&self) -> Vec<Assigned> {
        lock(&self.assigned).clone()
    }

    /// The ids asked for that the desktop's answer left out: they are not bound.
    pub fn unassigned(&self) -> &[String] {
        &self.unassigned
    }

    /// The session's object path on the bus.
    pub fn session(&self) -> &ObjectPath<'static> {
        &self.session
    }

    /// Closes the session now and waits for the desktop to hear it.
    pub async fn close(mut self) {
        self.close_session().await;
    }

    /// What the desktop has bound in this session now (`ListShortcuts`).
    pub async fn list(&self) -> Result<Vec<Assigned>, PortalError> {
        let portal = GlobalShortcutsProxy::new(&self.conn).await?;
        let what = lock(&self.assigned).iter().map(|a| a.id.replace('_', " ")).collect::<Vec<_>>().join(", ");
        let results = request::call(&self.conn, &what, |handle_token| {
            let options = HashMap::from([("handle_token", Value::from(handle_token))]);
            let session = self.session.clone();
            async move { portal.list_shortcuts(&session, options).await }
        })
        .await?;
        assigned_from(results.get("shortcuts"))
    }

    /// Stops hearing the session's signals; false if that was done already.
    fn stop(&mut self) -> bool {
        if let Some(listener) = self.listener.take() {
            listener.abort();
        }
        !std::mem::replace(&mut self.closed, true)
    }

    async fn close_session(&mut self) {
        if !self.stop() {
            return;
        }
        if let Err(e) = request::close_session(&self.conn, self.session.clone()).await {
            tracing::debug!(error = %e, "closing the shortcut portal session");
        }
    }
}

impl Drop for PortalShortcuts {
    fn drop(&mut self) {
        if !self.stop() {
            return;
        }
        request::close_session_soon(&self.conn, self.session.clone());
    }
}

/// The session's signal streams, subscribed before `BindShortcuts` is called.
struct Signals {
    activated: zbus::proxy::SignalStream<'static>,
    deactivated: zbus::proxy::SignalStream<'static>,
    changed: proxies::ShortcutsChangedStream,
    closed: crate::portal::ClosedStream,
}

impl Signals {
    async fn subscribe(
        conn: &Connection,
        portal: &GlobalShortcutsProxy<'static>,
        session: &OwnedObjectPath,
    ) -> Result<Self, PortalError> {
        let session_proxy = SessionProxy::builder(conn).path(session.clone())?.build().await?;
        let [activated, deactivated] = proxies::KEY_SIGNALS;
        Ok(Self {
            activated: portal.inner().receive_signal(activated).await?,
            deactivated: portal.inner().receive_signal(deactivated).await?,
            changed: portal.receive_shortcuts_changed().await?,
            closed: session_proxy.receive_closed().await?,
        })
    }

    /// Turns this session's signals into events until the session closes. The portal emits
    /// each signal to every session of the connection, so the session handle is checked.
    async fn forward(
        mut self,
        session: OwnedObjectPath,
        assigned: Arc<Mutex<Vec<Assigned>>>,
        on_event: Arc<dyn Fn(ShortcutEvent) + Send + Sync>,
    ) {
        let ours = |handle: &ObjectPath<'_>| handle.as_str() == session.as_str();
        let key = |message: zbus::Message| {
            let (handle, id, _, _) = message.body().deserialize::<proxies::KeySignal>().ok()?;
            ours(&handle).then_some(id)
        };
        loop {
            let event = tokio::select! {
                Some(m) = self.activated.next() => match key(m) {
                    Some(id) => ShortcutEvent::Pressed(id),
                    None => continue,
                },
                Some(m) = self.deactivated.next() => match key(m) {
                    Some(id) => ShortcutEvent::Released(id),
                    None => continue,
                },
                Some(s) = self.changed.next() => match s.args() {
                    Ok(a) if ours(a.session_handle()) => {
                        let Ok(list) = parse_shortcuts(a.shortcuts()) else { continue };
                        tracing::info!(?list, "the desktop changed Perch's shortcuts");
                        lock(&assigned).clone_from(&list);
                        ShortcutEvent::Changed(list)
                    }
                    _ => continue,
                },
                Some(_) = self.closed.next() => {
                    on_event(ShortcutEvent::Closed);
                    return;
                }
                else => return,
            };
            on_event(event);
        }
    }
}

/// The session handle from CreateSession's results: a string holding an object path in the
/// documented form, an object path in some implementations.
fn session_handle(results: &HashMap<String, OwnedValue>) -> Result<OwnedObjectPath, PortalError> {
    let value = results
        .get("session_handle")
        .ok_or_else(|| PortalError::Protocol("CreateSession gave no session_handle".into()))?;
    let path = match &**value {
        Value::Str(s) => ObjectPath::try_from(s.as_str().to_owned()),
        Value::ObjectPath(p) => Ok(p.to_owned()),
        other => {
            return Err(PortalError::Protocol(format!("session_handle is a {}", other.value_signature())));
        }
    };
    path.map(OwnedObjectPath::from).map_err(|e| PortalError::Protocol(format!("session_handle: {e}")))
}

/// The `shortcuts` result of BindShortcuts (or ListShortcuts): `a(sa{sv})`.
fn assigned_from(value: Option<&OwnedValue>) -> Result<Vec<Assigned>, PortalError> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let list: Vec<(String, HashMap<String, OwnedValue>)> = value
        .try_clone()
        .map_err(|e| PortalError::Protocol(e.to_string()))?
        .try_into()
        .map_err(|e: zbus::zvariant::Error| PortalError::Protocol(format!("shortcuts: {e}")))?;
    parse_shortcuts(&list)
}

fn parse_shortcuts(list: &[(String, HashMap<String, OwnedValue>)]) -> Result<Vec<Assigned>, PortalError> {
    Ok(list
        .iter()
        .map(|(id, props)| Assigned {
            id: id.clone(),
            trigger: props
                .get("trigger_description")
                .and_then(|v| <&str>::try_from(&**v).ok())
                .map(str::to_owned),
        })
        .collect())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn names(shortcuts: &[ShortcutRequest]) -> String {
    shortcuts.iter().map(|s| s.id.replace('_', " ")).collect::<Vec<_>>().join(", ")
}

/// The first line of a D-Bus error, without the error name's noise.
fn short(e: &zbus::Error) -> String {
    match e {
        zbus::Error::MethodError(name, Some(text), _) => format!("{}: {text}", name.as_str()),
        e => e.to_string(),
    }
}
