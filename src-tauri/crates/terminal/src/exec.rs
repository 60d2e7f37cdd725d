//! One executor for every terminal command: a real PTY (portable-pty), the command leading its
//! own session and process group, output read on a thread into bounded buffers and streamed
//! as coalesced chunks, and the whole group killed on timeout, Stop, `kill_process` or when
//! the output passes its limit. Stragglers left in the group after the command exits are
//! killed too, so nothing outlives its command.
//! (Over 500 lines with its tests; one executor.)

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// What the event table keeps of the output.
pub const SAVED_OUTPUT_BYTES: usize = 50 * 1024;
/// What the model sees of new output: the first and last this many bytes.
pub const MODEL_HEAD_BYTES: usize = 6 * 1024;
pub const MODEL_TAIL_BYTES: usize = 6 * 1024;
/// Output is sent to the panel at most this often, in chunks of at most `FLUSH_BYTES`.
const FLUSH_EVERY: Duration = Duration::from_millis(16);
const FLUSH_BYTES: usize = 64 * 1024;
/// How often a long command reports that it still runs.
pub const NOTICE_EVERY: Duration = Duration::from_secs(10);

/// What to run and how.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The program and its arguments (the sandbox launcher, or the shell).
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    /// Kill the command when it has printed this much.
    pub max_output_bytes: u64,
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Exit {
    /// `None` when a signal ended it.
    pub code: Option<i32>,
    pub timed_out: bool,
    /// Killed by Stop, kill_process or the panel.
    pub killed: bool,
    /// Killed because it printed more than the limit.
    pub output_capped: bool,
    pub duration_ms: i64,
}

/// Keeps the first `head` and the last `tail` bytes of a stream, and counts the rest.
#[derive(Debug, Default)]
pub struct Capped {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: u64,
    head_cap: usize,
    tail_cap: usize,
}

impl Capped {
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self { head_cap, tail_cap, ..Self::default() }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        let room = self.head_cap.saturating_sub(self.head.len());
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if self.tail_cap == 0 {
            self.dropped += bytes.len() as u64;
            return;
        }
        if bytes.len() > self.tail_cap {
            self.dropped += (self.tail.len() + bytes.len() - self.tail_cap) as u64;
            self.tail.clear();
            bytes = &bytes[bytes.len() - self.tail_cap..];
        } else {
            let over = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
            self.dropped += over as u64;
            self.tail.drain(..over);
        }
        self.tail.extend(bytes);
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    /// The text kept, escapes removed, with a note where bytes were left out; empties it.
    pub fn take_text(&mut self) -> String {
        let head = plain_text(&std::mem::take(&mut self.head));
        let tail: Vec<u8> = std::mem::take(&mut self.tail).into();
        let dropped = std::mem::take(&mut self.dropped);
        if dropped == 0 {
            return head + &plain_text(&tail);
        }
        format!("{head}\n[... {dropped} bytes of output left out ...]\n{}", plain_text(&tail))
    }

    pub fn head(&self) -> &[u8] {
        &self.head
    }
}

/// Terminal output as plain text: escape sequences removed, `\r\n` as `\n`.
pub fn plain_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    for n in chars.by_ref() {
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(n) = chars.next() {
                        if n == '\u{7}' || (n == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' if chars.peek() == Some(&'\n') => {}
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// What happens to a running command, for the service to stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Happening {
    /// Output, as text (UTF-8 sequences are never split between chunks).
    Output(String),
    /// Still running after this many seconds.
    Running(u64),
}

/// The shared state of one running (or finished) command.
pub struct Job {
    pub pid: Option<u32>,
    pub started: Instant,
    state: Mutex<JobState>,
    changed: watch::Sender<u64>,
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    /// What was typed since the last key that ends a line: the start of the line the next
    /// such key runs, which that key's approval is judged by.
    typed: Mutex<String>,
    kill: CancellationToken,
}

struct JobState {
    saved: Vec<u8>,
    total: u64,
    unread: Capped,
    last_output: Instant,
    exit: Option<Exit>,
    killed: bool,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("pid", &self.pid).finish_non_exhaustive()
    }
}

/// Whether typing `c` can make the program act on what was typed: Enter (`\r`, `\n`) and
/// every other control key (Ctrl+O runs the line in readline, Esc starts a key sequence, a
/// raw-mode program acts on any of them), but not Tab.
pub fn ends_line(c: char) -> bool {
    c.is_control() && c != '\t'
}

/// What the model is told after waiting on a command.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// New output since the last report (capped, escapes removed).
    pub output: String,
    /// `None` while it still runs.
    pub exit: Option<Exit>,
}

