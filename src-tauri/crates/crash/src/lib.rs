//! perch-crash: crash reports that stay on the machine.
//!
//! [`install`] sets a panic hook that, after the usual message on stderr, writes
//! `<dir>/<UTC time>-<component>-<pid>.txt`: the component, Perch's version, the OS, the
//! thread, where it panicked, the panic's message with quoted text cut out, and a backtrace.
//! The app, the CLI and the sidecars (`perch-mcp`, `perch-llm`) share this crate so that one
//! format is written everywhere, without the sidecars linking perch-core. The sidecars learn
//! the folder from [`DIR_ENV`], which the engine sets when it starts them ([`install_from_env`]).
//!
//! [`list`], [`read`] and [`mark_seen`] are for whoever shows the reports later.

mod reports;

use std::fs;
use std::io::{self, Write};
use std::panic::PanicHookInfo;
use std::path::{Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Utc};

pub use reports::{CrashReport, list, mark_seen, read};

/// The folder a sidecar writes its crash reports to, set by the engine that starts it.
pub const DIR_ENV: &str = "PERCH_CRASH_DIR";
/// How many reports a folder keeps; the oldest go first.
pub const KEEP: usize = 20;
/// The longest panic message a report keeps, in characters.
const MESSAGE_LIMIT: usize = 240;
const CUT: &str = "…";
/// Code std quotes in its own messages (`called `Result::unwrap()` on an `Err` value`): kept,
/// since they say what failed and cannot be anyone's data. Every other quote is cut.
const STD_WORDING: [&str; 8] = [
    "Option::unwrap()",
    "Result::unwrap()",
    "Result::unwrap_err()",
    "None",
    "Err",
    "Ok",
    "left == right",
    "left != right",
];

/// Sets the panic hook: the previous hook runs first (stderr still gets the usual message),
/// then a report is written to `dir` when there is one. Failing to write is said on stderr and
/// is all: the hook never panics (a panic in a panic hook aborts the process).
pub fn install(component: &str, version: &str, dir: Option<PathBuf>) {
    let (component, version) = (component.to_owned(), version.to_owned());
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        if EXPECTED.with(|depth| depth.get() > 0) {
            return;
        }
        let Some(dir) = &dir else { return };
        let crash = Crash::new(&component, &version, info);
        // eprintln! would panic if stderr is closed.
        let _ = match write(dir, &crash) {
            Ok(path) => writeln!(io::stderr(), "perch: a crash report was written to {}", path.display()),
            Err(e) => {
                writeln!(io::stderr(), "perch: no crash report could be written in {}: {e}", dir.display())
            }
        };
    }));
}

thread_local! {
    /// How many [`expected`] calls this thread is inside.
    static EXPECTED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs `f`, whose panics its caller catches and handles (a parser fed hostile input, inside
/// `catch_unwind`): they are not crashes, and writing a report for each would tell the user at
/// the next start that Perch broke when a web page was merely malformed.
pub fn expected<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            EXPECTED.with(|depth| depth.set(depth.get().saturating_sub(1)));
        }
    }
    EXPECTED.with(|depth| depth.set(depth.get() + 1));
    // Left on unwinding too: the panic passes through here on its way to the caller's catch.
    let _leave = Leave;
    f()
}

/// [`install`] with the folder from [`DIR_ENV`]; without it, the hook only prints.
pub fn install_from_env(component: &str, version: &str) {
    let dir = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()).map(PathBuf::from);
    install(component, version, dir);
}

/// One panic, as the report says it.
struct Crash {
    component: String,
    version: String,
    at: DateTime<Utc>,
    thread: String,
    location: String,
    message: String,
    backtrace: String,
}

impl Crash {
    fn new(component: &str, version: &str, info: &PanicHookInfo<'_>) -> Self {
        let message = info.payload_as_str().unwrap_or("(the panic has no message)");
        Self {
            component: component.to_owned(),
            version: version.to_owned(),
            at: Utc::now(),
            thread: std::thread::current().name().unwrap_or("unnamed").to_owned(),
            location: info.location().map_or_else(|| "unknown".into(), ToString::to_string),
            message: redact_message(message),
            backtrace: std::backtrace::Backtrace::force_capture().to_string(),
        }
    }

    fn text(&self) -> String {
        format!(
            "Perch crash report\nComponent: {}\nVersion: {}\nOS: {} {}\nTime: {}\nProcess: {}\nThread: {}\nLocation: {}\nMessage: {}\n\nBacktrace:\n{}\n",
            self.component,
            self.version,
            std::env::consts::OS,
            std::env::consts::ARCH,
            self.at.to_rfc3339_opts(SecondsFormat::Millis, true),
            std::process::id(),
            self.thread,
            self.location,
            self.message,
            self.backtrace,
        )
    }

    fn file_name(&self) -> String {
        let component: String = self
            .component
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect();
        format!("{}-{component}-{}.txt", self.at.format("%Y%m%dT%H%M%S%.3fZ"), std::process::id())
    }
}

