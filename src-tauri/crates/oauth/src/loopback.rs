//! The redirect a sign-in comes back to: a one-shot HTTP listener on 127.0.0.1 (RFC 8252
//! section 7.3), on a random port unless a registration fixed one.
//!
//! It answers only `GET /callback` carrying the `state` of the sign-in it waits for: a request
//! with another `state` (an old tab, a forged link) gets an error page and the wait goes on;
//! `error=` (consent refused) ends it with [`CallbackError::Denied`]. Each connection is read on
//! a task of its own, so a browser's speculative connection that never sends a request cannot
//! hold up the real one. The wait is bounded and can be cancelled: nothing waits forever for a
//! tab the user closed.

use std::time::Duration;

use reqwest::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The path the authorization server redirects to.
pub const CALLBACK_PATH: &str = "/callback";
/// How long a browser gets to send its request once connected.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The most a request head may hold (a callback URL is well under this).
const MAX_HEAD: usize = 16 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LoopbackError {
    #[error(
        "port {0} on 127.0.0.1 is in use, and this server's sign-in must come back to it: close what \
         uses it (or change `redirectPort`) and sign in again"
    )]
    PortInUse(u16),
    #[error("could not listen on 127.0.0.1 for the sign-in's return: {0}")]
    Io(#[from] std::io::Error),
}

/// How a wait for the browser ended without a code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    /// The authorization server sent the user back with an error (consent refused, ...).
    #[error("the sign-in was not completed: {}", .description.as_deref().unwrap_or(.error))]
    Denied { error: String, description: Option<String> },
    #[error("no answer came from the browser within {} minutes", .0.as_secs() / 60)]
    TimedOut(Duration),
    #[error("the sign-in was cancelled")]
    Cancelled,
}

pub struct Loopback {
    listener: TcpListener,
    port: u16,
}

impl Loopback {
    /// Listens on `port`, or on a port the system picks.
    pub async fn bind(port: Option<u16>) -> Result<Self, LoopbackError> {
        let listener = match TcpListener::bind(("127.0.0.1", port.unwrap_or(0))).await {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                return Err(LoopbackError::PortInUse(port.unwrap_or(0)));
            }
            Err(e) => return Err(e.into()),
        };
        let port = listener.local_addr()?.port();
        Ok(Self { listener, port })
    }

    /// The redirect URI to register and to send in the authorization request.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits for the browser to come back with `state`, and returns the whole callback URL
    /// (with `code`, and `iss` when the server sends it).
    pub async fn wait(
        self,
        state: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<String, CallbackError> {
        let (tx, mut rx) = mpsc::channel::<Result<String, CallbackError>>(4);
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    let Ok((socket, _)) = accepted else { continue };
                    let (tx, state, port) = (tx.clone(), state.to_owned(), self.port);
                    tokio::spawn(async move {
                        if let Some(outcome) = answer(socket, &state, port).await {
                            let _ = tx.send(outcome).await;
                        }
                    });
                }
                Some(outcome) = rx.recv() => return outcome,
                () = &mut deadline => return Err(CallbackError::TimedOut(timeout)),
                () = cancel.cancelled() => return Err(CallbackError::Cancelled),
            }
        }
    }
}

/// Reads one request and answers it; `Some` when it ends the wait.
async fn answer(mut socket: TcpStream, state: &str, port: u16) -> Option<Result<String, CallbackError>> {
    let target = tokio::time::timeout(READ_TIMEOUT, request_target(&mut socket)).await.ok().flatten()?;
    let url = Url::parse(&format!("http://127.0.0.1:{port}{target}")).ok()?;
    if url.path() != CALLBACK_PATH {
        respond(&mut socket, "404 Not Found", "Not found", "This address only receives Perch's sign-ins.")
            .await;
        return None;
    }
    let query = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    if query("state").as_deref() != Some(state) {
        respond(
            &mut socket,
            "400 Bad Request",
            "Not the sign-in Perch is waiting for",
            "This link belongs to another or an earlier sign-in. Start the sign-in again from Perch.",
        )
        .await;
        return None;
    }
    if let Some(error) = query("error") {
        let description = query("error_description");
        respond(
            &mut socket,
            "200 OK",
            "Sign-in not completed",
            &format!(
                "The server said: {}. You can close this tab and try again from Perch.",
                description.as_deref().unwrap_or(&error)
            ),
        )
        .await;
        return Some(Err(CallbackError::Denied { error, description }));
    }
    if query("code").is_none() {
        respond(
            &mut socket,
            "400 Bad Request",
            "No sign-in code",
            "The server sent no code. Try again from Perch.",
        )
        .await;
        return None;
    }
    respond(&mut socket, "200 OK", "Signed in", "Perch has what it needs. You can close this tab.").await;
    Some(Ok(url.to_string()))
}