impl Job {
    fn state(&self) -> MutexGuard<'_, JobState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn bump(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    pub fn exit(&self) -> Option<Exit> {
        self.state().exit
    }

    /// The first 50 KB of output and the byte count, for the event table.
    pub fn saved_output(&self) -> (String, i64) {
        let s = self.state();
        (String::from_utf8_lossy(&s.saved).into_owned(), i64::try_from(s.total).unwrap_or(i64::MAX))
    }

    /// Kills the command's whole process group: at once (the task driving the command may not
    /// run again, at exit), and again from that task.
    pub fn kill(&self) {
        let running = {
            let mut s = self.state();
            if s.exit.is_none() {
                s.killed = true;
            }
            s.exit.is_none()
        };
        if running {
            kill_group(self.pid);
        }
        self.kill.cancel();
    }

    /// Types `text` into the command's terminal.
    pub fn send_input(&self, text: &str) -> std::io::Result<()> {
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let w = writer.as_mut().ok_or_else(|| std::io::Error::other("the command has ended"))?;
        w.write_all(text.as_bytes())?;
        w.flush()?;
        let mut typed = self.typed.lock().unwrap_or_else(|p| p.into_inner());
        let ended = text.rfind(ends_line).map_or(0, |at| {
            typed.clear();
            at + text[at..].chars().next().map_or(1, char::len_utf8)
        });
        typed.push_str(&text[ended..]);
        Ok(())
    }

    /// What was typed since the last key that ends a line.
    pub fn typed(&self) -> String {
        self.typed.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Waits until the command ends, or (with `idle`) until it has printed nothing for that
    /// long, or `cancel` fires; returns the output since the last report.
    pub async fn wait_report(&self, idle: Option<Duration>, cancel: &CancellationToken) -> Report {
        let mut changes = self.changed.subscribe();
        loop {
            let (exit, quiet_for) = {
                let s = self.state();
                (s.exit, s.last_output.elapsed())
            };
            if exit.is_some() {
                break;
            }
            let wait = match idle {
                Some(idle) if quiet_for >= idle => break,
                Some(idle) => idle - quiet_for,
                None => Duration::from_secs(3600),
            };
            tokio::select! {
                _ = changes.changed() => {}
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => break,
            }
        }
        let mut s = self.state();
        Report { output: s.unread.take_text(), exit: s.exit }
    }
}

/// Why a command could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the command could not start: no terminal (PTY) could be opened ({0})")]
    Pty(String),
    #[error("the command could not start: {program} did not run ({message})")]
    Spawn { program: String, message: String },
    #[error("the command could not start: {0}")]
    Io(#[from] std::io::Error),
}

