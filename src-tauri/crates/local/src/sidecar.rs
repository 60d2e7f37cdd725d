//! One running `perch-llm` process: requests written to its stdin, replies read from its stdout
//! and routed to whoever asked by request id, its stderr into Perch's log. When the process ends
//! every open request sees its channel close, and the exit (status or signal) is described.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use perch_llm_protocol::wire::{self, GpuDevice, Reply, Request, RequestId};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::{mpsc, oneshot, watch};

/// How long the process may take to say it is ready (it loads no model at start).
const READY_WITHIN: Duration = Duration::from_secs(30);
/// stderr lines kept to explain a crash.
const STDERR_KEPT: usize = 12;

type Routes = Arc<Mutex<HashMap<RequestId, mpsc::UnboundedSender<Reply>>>>;

pub struct Sidecar {
    pid: u32,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    routes: Routes,
    next_id: AtomicU64,
    child: Arc<Mutex<Option<Child>>>,
    /// Set once the process has ended: how it ended.
    exit: watch::Receiver<Option<String>>,
    /// Perch asked it to stop (so its end is not a crash).
    stopping: AtomicBool,
    gpus: OnceLock<Gpus>,
}

/// The graphics cards the process found (its `ready` line), and why none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gpus {
    pub devices: Vec<GpuDevice>,
    pub none_because: Option<String>,
}

impl std::fmt::Debug for Sidecar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sidecar").field("pid", &self.pid).finish_non_exhaustive()
    }
}

/// Why the runtime could not be started or spoken to.
#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    #[error("could not start {}: {source}", .program.display())]
    Spawn { program: PathBuf, source: std::io::Error },
    #[error("{} stopped as it started: {how}", .program.display())]
    EndedAtStart { program: PathBuf, how: String },
    #[error("{} did not start within {secs} s", .program.display())]
    SlowStart { program: PathBuf, secs: u64 },
    #[error("the local model runtime is stopping")]
    Stopping,
    #[error("the local model runtime is not running ({how})")]
    NotRunning { how: String },
}

