//! Everything logged in a test binary, at debug level for every crate (Perch logs info by
//! default; `PERCH_LOG=debug` is what a user sends when asked for more), so a test can assert
//! that a secret never reaches the logs.
#![allow(clippy::unwrap_used)]

use std::sync::Mutex;

static LOGS: Mutex<Vec<u8>> = Mutex::new(Vec::new());

struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        LOGS.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Starts capturing (once per binary).
pub fn capture() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("debug"))
            .with_writer(|| LogWriter)
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
    });
}

/// What was logged so far.
pub fn text() -> String {
    String::from_utf8_lossy(&LOGS.lock().unwrap()).into_owned()
}
