//! The list of commands and events the UI may use, and the TypeScript bindings generated from
//! them (`ui/src/bindings.ts`). The command list below is the only one: `build.rs` reads it to
//! make each command a permission, and tests keep the checked-in bindings and the
//! capabilities in step with it.

use tauri_specta::{collect_commands, collect_events};

use crate::add_link::AddLinkArrived;
use crate::commands::{
    app, apps, capture, chat, desktop, files, google, history, knowledge, local, logs, memories, models,
    permissions, review, speech, terminal, tools, update, voice, window,
};
use crate::events::{
    CaptureFailed, CapturesChanged, IndicatorUpdate, McpChanged, NavigateRequested, QuestionEvent,
    ReviewArrived, SelectionTaken, SpeechUpdate, VoiceUpdate, WindowModeChanged,
};
use crate::update::UpdateChanged;
use crate::window::apps::McpAppStopped;

pub fn builder() -> tauri_specta::Builder<tauri::Wry> {
    tauri_specta::Builder::<tauri::Wry>::new()
        .commands(collect_commands![
            app::app_status,
            app::desktop_status,
            app::start_at_login,
            app::set_start_at_login,
            app::start_at_login_offered,
            app::get_settings,
            app::set_theme,
            app::ui_language,
            app::set_language,
            app::set_text_size,
            app::quit_app,
            window::get_window_mode,
            window::set_window_mode,
            window::hide_window,
            window::page_holds_unsent,
            window::set_hidden_settings,
            window::ui_ready,
            history::history_list,
            history::history_search,
            history::history_get,
            history::history_rename,
            history::history_delete,
            app::open_url,
            review::review_latest,
            review::review_get,
            review::review_versions,
            review::review_open_reference,
            review::chat_references,
            review::chat_open_reference,
            review::review_commit,
            review::set_selection,
            review::review_socket_status,
            review::set_review_settings,
            chat::chat_send,
            chat::chat_stop,
            chat::chat_attach,
            chat::attachment_image,
            chat::conversation_view,
            chat::conversation_markdown,
            chat::conversation_export,
            models::models_list,
            models::set_provider_settings,
            models::set_model_settings,
            models::prices,
            models::provider_endpoints,
            models::keys_overview,
            models::key_set,
            models::key_delete,
            tools::mcp_overview,
            tools::mcp_start,
            tools::mcp_stop,
            tools::mcp_restart,
            tools::mcp_refresh,
            tools::mcp_catalog,
            tools::mcp_add_links,
            tools::mcp_add_link_accept,
            tools::mcp_add_link_dismiss,
            tools::mcp_import,
            tools::mcp_remove,
            tools::mcp_set_enabled,
            tools::mcp_logs,
            tools::mcp_sign_in,
            tools::mcp_cancel_sign_in,
            tools::mcp_sign_out,
            google::google_status,
            google::google_set_client,
            google::google_connect,
            google::google_cancel_connect,
            google::google_disconnect,
            tools::mcp_read_resource,
            tools::mcp_get_prompt,
            tools::set_tool_settings,
            apps::mcp_app_open,
            apps::mcp_app_request,
            apps::mcp_app_close,
            apps::mcp_app_calls,
            tools::questions_pending,
            tools::question_answer,
            tools::tools_model_status,
            tools::tools_model_download,
            capture::captures_pending,
            capture::capture_remove,
            crate::selection::selection_take,
            crate::selection::selection_replacement,
            crate::selection::selection_replace,
            capture::capture_start,
            capture::capture_view,
            capture::capture_copy,
            capture::capture_overlay_info,
            capture::capture_overlay_take,
            capture::capture_overlay_cancel,
            capture::shortcut_statuses,
            capture::set_capture_settings,
            desktop::desktop_shortcut,
            desktop::desktop_shortcut_add,
            desktop::desktop_shortcut_remove,
            files::files_search,
            files::files_choose_folder,
            files::files_choose_file,
            files::files_cancel,
            files::files_attach,
            knowledge::knowledge_status,
            knowledge::knowledge_watch,
            knowledge::knowledge_add_folder,
            knowledge::knowledge_remove_folder,
            knowledge::knowledge_reindex,
            knowledge::knowledge_set_paused,
            knowledge::knowledge_pick,
            memories::memories_list,
            memories::memories_add,
            memories::memories_edit,
            memories::memories_forget,
            memories::set_memory_settings,
            local::local_overview,
            local::local_model_download,
            local::local_model_cancel,
            local::local_model_delete,
            local::local_model_add,
            local::local_runtime_stop,
            local::set_local_settings,
            speech::speech_voices,
            speech::speech_voice_download,
            speech::speech_voice_cancel,
            speech::speech_voice_delete,
            speech::speech_devices,
            speech::set_speech_settings,
            speech::speech_choice,
            speech::speak_message,
            speech::speech_stop,
            speech::speech_phrases,
            speech::conversation_set,
            speech::conversation_listen,
            speech::conversation_keep_listening,
            voice::voice_models,
            voice::voice_model_download,
            voice::voice_model_cancel,
            voice::voice_model_delete,
            voice::voice_devices,
            voice::set_voice_settings,
            voice::voice_runs_on,
            voice::voice_start,
            voice::voice_stop,
            voice::voice_cancel,
            voice::voice_shortcut_statuses,
            crate::indicator::indicator_failure,
            voice::typing_path,
            voice::recent_dictations,
            voice::clear_recent_dictations,
            terminal::terminal_subscribe,
            terminal::terminal_history,
            terminal::terminal_kill,
            terminal::terminal_end_session,
            terminal::terminal_status,
            terminal::terminal_choose_folder,
            terminal::set_terminal_settings,
            permissions::permissions_list,
            permissions::permissions_revoke,
            permissions::permissions_add_rule,
            logs::logs_tail,
            logs::logs_open_folder,
            logs::diagnostics_save,
            logs::diagnostics_reveal,
            logs::crash_reports,
            logs::crash_report_text,
            update::update_status,
            update::update_check,
            update::update_download,
            update::update_install,
            update::update_show_package,
            update::set_update_settings,
        ])
        .events(collect_events![
            WindowModeChanged,
            NavigateRequested,
            ReviewArrived,
            McpChanged,
            QuestionEvent,
            CapturesChanged,
            CaptureFailed,
            SpeechUpdate,
            VoiceUpdate,
            IndicatorUpdate,
            AddLinkArrived,
            UpdateChanged,
            SelectionTaken,
            McpAppStopped
        ])
        // Limits the UI checks before sending, so it never offers what the engine refuses.
        .constant("MAX_MESSAGE_CHARS", perch_core::agent::MAX_MESSAGE_CHARS)
        // One shape per type: our serialize and deserialize forms do not differ in ways the UI uses.
        .disable_serde_phases()
        // Ids, token counts and millisecond times are i64 in Rust; all stay far below 2^53.
        .dangerously_cast_bigints_to_number()
}

