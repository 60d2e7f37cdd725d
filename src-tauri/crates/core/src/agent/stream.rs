//! One step of an answer: read the provider's stream into the sink and the outcome, saving
//! what arrived on a timer, so a kill loses at most [`SAVE_EVERY`] of it even while the model
//! is silent (thinking, loading, or waiting on a tool).

use std::time::Duration;

use futures::StreamExt;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use super::{Outcome, TurnEvent, TurnSink};
use crate::providers::{ChatRequest, Provider, SignedThinking, StreamEvent, ToolCall, Usage};
use crate::store::Store;

/// How often a streaming answer is saved, so a crash or a kill loses at most this much.
pub(super) const SAVE_EVERY: Duration = Duration::from_millis(750);

/// Streams one step of the answer to the sink, saving progress, until it ends, fails or is
/// stopped. Returns what the model asked for and what must go back with it.
pub(super) async fn stream_answer(
    provider: &dyn Provider,
    request: ChatRequest,
    store: &Store,
    message_id: i64,
    cancel: &CancellationToken,
    sink: &dyn TurnSink,
    out: &mut Outcome,
) -> Step {
    let mut asked = Step::default();
    let mut progress = Progress { store, message_id, saved: (out.text.len(), out.thinking.len()) };
    // One wait for Stop for the whole step: a new one per token registered and removed a
    // waiter on the token (two locks) thousands of times a second.
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    let mut stream = tokio::select! {
        _ = &mut cancelled => { out.stopped = true; return asked; }
        started = provider.stream_chat(request) => match started {
            Ok(stream) => stream,
            Err(e) => { out.error = Some(e); return asked; }
        },
    };
    let mut save_timer = tokio::time::interval_at(Instant::now() + SAVE_EVERY, SAVE_EVERY);
    save_timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        let next = tokio::select! {
            // Dropping the stream closes the connection: the provider stops generating.
            _ = &mut cancelled => { out.stopped = true; break; }
            _ = save_timer.tick() => {
                progress.save(out).await;
                continue;
            }
            next = stream.next() => next,
        };
        match next {
            None => break,
            Some(Err(e)) => {
                out.error = Some(e);
                break;
            }
            Some(Ok(event)) => match event {
                StreamEvent::Thinking(t) => {
                    out.thinking.push_str(&t);
                    sink.send(TurnEvent::Thinking(t));
                }
                StreamEvent::Text(t) => {
                    out.text.push_str(&t);
                    sink.send(TurnEvent::Text(t));
                }
                StreamEvent::Usage(u) => {
                    // Each round is billed; the answer's usage is the sum.
                    let total = out.usage.unwrap_or_default();
                    let sum = Usage {
                        input_tokens: total.input_tokens + u.input_tokens,
                        output_tokens: total.output_tokens + u.output_tokens,
                    };
                    out.usage = Some(sum);
                    sink.send(TurnEvent::Usage(sum));
                }
                StreamEvent::SignedThinking(block) => asked.thinking.push(block),
                StreamEvent::ToolCall(call) => asked.calls.push(call),
                StreamEvent::Done(_) => {}
            },
        }
    }
    if !asked.calls.is_empty() {
        // The tools may wait a long time for the user's approval: keep the text so far.
        progress.save(out).await;
    }
    asked
}

/// One step of the answer as the next request must repeat it.
#[derive(Default)]
pub(super) struct Step {
    /// The tool calls the model asked for.
    pub calls: Vec<ToolCall>,
    /// Signed reasoning before them, sent back unchanged with the calls.
    pub thinking: Vec<SignedThinking>,
}

/// Saves the answer so far when it grew since the last save.
struct Progress<'a> {
    store: &'a Store,
    message_id: i64,
    saved: (usize, usize),
}

impl Progress<'_> {
    async fn save(&mut self, out: &Outcome) {
        let now = (out.text.len(), out.thinking.len());
        if now == self.saved {
            return;
        }
        let thinking = (!out.thinking.is_empty()).then_some(out.thinking.as_str());
        match self.store.save_progress(self.message_id, &out.text, thinking).await {
            Ok(()) => self.saved = now,
            Err(e) => tracing::warn!(error = %e, "could not save the answer's progress"),
        }
    }
}
