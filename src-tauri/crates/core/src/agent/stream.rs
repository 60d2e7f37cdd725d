//! One step of an answer: read the provider's stream into the sink and the outcome, saving
//! what arrived on a timer, so a kill loses at most [`SAVE_EVERY`] of it even while the model
//! is silent (thinking, loading, or waiting on a tool).

use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use super::{Outcome, TurnEvent, TurnSink};
use crate::providers::{
    ChatRequest, EventStream, ModelInfo, Provider, ProviderError, SignedThinking, StreamEvent, ToolCall,
    Usage,
};
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

/// A provider whose first chat was sent ahead: the turn sends its first request as soon as the
/// context and the tools are known and saves the answer's row meanwhile (see `turn`), then
/// the agent loop asks this provider for that request and gets the one already under way.
/// Later requests (after tool calls) go to the provider as usual.
pub(super) struct SentEarly<'a> {
    provider: &'a dyn Provider,
    first: Mutex<Option<Early<'a>>>,
}

type Started<'a> = BoxFuture<'a, Result<EventStream, ProviderError>>;

/// The first request: on its way, or answered (the response's head, or why it failed).
enum Early<'a> {
    Sending(Started<'a>),
    Answered(Result<EventStream, ProviderError>),
}

impl<'a> SentEarly<'a> {
    /// Sends `first` (the request the agent loop will make first) through `provider`.
    pub(super) fn send(provider: &'a dyn Provider, first: ChatRequest) -> Self {
        Self { provider, first: Mutex::new(Some(Early::Sending(provider.stream_chat(first)))) }
    }

    /// A provider that sends nothing ahead (the answer is blocked, or the turn already stopped).
    pub(super) fn nothing(provider: &'a dyn Provider) -> Self {
        Self { provider, first: Mutex::new(None) }
    }

    /// Runs `work` to its end while the first request goes out (its answer is kept).
    pub(super) async fn alongside<T>(&self, work: impl Future<Output = T>) -> T {
        let mut work = std::pin::pin!(work);
        std::future::poll_fn(|cx| {
            self.poll_sending(cx);
            work.as_mut().poll(cx)
        })
        .await
    }

    fn poll_sending(&self, cx: &mut Context<'_>) {
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(Early::Sending(sending)) = first.as_mut()
            && let Poll::Ready(answered) = sending.as_mut().poll(cx)
        {
            *first = Some(Early::Answered(answered));
        }
    }
}

impl Provider for SentEarly<'_> {
    fn name(&self) -> &str {
        self.provider.name()
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, ProviderError>> {
        self.provider.list_models()
    }

    fn model_info(&self, model: &str) -> BoxFuture<'_, Result<ModelInfo, ProviderError>> {
        self.provider.model_info(model)
    }

    /// The first call returns the request sent ahead (`request` is the same one: the agent loop
    /// starts with the request the turn sent); later calls go to the provider.
    fn stream_chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<EventStream, ProviderError>> {
        match self.first.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(Early::Sending(sending)) => sending,
            Some(Early::Answered(answered)) => Box::pin(std::future::ready(answered)),
            None => self.provider.stream_chat(request),
        }
    }
}
