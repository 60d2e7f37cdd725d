//! Logs: everything to stderr (stdout carries the protocol), and llama.cpp's own warnings and
//! errors kept in a short list, because a failed load returns nothing but a null pointer and the
//! reason ("unknown model architecture: 'x'") is only in its log.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

const KEPT: usize = 20;

/// llama.cpp's recent warnings and errors, newest last.
#[derive(Clone, Default)]
pub struct Recent(Arc<Mutex<VecDeque<String>>>);

impl Recent {
    /// Forgets what was logged so far (before an operation whose failure will be explained).
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// The lines logged since the last `clear`.
    pub fn lines(&self) -> Vec<String> {
        self.lock().iter().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

struct Capture(Recent);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            value.clone_into(&mut self.0);
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let meta = event.metadata();
        if meta.target() != "llama-cpp-2" || *meta.level() > tracing::Level::WARN {
            return;
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        let mut lines = self.0.lock();
        if lines.len() == KEPT {
            lines.pop_front();
        }
        lines.push_back(message.0.trim().to_owned());
    }
}

/// Sends llama.cpp's logs through `tracing`, to stderr at `PERCH_LLM_LOG` (default: warnings).
pub fn init() -> Recent {
    let recent = Recent::default();
    let filter = EnvFilter::try_from_env("PERCH_LLM_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let stderr =
        tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false).with_filter(filter);
    let _ = tracing_subscriber::registry().with(stderr).with(Capture(recent.clone())).try_init();
    llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
    recent
}
