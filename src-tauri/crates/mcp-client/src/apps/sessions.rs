//! The app frames open now. Opening one mints two random values: the session (what the UI
//! names in each request) and a one-time page token (the frame's address, served once, then
//! gone, so nothing else can load the page or guess another app's). Each session belongs to one
//! server and one tool card; what its app asks is checked against both, and limited:
//! - at most [`MAX_CALLS_IN_FLIGHT`] tool calls at once and [`MAX_CALLS_PER_MINUTE`] a minute;
//! - after [`MAX_DENIALS_IN_A_ROW`] declined calls in a row, further calls are refused without
//!   asking (an app cannot nag);
//! - [`MAX_READS_PER_MINUTE`] resource reads and [`MAX_LOGS_PER_SECOND`] log lines;
//! - [`MAX_CONTEXT_UPDATES_PER_MINUTE`] changes to what the model is told, and all the apps of
//!   one conversation together [`MAX_CONTEXT_UPDATES_PER_TURN`] between two of its turns (each
//!   update is a write to the store, and what the model reads next is the sum of them).
//!
//! The flood of messages itself is stopped earlier, in the UI's bridge, before it costs an IPC.
//! (Over 500 lines with its tests; the sessions and their limits are about 350.)

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub const MAX_CALLS_IN_FLIGHT: usize = 4;
pub const MAX_CALLS_PER_MINUTE: usize = 30;
pub const MAX_DENIALS_IN_A_ROW: u32 = 3;
pub const MAX_READS_PER_MINUTE: usize = 60;
pub const MAX_LOGS_PER_SECOND: usize = 20;
/// An app changes what the model is told when its user does something; more than this is a
/// script, not a person.
pub const MAX_CONTEXT_UPDATES_PER_MINUTE: usize = 20;
/// What all the apps of one conversation may change between two of its turns.
pub const MAX_CONTEXT_UPDATES_PER_TURN: usize = 50;
/// A page not loaded within this is forgotten.
const PAGE_TTL: Duration = Duration::from_secs(60);

/// An app's request refused or failed, as the JSON-RPC error its app receives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    pub code: i32,
    pub message: String,
}

impl AppError {
    /// JSON-RPC's "invalid params".
    pub fn invalid(message: impl Into<String>) -> Self {
        Self { code: -32602, message: message.into() }
    }
    /// The server-defined range's first code, for refusals.
    pub fn refused(message: impl Into<String>) -> Self {
        Self { code: -32000, message: message.into() }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self { code: -32601, message: message.into() }
    }
}

/// Where an app lives: its server, and the tool card (answer, conversation) it is shown in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppPlace {
    pub server: String,
    /// The card's tool (whose interface this is).
    pub tool: String,
    pub conversation_id: String,
    pub message_id: i64,
    /// The card's tool call id.
    pub call_id: String,
    /// Where the card's call sits in its answer (the app's saved calls sit there too).
    pub round: u32,
    pub text_offset: u32,
    pub resource_uri: String,
}

/// A page waiting for its frame to load it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedPage {
    pub html: String,
    /// The `Content-Security-Policy` header.
    pub csp: String,
}

struct Session {
    place: AppPlace,
    /// Its page's token, while the page is not loaded yet.
    token: String,
    cancel: CancellationToken,
    in_flight: usize,
    calls: VecDeque<Instant>,
    reads: VecDeque<Instant>,
    logs: VecDeque<Instant>,
    context_updates: VecDeque<Instant>,
    denials_in_a_row: u32,
}

#[derive(Default)]
struct Inner {
    pages: HashMap<String, (ServedPage, Instant)>,
    sessions: HashMap<String, Session>,
    /// Cards whose app was open when the page stopped answering: not opened again in this run
    /// (the page is loaded again without them, and an app that spins would only spin again).
    hung_cards: HashSet<String>,
    /// Per conversation: how many times its apps changed what the model is told since its last
    /// turn began.
    told_since_turn: HashMap<String, usize>,
}

