//! Requests that arrive on the local socket: reviews go to the review service, and requests for
//! the app itself (`show`, `toggle`, `screenshot`) to whoever drives the window: the desktop
//! shell attaches and answers them. With no window attached (the engine under the CLI or in
//! tests) they are refused.

use std::sync::{Arc, Mutex};

use perch_ipc::{AppCommand, Command};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::review::SharedReviews;
use crate::review::server::{RequestError, RequestHandler};

/// One request and where its answer goes.
#[derive(Debug)]
pub struct AppRequest {
    pub command: AppCommand,
    pub reply: oneshot::Sender<Result<Value, RequestError>>,
}

#[derive(Debug, Default)]
pub struct AppControl {
    window: Mutex<Option<mpsc::Sender<AppRequest>>>,
}

impl AppControl {
    /// The shell's end: every app request from now on (a later attach replaces this one).
    pub fn attach(&self) -> mpsc::Receiver<AppRequest> {
        let (tx, rx) = mpsc::channel(16);
        *self.window.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
        rx
    }

    /// Hands a request to the window and waits for its answer.
    pub async fn send(&self, command: AppCommand) -> Result<Value, RequestError> {
        let window = self.window.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(window) = window else { return Err(RequestError::NoWindow) };
        let (reply, answer) = oneshot::channel();
        window.send(AppRequest { command, reply }).await.map_err(|_| RequestError::WindowClosed)?;
        answer.await.map_err(|_| RequestError::NoAnswer)?
    }
}

/// Runs when the command line changed a connection (see [`Command::ConnectionsChanged`]).
pub type ConnectionsChanged = Arc<dyn Fn() -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

/// What serves the socket: reviews go to the review service, app requests to the window, and
/// a changed connection to the engine.
pub struct SocketHandler {
    pub reviews: SharedReviews,
    pub control: Arc<AppControl>,
    pub connections_changed: ConnectionsChanged,
}

impl std::fmt::Debug for SocketHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocketHandler")
            .field("reviews", &self.reviews)
            .field("control", &self.control)
            .finish()
    }
}

impl RequestHandler for SocketHandler {
    async fn handle(&self, command: Command) -> Result<Value, RequestError> {
        match command {
            Command::App(app) => self.control.send(app).await,
            Command::ConnectionsChanged => {
                (self.connections_changed)().await;
                Ok(serde_json::json!({ "applied": true }))
            }
            review => self.reviews.handle(review).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use perch_ipc::ScreenshotMode;
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn requests_reach_the_attached_window_or_are_refused() {
        let control = AppControl::default();
        let refused = control.send(AppCommand::Show).await.unwrap_err();
        assert!(matches!(refused, RequestError::NoWindow), "{refused}");
        assert!(refused.to_string().contains("no window"));

        let mut window = control.attach();
        tokio::spawn(async move {
            while let Some(request) = window.recv().await {
                let _ = request.reply.send(Ok(json!({ "got": format!("{:?}", request.command) })));
            }
        });
        let mode = Some(ScreenshotMode::Window);
        let answer = control.send(AppCommand::Screenshot { mode }).await.unwrap();
        assert_eq!(answer, json!({ "got": "Screenshot { mode: Some(Window) }" }));
    }
}
