// Listing the app's commands makes each one a permission (`allow-<name>`), so the UI can call
// only what capabilities/main.json grants.
const COMMANDS: &[&str] = &[
    "app_status",
    "get_settings",
    "set_theme",
    "quit_app",
    "get_window_mode",
    "set_window_mode",
    "hide_window",
    "ui_ready",
    "history_list",
    "history_search",
    "history_get",
    "history_rename",
    "history_delete",
    "open_url",
    "review_latest",
    "review_get",
    "review_versions",
    "review_open_reference",
    "review_commit",
    "set_selection",
    "review_socket_status",
    "set_review_settings",
    "chat_send",
    "chat_stop",
    "conversation_view",
    "conversation_markdown",
    "conversation_export",
    "models_list",
    "set_provider_settings",
    "set_model_settings",
    "prices",
    "keys_overview",
    "key_set",
    "key_delete",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build script");
}
