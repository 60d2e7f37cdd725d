//! A client for the review socket: connect (directly or by discovery), send a request, read
//! the matching response, each step bounded by a timeout.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadHalf, WriteHalf};

use crate::discovery::discovery_candidates;
use crate::protocol::{Request, Response};

trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    #[error("Perch is not running, or its review socket is turned off")]
    NotRunning { tried: Vec<PathBuf> },
    #[error("Perch did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the connection to Perch failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("Perch sent an answer that could not be read: {0}")]
    BadResponse(String),
    #[error("Perch closed the connection without answering")]
    Closed,
}

pub struct Client {
    reader: BufReader<ReadHalf<Box<dyn Stream>>>,
    writer: WriteHalf<Box<dyn Stream>>,
    next_id: u64,
}

impl Client {
    /// Connects to the socket at `path`; a missing socket or a refused connection means Perch
    /// is not there.
    pub async fn connect(path: &Path, timeout: Duration) -> Result<Self, ClientError> {
        let not_running = || ClientError::NotRunning { tried: vec![path.to_path_buf()] };
        let stream = tokio::time::timeout(timeout, open(path))
            .await
            .map_err(|_| ClientError::Timeout(timeout))?
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => not_running(),
                _ => ClientError::Io(e),
            })?;
        let (read, write) = tokio::io::split(stream);
        Ok(Self { reader: BufReader::new(read), writer: write, next_id: 1 })
    }

    /// Tries each discovery candidate in turn; returns the first that answers.
    pub async fn discover(timeout: Duration) -> Result<(Self, PathBuf), ClientError> {
        let candidates = discovery_candidates();
        for path in &candidates {
            if let Ok(client) = Self::connect(path, timeout).await {
                return Ok((client, path.clone()));
            }
        }
        Err(ClientError::NotRunning { tried: candidates })
    }

    /// Sends one request and waits for its response.
    pub async fn request(
        &mut self,
        kind: &str,
        payload: Value,
        timeout: Duration,
    ) -> Result<Response, ClientError> {
        let id = json!(format!("req-{}", self.next_id));
        self.next_id += 1;
        let request = Request { id: id.clone(), kind: kind.to_owned(), payload };
        let mut line = serde_json::to_vec(&request).map_err(|e| ClientError::BadResponse(e.to_string()))?;
        line.push(b'\n');
        let exchange = async {
            self.writer.write_all(&line).await?;
            self.writer.flush().await?;
            loop {
                let mut answer = String::new();
                if self.reader.read_line(&mut answer).await? == 0 {
                    return Err(ClientError::Closed);
                }
                let response: Response =
                    serde_json::from_str(&answer).map_err(|e| ClientError::BadResponse(e.to_string()))?;
                // Answers to requests we gave up on may still arrive; skip them.
                if response.id == id || response.id.is_null() {
                    return Ok(response);
                }
            }
        };
        tokio::time::timeout(timeout, exchange).await.map_err(|_| ClientError::Timeout(timeout))?
    }
}

#[cfg(unix)]
async fn open(path: &Path) -> std::io::Result<Box<dyn Stream>> {
    Ok(Box::new(tokio::net::UnixStream::connect(path).await?))
}

#[cfg(windows)]
async fn open(path: &Path) -> std::io::Result<Box<dyn Stream>> {
    let client = tokio::net::windows::named_pipe::ClientOptions::new().open(path)?;
    Ok(Box::new(client))
}
