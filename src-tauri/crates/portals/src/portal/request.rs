//! The portal's Request/Response dance. A portal method returns at once with the path of a
//! Request object and answers later with that object's `Response` signal, which may come
//! before the method's reply is read. So, as the portal documentation asks, the path is
//! predicted from the connection's unique name and the `handle_token` Perch chooses, and the
//! `Response` signal is subscribed to there before the method is called.

use std::future::Future;

use futures::StreamExt;
use zbus::Connection;
use zbus::zvariant::OwnedObjectPath;

use super::{Answer, CallError, RequestProxy, ResponseStream, SessionProxy};

/// `Response`'s codes.
const SUCCESS: u32 = 0;
const CANCELLED: u32 = 1;
const ENDED_OTHERWISE: u32 = 2;

/// A fresh token: letters, digits and underscores only, as object path elements require.
pub fn token() -> String {
    format!("perch_{}", uuid::Uuid::new_v4().simple())
}

/// `/org/freedesktop/portal/desktop/request/SENDER/TOKEN`, SENDER being the caller's unique
/// name without its leading ':' and with '.' replaced by '_'.
pub fn request_path(unique_name: &str, token: &str) -> Result<OwnedObjectPath, CallError> {
    let sender = unique_name.trim_start_matches(':').replace('.', "_");
    OwnedObjectPath::try_from(format!("/org/freedesktop/portal/desktop/request/{sender}/{token}"))
        .map_err(|e| CallError::Protocol(format!("request path: {e}")))
}

/// Calls a portal method that answers through a Request (`method` gets the handle_token to put
/// in its options) and returns the Response. Waits as long as the portal takes (a dialog may be
/// open): a caller that must not wait forever puts a time limit around it.
pub async fn call<F, Fut>(conn: &Connection, method: F) -> Result<Answer, CallError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = zbus::Result<OwnedObjectPath>>,
{
    let token = token();
    let unique = conn.unique_name().ok_or_else(|| CallError::NoBus("the connection has no name".into()))?;
    let predicted = request_path(unique.as_str(), &token)?;
    let mut responses = subscribe(conn, predicted.clone()).await?;
    let returned = method(token).await.map_err(call_error)?;
    if returned != predicted {
        // Portals older than the handle_token convention choose the path themselves.
        responses = subscribe(conn, returned).await?;
    }
    let signal = responses
        .next()
        .await
        .ok_or_else(|| CallError::Protocol("the portal went away before it answered".into()))?;
    let args = signal.args()?;
    match args.response {
        SUCCESS => Ok(Answer::Success(args.results)),
        CANCELLED => Ok(Answer::Cancelled),
        ENDED_OTHERWISE => Ok(Answer::Ended),
        code => Err(CallError::Protocol(format!("unknown response code {code}"))),
    }
}

async fn subscribe(conn: &Connection, path: OwnedObjectPath) -> Result<ResponseStream, CallError> {
    let proxy = RequestProxy::builder(conn).path(path)?.build().await?;
    Ok(proxy.receive_response().await?)
}

/// A method that does not exist means no (usable) portal, not a broken one.
fn call_error(e: zbus::Error) -> CallError {
    if let zbus::Error::MethodError(name, text, _) = &e {
        let missing =
            ["ServiceUnknown", "UnknownMethod", "UnknownInterface", "UnknownObject", "NameHasNoOwner"];
        if missing.iter().any(|m| name.as_str().ends_with(m)) {
            return CallError::NoPortal(text.clone().unwrap_or_else(|| name.to_string()));
        }
    }
    CallError::Bus(e)
}

/// Ends a portal session.
pub async fn close_session(conn: &Connection, session: OwnedObjectPath) -> zbus::Result<()> {
    SessionProxy::builder(conn).path(session)?.build().await?.close().await
}

/// Ends a portal session from a destructor, which cannot wait: on the runtime it runs on, if
/// any (without one the desktop still ends the session when the connection goes).
pub fn close_session_soon(conn: &Connection, session: OwnedObjectPath) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let conn = conn.clone();
        runtime.spawn(async move {
            let _ = close_session(&conn, session).await;
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_request_path_is_derived_from_the_unique_name_and_token() {
        let path = super::request_path(":1.42", "perch_ab12").unwrap();
        assert_eq!(path.as_str(), "/org/freedesktop/portal/desktop/request/1_42/perch_ab12");
        let token = super::token();
        assert!(token.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{token}");
        assert_ne!(token, super::token());
    }
}
