//! The review socket: a local server speaking perch-ipc's newline-delimited JSON.
//!
//! Each connection is its own task, so one slow or silent client cannot hold the others:
//! every request line must arrive within the idle timeout, lines over the limit close the
//! connection after an error response, and each request is answered or timed out.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use perch_ipc::{AppCommand, Command, Limits, Response, parse_request};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// What answers requests; the engine's review service in the app, a stub in benchmarks.
pub trait RequestHandler: Send + Sync + 'static {
    fn handle(&self, command: Command) -> impl Future<Output = Result<Value, RequestError>> + Send;
}

/// Why a request on the socket was not done; its sentence is the response's `error`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    #[error("this Perch has no window to show or capture with")]
    NoWindow,
    #[error("Perch's window has closed")]
    WindowClosed,
    #[error("Perch's window did not answer")]
    NoAnswer,
    #[error("the review service does not control the app")]
    NotForReviews,
    /// The window tried and could not (a capture refused, no display), in its own words.
    #[error("{0}")]
    Window(String),
    #[error(transparent)]
    Review(#[from] super::ReviewError),
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub path: PathBuf,
    pub limits: Limits,
    /// How long a connection may take to send a complete request line.
    pub idle_timeout: Duration,
    /// How long a request may take to be answered.
    pub request_timeout: Duration,
    pub max_connections: usize,
}

impl ServerConfig {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            limits: Limits::default(),
            idle_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(5),
            max_connections: 64,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    #[error("another Perch is already serving reviews at {0}")]
    AlreadyServing(PathBuf),
    #[error("the review socket {path} could not be set up: {reason}")]
    Setup { path: PathBuf, reason: String },
}

/// A running server. Stops, and removes its socket, on `stop()` or when dropped.
#[derive(Debug)]
pub struct ReviewServer {
    path: PathBuf,
    shutdown: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
    identity: platform::Identity,
}

impl ReviewServer {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting, waits until the listener is closed, and removes the socket, so a new
    /// server can take the same path at once.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ReviewServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        // Only our own socket: another server may already have bound the same path.
        platform::remove_if_ours(&self.path, &self.identity);
    }
}

/// Binds the socket and starts accepting connections.
pub async fn start<H: RequestHandler>(
    config: ServerConfig,
    handler: Arc<H>,
) -> Result<ReviewServer, ServerError> {
    let (listener, identity) = platform::bind(&config.path).await?;
    let shutdown = CancellationToken::new();
    let path = config.path.clone();
    let task = tokio::spawn(accept_loop(listener, config, handler, shutdown.clone()));
    tracing::info!(path = %path.display(), "review socket listening");
    Ok(ReviewServer { path, shutdown, task: Some(task), identity })
}

async fn accept_loop<H: RequestHandler>(
    mut listener: platform::Listener,
    config: ServerConfig,
    handler: Arc<H>,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let config = Arc::new(config);
    loop {
        let stream = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(stream) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "review socket accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let (handler, config, shutdown) = (handler.clone(), config.clone(), shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = shutdown.cancelled() => {}
                _ = serve_connection(stream, &*handler, &config) => {}
            }
            drop(permit);
        });
    }
    drop(listener);
    tracing::info!("review socket closed");
}

async fn refuse<S: AsyncWrite + Unpin>(mut stream: S) {
    let _ = write_response(&mut stream, &Response::err(Value::Null, "too many connections; try again")).await;
}

/// Serves one connection until it closes, goes quiet, or misbehaves.
pub async fn serve_connection<S, H>(stream: S, handler: &H, config: &ServerConfig)
where
    S: AsyncRead + AsyncWrite + Unpin,
    H: RequestHandler,
{
    let (read, mut write) = tokio::io::split(stream);
    let mut reader = BufReader::new(read);
    loop {
        let line = match tokio::time::timeout(
            config.idle_timeout,
            read_line(&mut reader, config.limits.max_line_bytes),
        )
        .await
        {
            Err(_) => break, // said nothing (or too slowly) for too long
            Ok(Err(_)) | Ok(Ok(Line::Eof)) => break,
            Ok(Ok(Line::TooLong)) => {
                let error = format!("the request line is longer than {} bytes", config.limits.max_line_bytes);
                let _ = write_response(&mut write, &Response::err(Value::Null, error)).await;
                break;
            }
            Ok(Ok(Line::Complete(bytes))) => bytes,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let response = match parse_request(&line, &config.limits) {
            Err((id, e)) => Response::err(id, e.to_string()),
            Ok((id, command)) => {
                let limit = answer_within(&command, config.request_timeout);
                match tokio::time::timeout(limit, handler.handle(command)).await {
                    Ok(Ok(data)) => Response::ok(id, data),
                    Ok(Err(e)) => Response::err(id, e.to_string()),
                    Err(_) => Response::err(id, format!("Perch did not finish within {limit:?}")),
                }
            }
        };
        if !write_response(&mut write, &response).await {
            break;
        }
    }
}

/// How long a request may take: an update check waits for a server, and applying one for its
/// download (the user watches its progress in the app meanwhile).
fn answer_within(command: &Command, usual: Duration) -> Duration {
    match command {
        Command::App(AppCommand::UpdateCheck) => usual.max(Duration::from_secs(60)),
        Command::App(AppCommand::UpdateApply) => usual.max(Duration::from_secs(30 * 60)),
        _ => usual,
    }
}

enum Line {
    Complete(Vec<u8>),
    TooLong,
    Eof,
}

/// Reads up to a newline without ever holding more than `max` bytes of it.
async fn read_line<R: AsyncBufReadExt + Unpin>(reader: &mut R, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() { Line::Eof } else { Line::Complete(line) });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if line.len() + chunk.len() > max {
            return Ok(Line::TooLong);
        }
        line.extend_from_slice(chunk);
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Line::Complete(line));
        }
    }
}