impl Sidecar {
    /// Starts the program and waits for its `ready` line. `on_exit` runs once the process has
    /// ended, with how it ended and whether Perch had asked it to stop. A panic in it writes a
    /// crash report to `crash_dir`.
    pub async fn spawn(
        program: &Path,
        crash_dir: Option<&Path>,
        on_exit: impl FnOnce(String, bool) + Send + 'static,
    ) -> Result<Arc<Self>, SidecarError> {
        let mut command = tokio::process::Command::new(program);
        if let Some(dir) = crash_dir {
            command.env(perch_crash::DIR_ENV, dir);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| SidecarError::Spawn { program: program.to_owned(), source })?;
        let pid = child.id().unwrap_or_default();
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (exit_tx, exit) = watch::channel(None);
        let sidecar = Arc::new(Self {
            pid,
            stdin: tokio::sync::Mutex::new(stdin),
            routes: Routes::default(),
            next_id: AtomicU64::new(1),
            child: Arc::new(Mutex::new(Some(child))),
            exit,
            stopping: AtomicBool::new(false),
            gpus: OnceLock::new(),
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = stderr {
            tokio::spawn(log_stderr(stderr, tail.clone()));
        }
        let (ready_tx, ready) = oneshot::channel();
        let Some(stdout) = stdout else {
            // Piped above, so always there; said plainly if a platform ever differs.
            let how = "it has no output pipe".to_owned();
            return Err(SidecarError::EndedAtStart { program: program.to_owned(), how });
        };
        tokio::spawn(read_replies(
            stdout,
            Arc::downgrade(&sidecar),
            sidecar.routes.clone(),
            ready_tx,
            exit_tx,
            tail,
            on_exit,
        ));
        match tokio::time::timeout(READY_WITHIN, ready).await {
            Ok(Ok(gpus)) => {
                let _ = sidecar.gpus.set(gpus);
                Ok(sidecar)
            }
            Ok(Err(_)) => {
                Err(SidecarError::EndedAtStart { program: program.to_owned(), how: sidecar.exit_reason() })
            }
            Err(_) => {
                sidecar.kill();
                Err(SidecarError::SlowStart { program: program.to_owned(), secs: READY_WITHIN.as_secs() })
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn gpus(&self) -> Gpus {
        self.gpus.get().cloned().unwrap_or_default()
    }

    pub fn is_alive(&self) -> bool {
        self.exit.borrow().is_none()
    }

    /// How the process ended ("was killed by signal 9"), or that it is still running.
    pub fn exit_reason(&self) -> String {
        self.exit.borrow().clone().unwrap_or_else(|| "it is still running".into())
    }

    /// Sends the request `make` builds with a fresh id; its replies arrive on the receiver,
    /// which closes when the request is over or the process ends.
    pub async fn request(
        &self,
        make: impl FnOnce(RequestId) -> Request,
    ) -> Result<(RequestId, mpsc::UnboundedReceiver<Reply>), SidecarError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = mpsc::unbounded_channel();
        self.routes.lock().unwrap_or_else(|p| p.into_inner()).insert(id, tx);
        if let Err(e) = self.write(&make(id)).await {
            self.routes.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            return Err(e);
        }
        Ok((id, rx))
    }

    /// Cancels request `id` (its `done` still comes, within a token).
    pub async fn cancel(&self, id: RequestId) {
        let _ = self.write(&Request::Cancel { id }).await;
    }

    async fn write(&self, request: &Request) -> Result<(), SidecarError> {
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else { return Err(SidecarError::Stopping) };
        pipe.write_all(wire::line(request).as_bytes())
            .await
            .map_err(|_| SidecarError::NotRunning { how: self.exit_reason() })
    }

    /// Closes its stdin (it exits by itself) and waits up to `grace` before killing it.
    pub async fn stop(&self, grace: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        self.stdin.lock().await.take();
        let mut exit = self.exit.clone();
        if tokio::time::timeout(grace, exit.wait_for(Option::is_some)).await.is_err() {
            self.kill();
            let _ = tokio::time::timeout(grace, exit.wait_for(Option::is_some)).await;
        }
    }

    pub fn kill(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Some(child) = self.child.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            let _ = child.start_kill();
        }
    }
}

async fn read_replies(
    stdout: tokio::process::ChildStdout,
    sidecar: std::sync::Weak<Sidecar>,
    routes: Routes,
    ready: oneshot::Sender<Gpus>,
    exit: watch::Sender<Option<String>>,
    tail: Arc<Mutex<VecDeque<String>>>,
    on_exit: impl FnOnce(String, bool),
) {
    let mut ready = Some(ready);
    let mut lines = BufReader::new(stdout).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let reply = match serde_json::from_str::<Reply>(&line) {
            Ok(reply) => reply,
            Err(e) => {
                tracing::warn!(target: "perch_llm", error = %e, line = %line.chars().take(200).collect::<String>(), "not a reply");
                continue;
            }
        };
        if let Reply::Ready { devices, no_gpu, .. } = reply {
            if let Some(ready) = ready.take() {
                let _ = ready.send(Gpus { devices, none_because: no_gpu });
            }
            continue;
        }
        let Some(id) = reply.request() else {
            tracing::warn!(target: "perch_llm", ?reply, "a reply to no request");
            continue;
        };
        let last = matches!(
            reply,
            Reply::Done { .. } | Reply::Error { .. } | Reply::Loaded { .. } | Reply::Unloaded { .. }
        );
        let mut routes = routes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(route) = routes.get(&id) {
            let _ = route.send(reply);
        }
        if last {
            routes.remove(&id);
        }
    }
    // The process closed stdout: it is ending. Say how.
    let child = sidecar.upgrade().and_then(|s| s.child.lock().unwrap_or_else(|p| p.into_inner()).take());
    let mut how = match child {
        Some(mut child) => match child.wait().await {
            Ok(status) => describe(status),
            Err(e) => format!("could not be waited for ({e})"),
        },
        None => "ended".to_owned(),
    };
    let last_words: Vec<String> = tail.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect();
    if let Some(line) = last_words.last() {
        how.push_str(&format!("; its last words: {line}"));
    }
    let asked = sidecar.upgrade().is_some_and(|s| s.stopping.load(Ordering::SeqCst));
    routes.lock().unwrap_or_else(|p| p.into_inner()).clear();
    let _ = exit.send(Some(how.clone()));
    on_exit(how, asked);
}

fn describe(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return format!("was killed by signal {signal}");
    }
    match status.code() {
        Some(0) => "exited".to_owned(),
        Some(code) => format!("exited with status {code}"),
        None => "ended".to_owned(),
    }
}

async fn log_stderr(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::info!(target: "perch_llm", "{line}");
        let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
        if tail.len() == STDERR_KEPT {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}
