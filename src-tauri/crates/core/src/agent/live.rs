//! Turns being answered, so a view that went away (the chat left for Settings, mini mode, the
//! page freed while hidden and loaded again) can come back to one: what it missed is replayed
//! as events, then the live ones follow, and Stop and the approval card work as before. One
//! turn per conversation at a time: a second question into a conversation still being answered
//! is refused, not interleaved with it.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::mpsc;

use super::{TurnEvent, TurnSink};
use crate::mcp::Progress;
use crate::providers::Usage;
use crate::store::tool_calls::ToolCallRecord;

/// What a turn has reported so far, enough to draw it again.
#[derive(Default)]
struct Live {
    conversation_id: Option<String>,
    started: Option<TurnEvent>,
    thinking: String,
    text: String,
    usage: Option<Usage>,
    /// The latest state of each call, in the order they appeared.
    tool_calls: Vec<ToolCallRecord>,
    progress: Vec<(String, Progress)>,
    watchers: Vec<mpsc::UnboundedSender<TurnEvent>>,
}

impl Live {
    fn replay(&self) -> Vec<TurnEvent> {
        let mut events: Vec<TurnEvent> = self.started.iter().cloned().collect();
        if !self.thinking.is_empty() {
            events.push(TurnEvent::Thinking(self.thinking.clone()));
        }
        // Text and calls interleave on the card by each call's text offset, so the order here
        // does not matter.
        if !self.text.is_empty() {
            events.push(TurnEvent::Text(self.text.clone()));
        }
        events.extend(self.usage.map(TurnEvent::Usage));
        events.extend(self.tool_calls.iter().cloned().map(|c| TurnEvent::ToolCall(Box::new(c))));
        events.extend(
            self.progress
                .iter()
                .map(|(id, p)| TurnEvent::ToolProgress { id: id.clone(), progress: p.clone() }),
        );
        events
    }

    fn record(&mut self, event: &TurnEvent) {
        match event {
            TurnEvent::Started(s) => {
                self.conversation_id = Some(s.conversation.id.clone());
                self.started = Some(event.clone());
            }
            TurnEvent::Thinking(t) => self.thinking.push_str(t),
            TurnEvent::Text(t) => self.text.push_str(t),
            TurnEvent::Usage(u) => self.usage = Some(*u),
            TurnEvent::ToolCall(c) => match self.tool_calls.iter_mut().find(|old| old.id == c.id) {
                Some(old) => *old = (**c).clone(),
                None => self.tool_calls.push((**c).clone()),
            },
            TurnEvent::ToolProgress { id, progress } => {
                self.progress.retain(|(old, _)| old != id);
                self.progress.push((id.clone(), progress.clone()));
            }
            TurnEvent::Finished(_) => {}
        }
        self.watchers.retain(|w| w.send(event.clone()).is_ok());
    }
}

/// Every turn being answered, by run id.
#[derive(Default)]
pub struct LiveTurns {
    runs: Mutex<HashMap<String, Live>>,
}

impl std::fmt::Debug for LiveTurns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveTurns").field("runs", &self.lock().len()).finish()
    }
}

/// Takes its turn out of the registry when the turn ends, however it ends.
pub(crate) struct LiveGuard<'a> {
    turns: &'a LiveTurns,
    run_id: String,
}

impl Drop for LiveGuard<'_> {
    fn drop(&mut self) {
        self.turns.lock().remove(&self.run_id);
    }
}

/// Another turn is answering in the conversation: its run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Busy {
    pub run_id: String,
}

impl LiveTurns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a turn into `conversation_id` (`None`: a new conversation); refused, naming
    /// the run already answering there, while another turn is open in it.
    pub(crate) fn begin(&self, run_id: &str, conversation_id: Option<&str>) -> Result<LiveGuard<'_>, Busy> {
        let mut runs = self.lock();
        if let Some(cid) = conversation_id
            && let Some((open, _)) = runs.iter().find(|(_, l)| l.conversation_id.as_deref() == Some(cid))
        {
            return Err(Busy { run_id: open.clone() });
        }
        let live = Live { conversation_id: conversation_id.map(str::to_owned), ..Live::default() };
        runs.insert(run_id.to_owned(), live);
        Ok(LiveGuard { turns: self, run_id: run_id.to_owned() })
    }

    /// Follows the turn answering in `conversation_id`: the receiver gets what it reported so
    /// far, then every event up to `Finished`. `None` when no turn is answering there.
    pub fn attach(&self, conversation_id: &str) -> Option<mpsc::UnboundedReceiver<TurnEvent>> {
        let mut runs = self.lock();
        let live = runs.values_mut().find(|l| l.conversation_id.as_deref() == Some(conversation_id))?;
        let (tx, rx) = mpsc::unbounded_channel();
        // Under the lock: no event falls between the replay and the live ones.
        for event in live.replay() {
            let _ = tx.send(event);
        }
        live.watchers.push(tx);
        Some(rx)
    }

    fn record(&self, run_id: &str, event: &TurnEvent) {
        if let Some(live) = self.lock().get_mut(run_id) {
            live.record(event);
        }
    }
}

/// The turn's sink, recording each event for views that attach later before passing it on.
pub(crate) struct LiveSink<'a> {
    pub turns: &'a LiveTurns,
    pub run_id: &'a str,
    pub inner: &'a dyn TurnSink,
}

impl TurnSink for LiveSink<'_> {
    fn send(&self, event: TurnEvent) {
        self.turns.record(self.run_id, &event);
        self.inner.send(event);
    }
}