/// The target of a `GET` request, or `None` for anything else.
async fn request_target(socket: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    let line = std::str::from_utf8(&head).ok()?.lines().next()?.to_owned();
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    let target = parts.next()?;
    target.starts_with('/').then(|| target.to_owned())
}

async fn respond(socket: &mut TcpStream, status: &str, title: &str, text: &str) {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} - Perch</title>\
         <style>body{{font:16px system-ui,sans-serif;margin:4em auto;max-width:32em;padding:0 1em}}</style>\
         </head><body><h1>{title}</h1><p>{}</p></body></html>",
        escape(text)
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = socket.write_all(response.as_bytes()).await;
    let _ = socket.shutdown().await;
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(uri: &str) -> (u16, String) {
        let response =
            perch_foundation::http::client_builder().build().unwrap().get(uri).send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    #[tokio::test]
    async fn the_code_comes_back_only_with_the_right_state() {
        let loopback = Loopback::bind(None).await.unwrap();
        let redirect = loopback.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
        let cancel = CancellationToken::new();
        let waiting =
            tokio::spawn(async move { loopback.wait("s-123", Duration::from_secs(30), &cancel).await });
        // A connection that never sends a request holds nothing up.
        let idle = TcpStream::connect(redirect.trim_start_matches("http://").trim_end_matches("/callback"))
            .await
            .unwrap();
        let (status, page) = get(&format!("{redirect}?code=c&state=forged")).await;
        assert_eq!(status, 400);
        assert!(page.contains("Not the sign-in Perch is waiting for"));
        let (status, _) = get(&redirect.replace("/callback", "/other?code=c&state=s-123")).await;
        assert_eq!(status, 404);
        let (status, page) =
            get(&format!("{redirect}?code=the-code&state=s-123&iss=https%3A%2F%2Fas.example")).await;
        assert_eq!(status, 200);
        assert!(page.contains("You can close this tab"));
        let url = waiting.await.unwrap().unwrap();
        let url = Url::parse(&url).unwrap();
        let pairs: Vec<(String, String)> = url.query_pairs().map(|(k, v)| (k.into(), v.into())).collect();
        assert!(pairs.contains(&("code".into(), "the-code".into())));
        assert!(pairs.contains(&("iss".into(), "https://as.example".into())), "iss kept for RFC 9207");
        drop(idle);
    }

    #[tokio::test]
    async fn refused_consent_ends_the_wait_with_the_reason() {
        let loopback = Loopback::bind(None).await.unwrap();
        let redirect = loopback.redirect_uri();
        let cancel = CancellationToken::new();
        let waiting = tokio::spawn(async move { loopback.wait("s", Duration::from_secs(30), &cancel).await });
        let (_, page) =
            get(&format!("{redirect}?error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E&state=s"))
                .await;
        assert!(page.contains("&lt;b&gt;no&lt;/b&gt;"), "the server's words are escaped: {page}");
        assert_eq!(
            waiting.await.unwrap(),
            Err(CallbackError::Denied {
                error: "access_denied".into(),
                description: Some("<b>no</b>".into())
            })
        );
    }

    #[tokio::test]
    async fn a_closed_tab_times_out_and_a_cancel_ends_the_wait() {
        let cancel = CancellationToken::new();
        let loopback = Loopback::bind(None).await.unwrap();
        let timed_out = loopback.wait("s", Duration::from_millis(50), &cancel).await;
        assert_eq!(timed_out, Err(CallbackError::TimedOut(Duration::from_millis(50))));
        let loopback = Loopback::bind(None).await.unwrap();
        cancel.cancel();
        assert_eq!(loopback.wait("s", Duration::from_secs(60), &cancel).await, Err(CallbackError::Cancelled));
    }

    #[tokio::test]
    async fn a_fixed_port_in_use_is_said_plainly() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = taken.local_addr().unwrap().port();
        let err = Loopback::bind(Some(port)).await.err().unwrap();
        assert!(matches!(err, LoopbackError::PortInUse(p) if p == port));
        assert!(err.to_string().contains(&format!("port {port}")));
    }
}
