//! The MCP handshake: newest protocol first (`server/discover`), falling back to `initialize`
//! on anything but a valid discover result, and its failures said in a sentence a person can
//! act on.
//!
//! rmcp's automatic mode falls back only when `server/discover` is answered with a JSON-RPC
//! error; several servers answer unknown methods with an empty result `{}` instead, which it
//! treats as fatal. The official Python SDK falls back unless it has clear proof of a server on
//! the new protocol, so [`Handshaking`] turns any other answer to the probe into the "method not
//! found" error an older server should have sent, and rmcp falls back on the same connection.

use std::borrow::Cow;
use std::time::Duration;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, JsonRpcMessage, ProtocolVersion,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::{ClientLifecycleMode, RoleClient};

use super::handler::PerchClient;

pub(crate) type Client = RunningService<RoleClient, PerchClient>;

pub(crate) fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

/// A transport that watches the `server/discover` probe (see the module's note).
pub(crate) struct Handshaking<T> {
    inner: T,
    probe: Option<rmcp::model::RequestId>,
}

impl<T> Handshaking<T> {
    pub fn new(inner: T) -> Self {
        Self { inner, probe: None }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Handshaking<T> {
    type Error = T::Error;

    // rmcp names the transport in its errors; the default is the Rust type name.
    fn name() -> Cow<'static, str> {
        "connection".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::DiscoverRequest(_))
        {
            self.probe = Some(request.id.clone());
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = self.inner.receive().await?;
        let Some(probe) = &self.probe else { return Some(message) };
        Some(match message {
            JsonRpcMessage::Response(response) if response.id == *probe => {
                self.probe = None;
                if matches!(response.result, ServerResult::DiscoverResult(_)) {
                    JsonRpcMessage::Response(response)
                } else {
                    let error = ErrorData::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        "server/discover was answered without a discover result",
                        None,
                    );
                    JsonRpcMessage::error(error, Some(response.id))
                }
            }
            JsonRpcMessage::Error(error) if error.id.as_ref() == Some(probe) => {
                self.probe = None;
                JsonRpcMessage::Error(error)
            }
            other => other,
        })
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Why a start failed, in words, and whether trying again can help.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub message: String,
    /// The server wants credentials: retrying with the same ones cannot work.
    pub needs_auth: bool,
    /// Its `WWW-Authenticate` challenge, where it sent one: where and how to sign in.
    pub challenge: Option<String>,
}

impl Failure {
    fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), needs_auth: false, challenge: None }
    }
}

/// Runs the handshake within `timeout`.
pub(crate) async fn complete(
    connecting: impl Future<Output = Result<Client, ClientInitializeError>>,
    timeout: Duration,
) -> Result<Client, Failure> {
    match tokio::time::timeout(timeout, connecting).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(describe(&e)),
        Err(_) => Err(Failure::new(format!(
            "it did not complete the MCP handshake within {} s (is it an MCP server, and does it \
             write only protocol messages to stdout?)",
            timeout.as_secs()
        ))),
    }
}

/// A handshake error as a short sentence: no Rust type names, no debug dumps of messages.
pub(crate) fn describe(error: &ClientInitializeError) -> Failure {
    use ClientInitializeError as E;
    match error {
        E::LegacyFallbackFailed { fallback, .. } => describe(fallback),
        E::TransportError { error, .. } => transport_failure(&*error.error),
        E::ConnectionClosed(_) => {
            Failure::new("it exited (or closed its connection) during the MCP handshake")
        }
        E::JsonRpcError(data) => Failure::new(format!("it refused the MCP handshake: {}", data.message)),
        E::NoCompatibleProtocolVersion { server_supported, .. } => {
            let versions: Vec<String> = server_supported.iter().map(ToString::to_string).collect();
            Failure::new(format!(
                "it speaks MCP {}, and Perch speaks 2025-11-25 and newer",
                versions.join(", ")
            ))
        }
        E::Cancelled => Failure::new("the start was cancelled"),
        _ => Failure::new("it answered the MCP handshake with something that is not MCP"),
    }
}

/// The cause of a transport failure, found by walking the error's sources.
fn transport_failure(error: &(dyn std::error::Error + 'static)) -> Failure {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(http) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            match http {
                StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_) => {
                    return needs_auth(http.auth_challenge().map(str::to_owned));
                }
                StreamableHttpError::UnexpectedServerResponse(text)
                    if text.starts_with("HTTP 401") || text.starts_with("HTTP 403") =>
                {
                    return needs_auth(None);
                }
                StreamableHttpError::HttpStatus(status) => {
                    return Failure::new(format!("it answered with HTTP status {}", status.status));
                }
                StreamableHttpError::UnexpectedServerResponse(text) => {
                    let text: String = text.chars().take(200).collect();
                    return Failure::new(format!("it answered with {text}"));
                }
                _ => {}
            }
        }
        if let Some(e) = e.downcast_ref::<reqwest::Error>() {
            if e.is_connect() {
                return Failure::new("nothing answers at its address (is the server running?)");
            }
            if e.is_timeout() {
                return Failure::new("it did not answer in time");
            }
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            if matches!(
                io.kind(),
                K::BrokenPipe | K::UnexpectedEof | K::ConnectionReset | K::ConnectionAborted
            ) {
                return Failure::new("it exited (or closed its connection) during the MCP handshake");
            }
        }
        if e.source().is_none() {
            return Failure::new(format!("the connection failed: {e}"));
        }
        current = e.source();
    }
    Failure::new("the connection failed")
}

/// A server that refused the request for want of (better) credentials. The supervisor words
/// it for the server's case: sign in, or a token header that was refused.
fn needs_auth(challenge: Option<String>) -> Failure {
    Failure { message: NEEDS_SIGN_IN.to_owned(), needs_auth: true, challenge }
}

/// What a server that wants credentials is said to need.
pub(crate) const NEEDS_SIGN_IN: &str = "it needs you to sign in";
