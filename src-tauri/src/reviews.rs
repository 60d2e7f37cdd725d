//! The shell's side of reviews: start the socket with the app, and bring each new review to
//! the user (the panel, out of mini mode when auto-show is on).

use perch_core::Engine;
use perch_core::window_state::WindowMode;
use tauri::{AppHandle, Manager};
use tauri_specta::Event;
use tokio::sync::broadcast::error::RecvError;

use crate::events::{NavigateRequested, ReviewArrived, Route};
use crate::state::AppState;
use crate::window;

pub fn start(app: &AppHandle, engine: &Engine) {
    let outcome = tauri::async_runtime::block_on(engine.apply_review_socket_setting());
    app.state::<AppState>().set_review_socket(outcome);

    let mut updates = engine.reviews().subscribe();
    let (app, engine) = (app.clone(), engine.clone());
    tauri::async_runtime::spawn(async move {
        loop {
            let document = match updates.recv().await {
                Ok(document) => document,
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            };
            let _ = ReviewArrived { id: document.id }.emit(&app);
            if engine.settings().get().await.review.auto_show {
                let shown = window::set_mode(&app, WindowMode::Normal).and_then(|()| window::show(&app));
                if let Err(e) = shown {
                    tracing::warn!(error = %e, "could not show the window for a review");
                }
                let _ = NavigateRequested { route: Route::Review }.emit(&app);
            }
        }
    });
}