/// Renders the bindings to TypeScript source.
#[cfg(test)]
fn render() -> Result<String, Box<dyn std::error::Error>> {
    // Tests render in parallel: one file per call.
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = std::env::temp_dir().join(format!("perch-bindings-{}-{call}.ts", std::process::id()));
    builder().export(
        specta_typescript::Typescript::default()
            .header("// Generated from the Rust types by `make bindings`. Do not edit.\n// @ts-nocheck"),
        &tmp,
    )?;
    let text = std::fs::read_to_string(&tmp)?;
    let _ = std::fs::remove_file(&tmp);
    Ok(text)
}

#[cfg(test)]
#[path = "command_list.rs"]
mod command_list;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    /// The commands the generated bindings invoke: `__TAURI_INVOKE("name"` or
    /// `__TAURI_INVOKE<T>("name"`.
    fn invoked(bindings: &str) -> BTreeSet<String> {
        bindings
            .split("__TAURI_INVOKE")
            .skip(1)
            .filter_map(|rest| rest.split_once("(\"")?.1.split_once('"').map(|(name, _)| name.to_owned()))
            .collect()
    }

    /// The list in `collect_commands!` (what `build.rs` turns into permissions) is what the
    /// bindings call, and the capabilities grant exactly those commands, each to some window.
    #[test]
    fn one_command_list_for_build_bindings_and_capabilities() {
        let listed: BTreeSet<String> = super::command_list::commands_in(include_str!("bindings.rs"))
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(listed, invoked(&super::render().expect("bindings render")));

        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("capabilities");
        let mut granted = BTreeSet::new();
        for entry in std::fs::read_dir(&dir).expect("capabilities folder") {
            let path = entry.expect("entry").path();
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
            for permission in
                json["permissions"].as_array().expect("permissions").iter().filter_map(|p| p.as_str())
            {
                // Plugin and core permissions are `plugin:...`; the app's own are `allow-<command>`.
                if let Some(name) = permission.strip_prefix("allow-") {
                    let name = name.replace('-', "_");
                    assert!(
                        listed.contains(&name),
                        "{} grants {permission}, which is no command",
                        path.display()
                    );
                    granted.insert(name);
                }
            }
        }
        let ungranted: Vec<_> = listed.difference(&granted).collect();
        assert!(
            ungranted.is_empty(),
            "commands no capability grants (the UI cannot call them): {ungranted:?}"
        );
    }

    #[test]
    fn the_command_list_parse_takes_last_segments_and_ignores_spacing() {
        let source = "x collect_commands![\n a::one,\n b::c::two ,three,\n] collect_commands![four]";
        assert_eq!(super::command_list::commands_in(source), ["one", "two", "three"]);
        assert!(super::command_list::commands_in("nothing here").is_empty());
    }

    /// Fails when the checked-in bindings differ from the Rust types; `UPDATE_BINDINGS=1`
    /// (what `make bindings` sets) rewrites them instead.
    #[test]
    fn typescript_bindings_are_up_to_date() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts");
        let fresh = super::render().expect("bindings render");
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &fresh).expect("bindings written");
            return;
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            current == fresh,
            "ui/src/bindings.ts is out of date with the Rust types: run `make bindings`"
        );
    }
}