/// The open app frames; one per engine.
#[derive(Default)]
pub struct AppSessions {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for AppSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppSessions").field("open", &self.open_count()).finish()
    }
}

/// Holds one of a session's call slots; let go when dropped.
pub struct CallSlot {
    sessions: Arc<AppSessions>,
    session: String,
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        if let Some(s) = self.sessions.lock().sessions.get_mut(&self.session) {
            s.in_flight = s.in_flight.saturating_sub(1);
        }
    }
}

fn random_id() -> String {
    // 122 random bits from the OS generator.
    uuid::Uuid::new_v4().simple().to_string()
}

/// Keeps the stamps of the last `window` and says whether one more fits under `limit`.
fn admit(stamps: &mut VecDeque<Instant>, now: Instant, window: Duration, limit: usize) -> bool {
    while stamps.front().is_some_and(|t| now.duration_since(*t) >= window) {
        stamps.pop_front();
    }
    if stamps.len() >= limit {
        return false;
    }
    stamps.push_back(now);
    true
}

impl AppSessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens a session for a page; returns the session id and the page's one-time token.
    pub fn open(&self, place: AppPlace, page: ServedPage, now: Instant) -> (String, String) {
        let (session, token) = (random_id(), random_id());
        let mut inner = self.lock();
        inner.pages.retain(|_, (_, made)| now.duration_since(*made) < PAGE_TTL);
        inner.pages.insert(token.clone(), (page, now));
        inner.sessions.insert(
            session.clone(),
            Session {
                place,
                token: token.clone(),
                cancel: CancellationToken::new(),
                in_flight: 0,
                calls: VecDeque::new(),
                reads: VecDeque::new(),
                logs: VecDeque::new(),
                context_updates: VecDeque::new(),
                denials_in_a_row: 0,
            },
        );
        (session, token)
    }

    /// The page for a token, once: a second load (or one after [`PAGE_TTL`]) gets nothing.
    pub fn take_page(&self, token: &str, now: Instant) -> Option<ServedPage> {
        let (page, made) = self.lock().pages.remove(token)?;
        (now.duration_since(made) < PAGE_TTL).then_some(page)
    }

    /// Whether a token is one minted and not yet loaded (the window lets only those navigate).
    pub fn page_pending(&self, token: &str) -> bool {
        self.lock().pages.contains_key(token)
    }

    pub fn place(&self, session: &str) -> Result<AppPlace, AppError> {
        self.lock().sessions.get(session).map(|s| s.place.clone()).ok_or_else(closed)
    }

    /// Cancelled when the session closes: its app's calls and questions end with it.
    pub fn cancel_token(&self, session: &str) -> Result<CancellationToken, AppError> {
        self.lock().sessions.get(session).map(|s| s.cancel.clone()).ok_or_else(closed)
    }

    /// Takes a call slot, or says why the app may not call now.
    pub fn admit_call(self: &Arc<Self>, session: &str, now: Instant) -> Result<CallSlot, AppError> {
        let mut inner = self.lock();
        let s = inner.sessions.get_mut(session).ok_or_else(closed)?;
        if s.denials_in_a_row >= MAX_DENIALS_IN_A_ROW {
            return Err(AppError::refused(format!(
                "the user declined {MAX_DENIALS_IN_A_ROW} calls from this app in a row, so it may not \
                 ask again until it is opened again"
            )));
        }
        if s.in_flight >= MAX_CALLS_IN_FLIGHT {
            return Err(AppError::refused(format!(
                "too many requests: {MAX_CALLS_IN_FLIGHT} calls already run"
            )));
        }
        if !admit(&mut s.calls, now, Duration::from_secs(60), MAX_CALLS_PER_MINUTE) {
            return Err(AppError::refused(format!(
                "too many requests: at most {MAX_CALLS_PER_MINUTE} calls a minute"
            )));
        }
        s.in_flight += 1;
        Ok(CallSlot { sessions: Arc::clone(self), session: session.to_owned() })
    }

    /// Notes whether the user declined a call, for the denials-in-a-row rule.
    pub fn answered(&self, session: &str, declined: bool) {
        if let Some(s) = self.lock().sessions.get_mut(session) {
            s.denials_in_a_row = if declined { s.denials_in_a_row + 1 } else { 0 };
        }
    }

    pub fn admit_read(&self, session: &str, now: Instant) -> Result<(), AppError> {
        let mut inner = self.lock();
        let s = inner.sessions.get_mut(session).ok_or_else(closed)?;
        if admit(&mut s.reads, now, Duration::from_secs(60), MAX_READS_PER_MINUTE) {
            Ok(())
        } else {
            Err(AppError::refused(format!(
                "too many requests: at most {MAX_READS_PER_MINUTE} reads a minute"
            )))
        }
    }

    /// Whether one more log line may be written now (the excess is dropped).
    pub fn admit_log(&self, session: &str, now: Instant) -> bool {
        let mut inner = self.lock();
        inner
            .sessions
            .get_mut(session)
            .is_some_and(|s| admit(&mut s.logs, now, Duration::from_secs(1), MAX_LOGS_PER_SECOND))
    }

    /// Whether the app may change what the model is told now: within its own rate, and within
    /// what the apps of its conversation may change before the model's next turn.
    pub fn admit_context_update(&self, session: &str, now: Instant) -> Result<(), AppError> {
        let mut inner = self.lock();
        let Inner { sessions, told_since_turn, .. } = &mut *inner;
        let s = sessions.get_mut(session).ok_or_else(closed)?;
        let told = told_since_turn.entry(s.place.conversation_id.clone()).or_default();
        if *told >= MAX_CONTEXT_UPDATES_PER_TURN {
            return Err(AppError::refused(format!(
                "too many requests: the apps in this conversation changed what the model is told \
                 {MAX_CONTEXT_UPDATES_PER_TURN} times since its last turn; more are taken once the \
                 user asks again"
            )));
        }
        if !admit(&mut s.context_updates, now, Duration::from_secs(60), MAX_CONTEXT_UPDATES_PER_MINUTE) {
            return Err(AppError::refused(format!(
                "too many requests: at most {MAX_CONTEXT_UPDATES_PER_MINUTE} changes to what the \
                 model is told a minute"
            )));
        }
        *told += 1;
        Ok(())
    }

    /// A turn of a conversation began: its apps' changes from now on go to the next one.
    pub fn turn_began(&self, conversation: &str) {
        self.lock().told_since_turn.remove(conversation);
    }

    /// Ends a session: its page can no longer load, its calls and questions are cancelled.
    pub fn close(&self, session: &str) -> bool {
        let mut inner = self.lock();
        let Some(s) = inner.sessions.remove(session) else { return false };
        inner.pages.remove(&s.token);
        s.cancel.cancel();
        true
    }

    /// Ends every session of a server (it stopped, or its apps were turned off); their ids.
    pub fn close_server(&self, server: &str) -> Vec<String> {
        let mut inner = self.lock();
        let ids: Vec<String> = inner
            .sessions
            .iter()
            .filter(|(_, s)| s.place.server == server)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &ids {
            if let Some(s) = inner.sessions.remove(id) {
                inner.pages.remove(&s.token);
                s.cancel.cancel();
            }
        }
        ids
    }

    /// Ends every session (the page that showed them was loaded again, so their frames are gone).
    pub fn close_all(&self) -> usize {
        let mut inner = self.lock();
        inner.pages.clear();
        let sessions = std::mem::take(&mut inner.sessions);
        sessions.values().for_each(|s| s.cancel.cancel());
        sessions.len()
    }

    /// The page stopped answering with apps open: ends every session, and remembers their cards
    /// so that the page, loaded again, does not open them again. Their session ids.
    pub fn close_hung(&self) -> Vec<String> {
        let mut inner = self.lock();
        inner.pages.clear();
        let sessions = std::mem::take(&mut inner.sessions);
        for s in sessions.values() {
            s.cancel.cancel();
            inner.hung_cards.insert(s.place.call_id.clone());
        }
        sessions.into_keys().collect()
    }

    /// Whether this card's app was open when the page stopped answering.
    pub fn hung(&self, call_id: &str) -> bool {
        self.lock().hung_cards.contains(call_id)
    }

    pub fn open_count(&self) -> usize {
        self.lock().sessions.len()
    }

    /// The sessions open now.
    pub fn open_ids(&self) -> Vec<String> {
        self.lock().sessions.keys().cloned().collect()
    }
}