/// Writes one response line; false when the client is gone or not reading.
async fn write_response<W: AsyncWrite + Unpin>(write: &mut W, response: &Response) -> bool {
    let Ok(mut bytes) = serde_json::to_vec(response) else { return false };
    bytes.push(b'\n');
    let send = async {
        write.write_all(&bytes).await?;
        write.flush().await
    };
    matches!(tokio::time::timeout(Duration::from_secs(5), send).await, Ok(Ok(())))
}

#[cfg(unix)]
mod platform {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    use std::path::Path;
    use std::time::Duration;

    use tokio::net::{UnixListener, UnixStream};

    use super::ServerError;

    pub struct Listener(UnixListener);

    /// The socket file's device and inode, to tell our socket from a successor's.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Identity(u64, u64);

    fn identity(path: &Path) -> Option<Identity> {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path).ok().map(|m| Identity(m.dev(), m.ino()))
    }

    pub fn remove_if_ours(path: &Path, ours: &Identity) {
        if identity(path).as_ref() == Some(ours) {
            let _ = std::fs::remove_file(path);
        }
    }

    impl Listener {
        pub async fn accept(&mut self) -> std::io::Result<UnixStream> {
            Ok(self.0.accept().await?.0)
        }
    }

    /// Creates the folder owner-only (0700), replaces a stale socket left by a crash, refuses
    /// to take over a live one, and makes the socket owner-only (0600).
    pub async fn bind(path: &Path) -> Result<(Listener, Identity), ServerError> {
        let setup = |reason: String| ServerError::Setup { path: path.to_path_buf(), reason };
        let dir = path.parent().ok_or_else(|| setup("it has no parent folder".into()))?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| setup(e.to_string()))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| setup(format!("its folder cannot be made private: {e}")))?;
        if path.exists() {
            let probe = tokio::time::timeout(Duration::from_millis(500), UnixStream::connect(path)).await;
            if matches!(probe, Ok(Ok(_))) {
                return Err(ServerError::AlreadyServing(path.to_path_buf()));
            }
            std::fs::remove_file(path)
                .map_err(|e| setup(format!("a stale socket could not be removed: {e}")))?;
            tracing::info!(path = %path.display(), "replaced a stale review socket");
        }
        let listener = UnixListener::bind(path).map_err(|e| setup(e.to_string()))?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| setup(e.to_string()))?;
        let identity = identity(path).ok_or_else(|| setup("the socket vanished after binding".into()))?;
        Ok((Listener(listener), identity))
    }
}

#[cfg(windows)]
mod platform {
    //! A named pipe per user. Compiled on Windows only.
    use std::path::Path;

    use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};

    use super::ServerError;

    pub struct Listener {
        name: String,
        next: NamedPipeServer,
    }

    /// Pipes vanish with their last handle; there is no file to clean up.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Identity;

    pub fn remove_if_ours(_: &Path, _: &Identity) {}

    impl Listener {
        pub async fn accept(&mut self) -> std::io::Result<NamedPipeServer> {
            self.next.connect().await?;
            let fresh = ServerOptions::new().reject_remote_clients(true).create(&self.name)?;
            Ok(std::mem::replace(&mut self.next, fresh))
        }
    }

    pub async fn bind(path: &Path) -> Result<(Listener, Identity), ServerError> {
        let name = path.to_string_lossy().into_owned();
        let next = ServerOptions::new()
            .first_pipe_instance(true)
            .reject_remote_clients(true)
            .create(&name)
            .map_err(|e| match e.kind() {
            std::io::ErrorKind::PermissionDenied => ServerError::AlreadyServing(path.to_path_buf()),
            _ => ServerError::Setup { path: path.to_path_buf(), reason: e.to_string() },
        })?;
        Ok((Listener { name, next }, Identity))
    }
}