/// A panic message fit for a report. Messages quote data: slicing a string quotes the string
/// (`byte index 5 is not a char boundary; ... of `the user's text``), `unwrap` on an error
/// prints the error, `assert_eq!` prints both sides on the lines below. A report must not carry
/// conversation content, so only the first line is kept, text in backticks or double quotes is
/// cut (std's own wording excepted), and what remains is capped.
pub fn redact_message(message: &str) -> String {
    let first_line = message.lines().next().unwrap_or_default();
    let mut out = String::new();
    let mut rest = first_line;
    while let Some(open) = rest.find(['`', '"']) {
        let (before, from_quote) = rest.split_at(open);
        out.push_str(before);
        let mut chars = from_quote.chars();
        let quote = chars.next().unwrap_or('"');
        let inside = chars.as_str();
        let (quoted, after) = match inside.find(quote) {
            Some(close) => (&inside[..close], &inside[close + quote.len_utf8()..]),
            None => (inside, ""),
        };
        let kept = if quote == '`' && STD_WORDING.contains(&quoted) { quoted } else { CUT };
        out.push(quote);
        out.push_str(kept);
        out.push(quote);
        rest = after;
    }
    out.push_str(rest);
    if out.chars().count() > MESSAGE_LIMIT {
        out = out.chars().take(MESSAGE_LIMIT).collect::<String>() + CUT;
    }
    out
}

/// Writes the report whole or not at all (a temporary file renamed into place), owner-only,
/// then drops the oldest reports beyond [`KEEP`].
fn write(dir: &Path, crash: &Crash) -> io::Result<PathBuf> {
    create_private_dir(dir)?;
    let name = crash.file_name();
    let path = dir.join(&name);
    let temp = dir.join(format!(".{name}.tmp"));
    let written = private_file(&temp).and_then(|mut file| {
        file.write_all(crash.text().as_bytes())?;
        file.sync_all()
    });
    if let Err(e) = written.and_then(|()| fs::rename(&temp, &path)) {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    prune(dir, KEEP);
    Ok(path)
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn private_file(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Removes the oldest reports (by name, which starts with the time) so `keep` remain.
fn prune(dir: &Path, keep: usize) {
    let mut names = reports::report_names(dir);
    if names.len() <= keep {
        return;
    }
    names.sort_unstable();
    let excess = names.len() - keep;
    for name in names.into_iter().take(excess) {
        let _ = fs::remove_file(dir.join(name));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn quoted_text_is_cut_and_std_wording_kept() {
        let sliced = "byte index 5 is not a char boundary; it is inside 'é' (bytes 4..6) of `my secret note`";
        assert_eq!(
            redact_message(sliced),
            "byte index 5 is not a char boundary; it is inside 'é' (bytes 4..6) of `…`"
        );
        let unwrapped = r#"called `Result::unwrap()` on an `Err` value: Custom { kind: Other, error: "the user's words" }"#;
        assert_eq!(
            redact_message(unwrapped),
            r#"called `Result::unwrap()` on an `Err` value: Custom { kind: Other, error: "…" }"#
        );
        assert_eq!(redact_message("unclosed `quote runs to the end"), "unclosed `…`");
        assert_eq!(
            redact_message("assertion `left == right` failed\n  left: 1\n right: 2"),
            "assertion `left == right` failed"
        );
    }

    #[test]
    fn long_messages_are_capped_on_a_character_boundary() {
        let long = "é".repeat(MESSAGE_LIMIT * 2);
        let out = redact_message(&long);
        assert_eq!(out.chars().count(), MESSAGE_LIMIT + 1);
        assert!(out.ends_with(CUT));
    }

    #[test]
    fn only_the_newest_reports_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..25 {
            fs::write(dir.path().join(format!("20260101T0000{i:02}.000Z-app-1.txt")), "x").unwrap();
        }
        fs::write(dir.path().join("20250101T000000.000Z-app-1.seen.txt"), "x").unwrap();
        fs::write(dir.path().join("notes.md"), "not a report").unwrap();
        prune(dir.path(), KEEP);
        let mut left = reports::report_names(dir.path());
        left.sort_unstable();
        assert_eq!(left.len(), KEEP);
        assert_eq!(left[0], "20260101T000005.000Z-app-1.txt", "the six oldest went, a seen one first");
        assert!(dir.path().join("notes.md").exists(), "other files are left alone");
    }

    #[test]
    fn component_names_cannot_leave_the_folder() {
        let crash = Crash {
            component: "../evil name".into(),
            version: "1".into(),
            at: Utc::now(),
            thread: "main".into(),
            location: "x".into(),
            message: "m".into(),
            backtrace: String::new(),
        };
        let name = crash.file_name();
        assert!(!name.contains('/') && name.contains("-___evil_name-"), "{name}");
    }
}