fn closed() -> AppError {
    AppError::refused("this app's session is closed (its card was closed, or its apps were turned off)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(server: &str) -> AppPlace {
        AppPlace {
            server: server.into(),
            tool: "get-time".into(),
            conversation_id: "c".into(),
            message_id: 1,
            call_id: "card".into(),
            round: 0,
            text_offset: 0,
            resource_uri: "ui://x".into(),
        }
    }

    fn page() -> ServedPage {
        ServedPage { html: "<p>app</p>".into(), csp: "default-src 'none'".into() }
    }

    #[test]
    fn a_page_is_served_once_and_tokens_differ() {
        let sessions = AppSessions::default();
        let now = Instant::now();
        let (s1, t1) = sessions.open(place("a"), page(), now);
        let (s2, t2) = sessions.open(place("a"), page(), now);
        assert_ne!(t1, t2);
        assert_ne!(s1, t1, "the session id is not the page's address");
        assert_eq!(t1.len(), 32);
        assert!(sessions.page_pending(&t1));
        assert_eq!(sessions.take_page(&t1, now), Some(page()));
        assert_eq!(sessions.take_page(&t1, now), None, "a second load gets nothing");
        assert!(!sessions.page_pending(&t1));
        assert_eq!(sessions.take_page(&t2, now + PAGE_TTL), None, "an old token is dead");
        assert_eq!(sessions.take_page(&s2, now), None, "a session id is not a token");
    }

    #[test]
    fn calls_are_limited_in_flight_per_minute_and_after_denials() {
        let sessions = Arc::new(AppSessions::default());
        let now = Instant::now();
        let (id, _) = sessions.open(place("a"), page(), now);
        let slots: Vec<CallSlot> =
            (0..MAX_CALLS_IN_FLIGHT).map(|_| sessions.admit_call(&id, now).unwrap()).collect();
        let err = sessions.admit_call(&id, now).err().unwrap();
        assert!(err.message.contains("already run"), "{err}");
        drop(slots);
        for _ in MAX_CALLS_IN_FLIGHT..MAX_CALLS_PER_MINUTE {
            drop(sessions.admit_call(&id, now).unwrap());
        }
        assert!(sessions.admit_call(&id, now).err().unwrap().message.contains("a minute"));
        let later = now + Duration::from_secs(61);
        drop(sessions.admit_call(&id, later).unwrap());
        for _ in 0..MAX_DENIALS_IN_A_ROW - 1 {
            sessions.answered(&id, true);
        }
        sessions.answered(&id, false);
        sessions.answered(&id, true);
        assert!(sessions.admit_call(&id, later).is_ok(), "an approval in between resets the count");
        for _ in 0..MAX_DENIALS_IN_A_ROW {
            sessions.answered(&id, true);
        }
        assert!(sessions.admit_call(&id, later).err().unwrap().message.contains("declined"));
    }

    #[test]
    fn closing_cancels_and_forgets_and_other_servers_stay() {
        let sessions = Arc::new(AppSessions::default());
        let now = Instant::now();
        let (a, a_page) = sessions.open(place("a"), page(), now);
        let (b, b_page) = sessions.open(place("b"), page(), now);
        let cancel = sessions.cancel_token(&a).unwrap();
        assert_eq!(sessions.close_server("a"), vec![a.clone()]);
        assert!(cancel.is_cancelled());
        assert!(!sessions.page_pending(&a_page), "a closed session's page cannot load");
        assert!(sessions.place(&a).is_err());
        assert!(sessions.admit_call(&a, now).is_err());
        assert!(sessions.place(&b).is_ok());
        assert!(sessions.close(&b));
        assert!(!sessions.page_pending(&b_page));
        assert!(!sessions.close(&b));
        assert_eq!(sessions.open_count(), 0);
        let (c, token) = sessions.open(place("c"), page(), now);
        let cancel = sessions.cancel_token(&c).unwrap();
        assert_eq!(sessions.close_all(), 1);
        assert!(cancel.is_cancelled() && sessions.take_page(&token, now).is_none());
        assert!(!sessions.hung("card"), "closing is not hanging");
    }

    #[test]
    fn a_hung_page_closes_every_app_and_their_cards_stay_closed() {
        let sessions = AppSessions::default();
        let now = Instant::now();
        let (a, _) = sessions.open(place("a"), page(), now);
        let other = AppPlace { call_id: "other-card".into(), ..place("b") };
        let (b, b_page) = sessions.open(other, page(), now);
        let cancel = sessions.cancel_token(&a).unwrap();
        let mut closed = sessions.close_hung();
        closed.sort();
        let mut expected = vec![a, b];
        expected.sort();
        assert_eq!(closed, expected);
        assert!(cancel.is_cancelled() && sessions.open_count() == 0);
        assert!(!sessions.page_pending(&b_page));
        assert!(sessions.hung("card") && sessions.hung("other-card"));
        assert!(!sessions.hung("a-third-card"));
    }

    #[test]
    fn context_updates_are_limited_per_app_and_per_turn_of_the_conversation() {
        let sessions = AppSessions::default();
        let now = Instant::now();
        let (first, _) = sessions.open(place("a"), page(), now);
        // 62 at once, as a script would send them: a minute's worth are taken.
        let taken = (0..62).filter(|_| sessions.admit_context_update(&first, now).is_ok()).count();
        assert_eq!(taken, MAX_CONTEXT_UPDATES_PER_MINUTE);
        let err = sessions.admit_context_update(&first, now).unwrap_err();
        assert!(err.message.contains("a minute"), "{err}");
        let later = now + Duration::from_secs(60);
        assert!(sessions.admit_context_update(&first, later).is_ok(), "a minute on, it may again");
        // Other apps of the same conversation share its bound until the next turn.
        let (second, _) = sessions.open(place("b"), page(), later);
        let (third, _) = sessions.open(place("c"), page(), later);
        let more = [&second, &third]
            .iter()
            .map(|id| {
                (0..MAX_CONTEXT_UPDATES_PER_MINUTE)
                    .filter(|_| sessions.admit_context_update(id, later).is_ok())
                    .count()
            })
            .sum::<usize>();
        assert_eq!(MAX_CONTEXT_UPDATES_PER_MINUTE + 1 + more, MAX_CONTEXT_UPDATES_PER_TURN);
        let err = sessions.admit_context_update(&third, later).unwrap_err();
        assert!(err.message.contains("since its last turn"), "{err}");
        let elsewhere = AppPlace { conversation_id: "another".into(), ..place("d") };
        let (other_conversation, _) = sessions.open(elsewhere, page(), later);
        assert!(
            sessions.admit_context_update(&other_conversation, later).is_ok(),
            "bounded per conversation"
        );
        sessions.turn_began("c");
        assert!(sessions.admit_context_update(&third, later).is_ok(), "a new turn, a new bound");
        assert!(sessions.admit_context_update("nobody", later).is_err());
    }

    #[test]
    fn logs_and_reads_have_their_own_rates() {
        let sessions = AppSessions::default();
        let now = Instant::now();
        let (id, _) = sessions.open(place("a"), page(), now);
        let logged = (0..100).filter(|_| sessions.admit_log(&id, now)).count();
        assert_eq!(logged, MAX_LOGS_PER_SECOND);
        assert!(sessions.admit_log(&id, now + Duration::from_secs(1)));
        for _ in 0..MAX_READS_PER_MINUTE {
            sessions.admit_read(&id, now).unwrap();
        }
        assert!(sessions.admit_read(&id, now).is_err());
        assert!(!sessions.admit_log("nobody", now));
    }
}
