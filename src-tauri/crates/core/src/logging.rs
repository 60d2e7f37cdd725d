//! Logs go to stderr and to a daily-rotated file in the data dir's `logs/` folder.
//! `PERCH_LOG` (tracing's filter syntax, e.g. `perch_core=debug`) overrides both levels.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, fmt};

pub const LOG_ENV: &str = "PERCH_LOG";
const KEEP_DAYS: usize = 14;

/// Keeps the file writer flushing; drop it last, at exit.
#[must_use = "logs stop reaching the file when the guard drops"]
pub struct LogGuard {
    _file: Option<WorkerGuard>,
}

/// Installs the global subscriber. `stderr_level` is the default for the terminal (the CLI
/// keeps it quiet); the file always gets `info` unless `PERCH_LOG` says otherwise.
pub fn init(logs_dir: Option<&Path>, stderr_level: &str) -> LogGuard {
    let filter = |default: &str| EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new(default));
    let stderr =
        fmt::layer().with_writer(std::io::stderr).with_target(false).with_filter(filter(stderr_level));

    let (file_layer, guard) = match logs_dir.map(open_file) {
        Some(Ok(appender)) => {
            let (writer, guard) = tracing_appender::non_blocking(appender);
            let layer = fmt::layer().with_writer(writer).with_ansi(false).with_filter(filter("info"));
            (Some(layer), Some(guard))
        }
        Some(Err(e)) => {
            eprintln!("perch: logging to the terminal only; the log file could not be opened: {e}");
            (None, None)
        }
        None => (None, None),
    };
    let _ = tracing_subscriber::registry().with(stderr).with(file_layer).try_init();
    LogGuard { _file: guard }
}

fn open_file(dir: &Path) -> Result<RollingFileAppender, tracing_appender::rolling::InitError> {
    RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix("perch")
        .filename_suffix("log")
        .max_log_files(KEEP_DAYS)
        .build(dir)
}
