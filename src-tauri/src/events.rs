//! Broadcast events from the shell to the UI, for things that happen to the whole app. Streams
//! for one request (an answer's tokens, a download's progress) go over that request's Channel.

use perch_core::window_state::WindowMode;
use serde::{Deserialize, Serialize};

/// The window entered or left mini mode (from the button, the shortcut or the tray).
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct WindowModeChanged {
    pub mode: WindowMode,
}

/// The tray or another process asked the UI to show a page.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct NavigateRequested {
    pub route: Route,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// A fresh, empty chat.
    NewChat,
    History,
    Settings,
    Review,
    /// Settings -> Logs (the tray's Logs…).
    Logs,
}

/// Text selected in another application was taken (or could not be): `selection_take` has it.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct SelectionTaken {}

/// A new version of the review arrived over the review socket.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct ReviewArrived {
    pub id: i64,
}

/// An MCP server's status, tools or log changed.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct McpChanged {
    pub event: perch_core::mcp::McpEvent,
}

/// A question for the user was asked, or settled (answered or no longer needed).
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct QuestionEvent {
    pub event: perch_core::questions::QuestionChange,
}

/// The captures waiting for the next question changed; `focus` asks for the input box (a new
/// capture arrived from the shortcut or the overlay).
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct CapturesChanged {
    pub captures: Vec<perch_core::capture::Capture>,
    pub focus: bool,
}

/// A capture started by the shortcut or from outside failed; the message says what to do.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct CaptureFailed {
    pub message: String,
}

/// A dictation's progress (listening, level, partial and final text), from the mic button or
/// the push-to-talk shortcut.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct VoiceUpdate {
    pub update: perch_core::voice::DictationUpdate,
}

/// What the voice reading answers aloud is doing (speaking, finished, stopped, failed).
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct SpeechUpdate {
    pub event: perch_core::speech::SpeechEvent,
}

/// A dictate-anywhere dictation's progress, for the indicator window only: the main window
/// does not listen to it, so partial text never lands in Perch's own box.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct IndicatorUpdate {
    pub update: perch_core::voice::DictationUpdate,
}