/// Starts `spec` in a PTY. `happenings` receives output and notices; the job's exit is set
/// when the command and everything left in its group have ended.
pub fn start(spec: Spec, happenings: mpsc::Sender<Happening>) -> Result<Arc<Job>, StartError> {
    let pair = native_pty_system()
        .openpty(PtySize { rows: 30, cols: 120, pixel_width: 0, pixel_height: 0 })
        .map_err(|e| StartError::Pty(e.to_string()))?;
    let mut cmd = CommandBuilder::new(spec.argv.first().map_or("/bin/sh", String::as_str));
    cmd.args(&spec.argv[1..]);
    cmd.cwd(&spec.cwd);
    cmd.env_clear();
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    let program = spec.argv.first().cloned().unwrap_or_else(|| "/bin/sh".into());
    let mut child =
        pair.slave.spawn_command(cmd).map_err(|e| StartError::Spawn { program, message: e.to_string() })?;
    drop(pair.slave);
    let reader = pair.master.try_clone_reader().map_err(|e| StartError::Pty(e.to_string()))?;
    let writer = pair.master.take_writer().map_err(|e| StartError::Pty(e.to_string()))?;
    let pid = child.process_id();
    let job = Arc::new(Job {
        pid,
        started: Instant::now(),
        state: Mutex::new(JobState {
            saved: Vec::new(),
            total: 0,
            unread: Capped::new(MODEL_HEAD_BYTES, MODEL_TAIL_BYTES),
            last_output: Instant::now(),
            exit: None,
            killed: false,
        }),
        changed: watch::channel(0).0,
        writer: Mutex::new(Some(writer)),
        typed: Mutex::new(String::new()),
        kill: CancellationToken::new(),
    });

    // Output: a thread reads the PTY into a bounded channel, so a flood waits for us.
    let (bytes_tx, bytes_rx) = mpsc::channel::<Vec<u8>>(64);
    std::thread::Builder::new().name("perch-pty-read".into()).spawn(move || read_pty(reader, &bytes_tx))?;
    // Exit: a thread waits for the command itself.
    let (exit_tx, exit_rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new().name("perch-pty-wait".into()).spawn(move || {
        let status = child.wait().ok();
        let _ = exit_tx.send(status);
    })?;
    let driven = job.clone();
    let master = pair.master;
    tokio::spawn(async move {
        drive(&driven, &spec, bytes_rx, exit_rx, happenings).await;
        drop(master);
    });
    Ok(job)
}

fn read_pty(mut reader: Box<dyn Read + Send>, tx: &mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx.blocking_send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        }
    }
}

/// Kills the process group led by `pid` (the command leads its own session and group).
pub fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 1) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

