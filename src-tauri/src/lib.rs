//! Perch's desktop shell: wiring only. The engine lives in perch-core; commands in commands/.

mod add_link;
mod bindings;
mod capture;
mod commands;
mod csp;
mod dictation;
mod error;
mod events;
mod indicator;
mod page_process;
mod reviews;
mod selection;
mod shortcuts;
mod speculation;
mod state;
mod tools;
mod tray;
mod update;
mod window;

use std::time::Instant;

use perch_core::autostart::AUTOSTART_ARG;
use perch_core::paths::DataDir;
use perch_core::{Engine, StartError, logging};
use tauri::{Manager, RunEvent};

use crate::state::AppState;
use crate::window::{WindowController, apps, hidden_page};

pub fn run() {
    let started_at = Instant::now();
    // Started by the session's autostart entry: as the bubble, leaving the focus where it is.
    let at_login = std::env::args_os().skip(1).any(|a| a == AUTOSTART_ARG);
    perch_core::crash::install("app");
    let data_dir = DataDir::from_env();
    let _logs = logging::init(data_dir.as_ref().ok().map(DataDir::logs_dir).as_deref(), "info");
    let specta = bindings::builder();
    let mut context = tauri::generate_context!();
    csp::apply_test_hook(&mut context);

    let app = tauri::Builder::default()
        // First, so a second launch hands over to the first before doing anything else.
        .plugin(tauri_plugin_single_instance::init(|app, args, _cwd| {
            // A session's autostart finding Perch already running (started by hand first).
            if args.iter().any(|a| a == AUTOSTART_ARG) {
                tracing::info!("started at login while already running; nothing to show");
                return;
            }
            if let Err(e) = window::show(app) {
                tracing::warn!(error = %e, "could not show the window for a second launch");
            }
        }))
        // Next, so a link a second launch hands over (`perch://mcp/add?...`) reaches it.
        .plugin(tauri_plugin_deep_link::init())
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_global_shortcut::Builder::new().build())
        // Its commands are not granted to the page: the UI goes through `commands::update`,
        // which waits for the user's yes at each step.
        .plugin(tauri_plugin_updater::Builder::new().build())
        .invoke_handler(specta.invoke_handler())
        // Each MCP app's page, once, with its own policy (see apps.rs).
        .register_asynchronous_uri_scheme_protocol(apps::SCHEME, |ctx, request, responder| {
            responder.respond(apps::serve(ctx.app_handle(), &request));
        })
        .setup(move |app| {
            specta.mount_events(app);
            let engine = start_engine(data_dir);
            let state = AppState::new(engine, started_at);
            let engine = state.engine.as_ref().ok().cloned();
            let placement = match &engine {
                Some(engine) => tauri::async_runtime::block_on(engine.settings().get()).window,
                None => Default::default(),
            };
            let first_paint = state.first_paint.clone();
            app.manage(state);
            app.manage(WindowController::new(placement));
            app.manage(shortcuts::Shortcuts::default());
            app.manage(capture::CaptureState::default());
            app.manage(dictation::PushToTalk::default());
            app.manage(perch_typing::recent::RecentDictations::default());
            app.manage(selection::PendingSelection::default());
            app.manage(hidden_page::HiddenPage::default());
            app.manage(commands::logs::LogsState::default());
            app.manage(update::create(app.handle()));
            window::create(app.handle(), at_login)?;
            add_link::start(app);
            if let Some(engine) = &engine {
                reviews::start(app.handle(), engine);
                tools::start(app.handle(), engine, first_paint);
                capture::serve_app_requests(app.handle(), engine);
                // One read of the settings for every global shortcut.
                let settings = tauri::async_runtime::block_on(engine.settings().get());
                capture::bind_shortcuts(app.handle(), &settings.capture);
                dictation::apply_shortcut(app.handle(), &settings.voice);
                // On Wayland, all of them in one request to the desktop.
                app.state::<shortcuts::Shortcuts>().apply(app.handle());
            }
            update::start_background_checks(app.handle());
            let language = match &engine {
                Some(engine) => tauri::async_runtime::block_on(engine.settings().get()).language,
                None => None,
            };
            if let Err(e) = tray::create(app.handle(), language.as_deref()) {
                tracing::warn!(error = %e, "no tray icon on this desktop; use the window's buttons");
            }
            Ok(())
        })
        .build(context)
        .unwrap_or_else(|e| {
            tracing::error!(error = %e, "Perch could not start");
            std::process::exit(1);
        });

    app.run(|app, event| {
        if let RunEvent::Exit = event {
            window::save_now(app);
            if let Ok(engine) = &app.state::<AppState>().engine {
                // Nothing Perch started outlives it: answers are saved, commands, MCP servers
                // and the local model runtime ended (each killed if it lingers).
                tauri::async_runtime::block_on(engine.shutdown(std::time::Duration::from_secs(2)));
            }
            // Last: the package installer may ask for a password, with nothing left running.
            update::install_at_exit(app);
        }
    });
}

/// Opens the engine; a failure is kept (not fatal) so the window can explain it.
fn start_engine(data_dir: Result<DataDir, perch_core::paths::PathsError>) -> Result<Engine, StartError> {
    let result = match data_dir {
        Ok(dir) => tauri::async_runtime::block_on(Engine::start(dir)),
        Err(e) => Err(e.into()),
    };
    if let Err(reason) = &result {
        tracing::error!(%reason, "the engine did not start");
    }
    result
}
