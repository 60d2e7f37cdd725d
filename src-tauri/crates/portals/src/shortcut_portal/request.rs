//! The portal's Request/Response exchange (`crate::portal::request`), with the answers in the
//! GlobalShortcuts portal's words: `what` names the shortcuts (or, for the RemoteDesktop
//! portal's use, what was asked) in the messages.

use std::collections::HashMap;
use std::future::Future;

use zbus::Connection;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};

use super::PortalError;
use crate::portal::Answer;
pub use crate::portal::request::{close_session, close_session_soon, token};

/// Calls a portal method that answers through a Request and returns the results of a
/// successful Response; a cancel or refusal is an error naming `what`.
pub async fn call<F, Fut>(
    conn: &Connection,
    what: &str,
    method: F,
) -> Result<HashMap<String, OwnedValue>, PortalError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = zbus::Result<OwnedObjectPath>>,
{
    match crate::portal::request::call(conn, method).await? {
        Answer::Success(results) => Ok(results),
        Answer::Cancelled => Err(PortalError::Cancelled(what.to_owned())),
        Answer::Ended => Err(PortalError::Refused(what.to_owned())),
    }
}