async fn drive(
    job: &Job,
    spec: &Spec,
    mut bytes: mpsc::Receiver<Vec<u8>>,
    mut exited: tokio::sync::oneshot::Receiver<Option<portable_pty::ExitStatus>>,
    happenings: mpsc::Sender<Happening>,
) {
    let deadline = tokio::time::Instant::now() + spec.timeout;
    let mut notice = tokio::time::interval_at(tokio::time::Instant::now() + NOTICE_EVERY, NOTICE_EVERY);
    let mut pending: Vec<u8> = Vec::new();
    let mut carry: Vec<u8> = Vec::new();
    let mut flush_at: Option<tokio::time::Instant> = None;
    let mut status: Option<Option<portable_pty::ExitStatus>> = None;
    let (mut timed_out, mut capped) = (false, false);
    let mut reader_done = false;
    let mut kill_sent = false;
    // After the command exits, output still in flight is read for a moment at most.
    let mut drain_until: Option<tokio::time::Instant> = None;
    loop {
        let far = tokio::time::Instant::now() + Duration::from_secs(3600);
        tokio::select! {
            chunk = bytes.recv(), if !reader_done => match chunk {
                Some(chunk) => {
                    let total = {
                        let mut s = job.state();
                        let room = SAVED_OUTPUT_BYTES.saturating_sub(s.saved.len());
                        s.saved.extend_from_slice(&chunk[..room.min(chunk.len())]);
                        s.total += chunk.len() as u64;
                        s.unread.push(&chunk);
                        s.last_output = Instant::now();
                        s.total
                    };
                    pending.extend_from_slice(&chunk);
                    flush_at.get_or_insert_with(|| tokio::time::Instant::now() + FLUSH_EVERY);
                    if pending.len() >= FLUSH_BYTES {
                        flush(&mut pending, &mut carry, &happenings).await;
                        flush_at = None;
                        job.bump();
                    }
                    if total > spec.max_output_bytes && !capped {
                        capped = true;
                        kill_group(job.pid);
                    }
                }
                None => reader_done = true,
            },
            () = tokio::time::sleep_until(flush_at.unwrap_or(far)), if flush_at.is_some() => {
                flush(&mut pending, &mut carry, &happenings).await;
                flush_at = None;
                job.bump();
            }
            s = &mut exited, if status.is_none() => {
                status = Some(s.ok().flatten());
                // Whatever the command left running in its group goes with it.
                kill_group(job.pid);
                drain_until = Some(tokio::time::Instant::now() + Duration::from_millis(500));
            }
            () = tokio::time::sleep_until(deadline), if status.is_none() && !timed_out => {
                timed_out = true;
                kill_group(job.pid);
            }
            () = job.kill.cancelled(), if status.is_none() && !kill_sent => {
                kill_sent = true;
                kill_group(job.pid);
            }
            _ = notice.tick(), if status.is_none() => {
                let _ = happenings.try_send(Happening::Running(job.started.elapsed().as_secs()));
            }
            () = tokio::time::sleep_until(drain_until.unwrap_or(far)), if drain_until.is_some() => break,
        }
        if status.is_some() && reader_done {
            break;
        }
    }
    flush(&mut pending, &mut carry, &happenings).await;
    if !carry.is_empty() {
        let _ = happenings.send(Happening::Output(String::from_utf8_lossy(&carry).into_owned())).await;
    }
    *job.writer.lock().unwrap_or_else(|p| p.into_inner()) = None;
    let status = status.flatten();
    let mut s = job.state();
    let killed = s.killed;
    s.exit = Some(Exit {
        code: status.filter(|st| st.signal().is_none()).map(|st| i32::try_from(st.exit_code()).unwrap_or(-1)),
        timed_out,
        killed: killed && !timed_out,
        output_capped: capped,
        duration_ms: i64::try_from(job.started.elapsed().as_millis()).unwrap_or(i64::MAX),
    });
    drop(s);
    job.bump();
}

/// Sends the pending bytes as text, keeping an incomplete UTF-8 sequence for the next chunk.
async fn flush(pending: &mut Vec<u8>, carry: &mut Vec<u8>, happenings: &mpsc::Sender<Happening>) {
    if pending.is_empty() {
        return;
    }
    let mut bytes = std::mem::take(carry);
    bytes.append(pending);
    let valid = match std::str::from_utf8(&bytes) {
        Ok(_) => bytes.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => bytes.len(),
    };
    *carry = bytes.split_off(valid);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    // A full channel means nobody keeps up; the command is not slowed for the panel's sake
    // beyond the channel's bound.
    let _ = happenings.send(Happening::Output(text)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_program_that_cannot_run_is_a_spawn_error_naming_it() {
        let spec = Spec {
            argv: vec!["/nonexistent/perch-sandbox".into(), "--".into(), "true".into()],
            cwd: std::env::temp_dir(),
            env: Vec::new(),
            timeout: Duration::from_secs(5),
            max_output_bytes: 1024,
        };
        let (tx, _rx) = mpsc::channel(4);
        match start(spec, tx) {
            Err(StartError::Spawn { program, .. }) => assert_eq!(program, "/nonexistent/perch-sandbox"),
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("a missing program started"),
        }
    }

    #[test]
    fn capped_keeps_head_and_tail_and_counts_the_rest() {
        let mut c = Capped::new(4, 4);
        c.push(b"abcdefghij");
        c.push(b"kl");
        let text = c.take_text();
        assert!(text.starts_with("abcd"), "{text}");
        assert!(text.ends_with("ijkl"), "{text}");
        assert!(text.contains("4 bytes of output left out"), "{text}");
        assert!(c.is_empty());
    }

    #[test]
    fn escapes_are_removed_for_the_model() {
        assert_eq!(plain_text(b"\x1b[1;31mred\x1b[0m\r\nnext\x1b]0;title\x07!"), "red\nnext!");
    }
}
