//! Starting one connection: find the program (bundled servers beside our own executable,
//! package runners such as `npx` on the login PATH), spawn it in its own process group with stderr
//! captured, or open a Streamable HTTP session; then the MCP handshake, newest protocol first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::ClientServiceExt;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::process::ChildStderr;

use super::config::Transport;
use super::handler::PerchClient;
pub(crate) use super::handshake::Client;
use super::handshake::{self, Handshaking, lifecycle};

/// The longest a server may take to start and answer the handshake (less when its tool
/// timeout is shorter).
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a server did not start; a permanent failure (a missing program, a server that wants
/// credentials) is not retried.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LaunchError {
    #[error(transparent)]
    Program(#[from] ResolveError),
    #[error("could not start {}: {source}", .program.display())]
    Spawn { program: PathBuf, source: std::io::Error },
    #[error("header {name:?}: {message}")]
    Header { name: String, message: String },
    #[error("could not set up an HTTP client: {0}")]
    HttpClient(#[from] reqwest::Error),
    #[error("{}", .0.message)]
    Handshake(handshake::Failure),
}

impl LaunchError {
    /// Whether starting again cannot help: a missing program stays missing, and a server that
    /// wants credentials will want them on every retry; a bad header is the user's to fix.
    pub fn permanent(&self) -> bool {
        match self {
            Self::Program(_) | Self::Header { .. } => true,
            Self::Handshake(f) => f.needs_auth,
            Self::Spawn { .. } | Self::HttpClient(_) => false,
        }
    }
}

/// Why a server's program could not be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// A path was given and nothing is there.
    #[error("{0} does not exist")]
    NoSuchFile(PathBuf),
    /// A bare name not on the login shell's PATH; `hint` says what to install, when known.
    #[error("{command} was not found on your PATH.{hint}")]
    NotOnPath { command: String, hint: &'static str },
}

impl From<handshake::Failure> for LaunchError {
    fn from(f: handshake::Failure) -> Self {
        Self::Handshake(f)
    }
}

pub(crate) struct Launched {
    pub client: Client,
    pub pid: Option<u32>,
}

/// Resolves a command as the user's shell would, with bundled servers found first.
pub(crate) async fn resolve(command: &str) -> Result<PathBuf, ResolveError> {
    let path = Path::new(command);
    if path.components().count() > 1 {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(ResolveError::NoSuchFile(path.into()))
        };
    }
    if command.starts_with("perch-mcp-")
        && let Some(found) = perch_foundation::paths::bundled_program(command)
    {
        return Ok(found);
    }
    perch_foundation::shell_path::find(command).await.ok_or_else(|| {
        let hint = match command {
            "npx" | "node" | "npm" => " Install Node.js (https://nodejs.org) and start Perch again.",
            "uvx" | "uv" => " Install uv (https://docs.astral.sh/uv/) and start Perch again.",
            "python" | "python3" => " Install Python 3 and start Perch again.",
            _ => "",
        };
        ResolveError::NotOnPath { command: command.to_owned(), hint }
    })
}

/// Spawns or connects, and completes the handshake. `stderr` receives the child's stderr;
/// `signed_in` carries a Streamable HTTP server's stored sign-in (see `sign_in`).
pub(crate) async fn launch(
    transport: &Transport,
    handler: PerchClient,
    extra_env: &[(String, String)],
    start_timeout: Duration,
    on_stderr: impl FnOnce(ChildStderr) + Send,
    signed_in: Option<AuthClient<reqwest::Client>>,
) -> Result<Launched, LaunchError> {
    match transport {
        Transport::Stdio { command, args, env, cwd } => {
            let program = resolve(command).await?;
            let path = perch_foundation::shell_path::login_path().await.clone();
            let mut cmd = process_wrap::tokio::CommandWrap::with_new(&program, |c| {
                c.args(args).env("PATH", &path).envs(extra_env.iter().map(|(k, v)| (k, v))).envs(env);
                if let Some(dir) = cwd {
                    c.current_dir(dir);
                }
            });
            // Its own process group: stopping it also stops what it started (npx -> node).
            #[cfg(unix)]
            cmd.wrap(process_wrap::tokio::ProcessGroup::leader());
            cmd.wrap(process_wrap::tokio::KillOnDrop);
            let (child, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|source| LaunchError::Spawn { program: program.clone(), source })?;
            let pid = child.id();
            if let Some(stderr) = stderr {
                on_stderr(stderr);
            }
            let connecting = handler.serve_with_lifecycle(Handshaking::new(child), lifecycle());
            let client = handshake::complete(connecting, start_timeout).await?;
            Ok(Launched { client, pid })
        }
        Transport::Http { url, headers, .. } => {
            let mut custom = HashMap::new();
            let mut auth = None;
            for (name, value) in headers {
                // rmcp sends the bearer token itself; a pasted "Authorization: Bearer x" maps to it.
                if name.eq_ignore_ascii_case("authorization") {
                    auth = Some(value.strip_prefix("Bearer ").unwrap_or(value).to_owned());
                    continue;
                }
                let bad = |e: &dyn std::fmt::Display| LaunchError::Header {
                    name: name.clone(),
                    message: e.to_string(),
                };
                let value = http::HeaderValue::try_from(value.as_str()).map_err(|e| bad(&e))?;
                let name = http::HeaderName::try_from(name.as_str()).map_err(|e| bad(&e))?;
                custom.insert(name, value);
            }
            let mut config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            // A token the user gave wins over a sign-in.
            let connecting = match (auth, signed_in) {
                (Some(token), _) => {
                    config = config.auth_header(token);
                    let transport = StreamableHttpClientTransport::with_client(http_client()?, config);
                    handshake::complete(
                        handler.serve_with_lifecycle(Handshaking::new(transport), lifecycle()),
                        start_timeout,
                    )
                    .await
                }
                (None, Some(signed_in)) => {
                    let transport = StreamableHttpClientTransport::with_client(signed_in, config);
                    handshake::complete(
                        handler.serve_with_lifecycle(Handshaking::new(transport), lifecycle()),
                        start_timeout,
                    )
                    .await
                }
                (None, None) => {
                    let transport = StreamableHttpClientTransport::with_client(http_client()?, config);
                    handshake::complete(
                        handler.serve_with_lifecycle(Handshaking::new(transport), lifecycle()),
                        start_timeout,
                    )
                    .await
                }
            };
            Ok(Launched { client: connecting?, pid: None })
        }
    }
}

/// The client for a Streamable HTTP server, configured as rmcp's default one: no idle pool
/// (a reused half-read connection stalls on delayed ACKs) and same-origin 307/308 redirects.
pub(crate) fn http_client() -> Result<reqwest::Client, reqwest::Error> {
    let same_origin = reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().map(reqwest::Url::origin);
        let allowed = matches!(attempt.status().as_u16(), 307 | 308)
            && attempt.previous().len() <= 10
            && first.is_some_and(|o| o == attempt.url().origin());
        if allowed { attempt.follow() } else { attempt.stop() }
    });
    perch_foundation::http::client_builder().pool_max_idle_per_host(0).redirect(same_origin).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_program_is_told_apart_from_a_missing_path_and_never_retried() {
        let err = resolve("/surely/not/here/server").await.unwrap_err();
        assert_eq!(err, ResolveError::NoSuchFile("/surely/not/here/server".into()));
        let err = resolve("perch-surely-missing-program").await.unwrap_err();
        assert!(
            matches!(&err, ResolveError::NotOnPath { command, .. } if command == "perch-surely-missing-program")
        );
        assert!(LaunchError::from(err).permanent());
        assert_eq!(resolve("sh").await.unwrap().file_name().unwrap(), "sh");
    }
}
