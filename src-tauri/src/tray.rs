//! The tray icon: Show/Hide, New chat, Quit.

use tauri::AppHandle;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri_specta::Event;

use crate::events::{NavigateRequested, Route};
use crate::window;

pub fn create(app: &AppHandle) -> tauri::Result<()> {
    let toggle = MenuItem::with_id(app, "toggle", "Show/Hide", true, None::<&str>)?;
    let new_chat = MenuItem::with_id(app, "new_chat", "New chat", true, None::<&str>)?;
    let logs = MenuItem::with_id(app, "logs", "Logs…", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Perch", true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&toggle, &new_chat, &logs, &separator, &quit])?;
    let mut tray = TrayIconBuilder::with_id("perch")
        .tooltip("Perch")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| handle(app, event.id().as_ref()));
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
}

fn handle(app: &AppHandle, id: &str) {
    let result = match id {
        "toggle" => window::toggle(app),
        "new_chat" => window::show(app).map(|()| {
            let _ = NavigateRequested { route: Route::NewChat }.emit(app);
        }),
        "logs" => window::show(app).map(|()| {
            let _ = NavigateRequested { route: Route::Logs }.emit(app);
        }),
        "quit" => {
            app.exit(0);
            Ok(())
        }
        _ => Ok(()),
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, menu = id, "tray action failed");
    }
}
