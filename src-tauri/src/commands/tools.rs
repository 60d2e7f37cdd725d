//! MCP servers (Settings -> MCP servers), Settings -> Tools, and the user's answers to
//! questions (tool approvals, elicitation, sampling).

use perch_core::agent::picker::{DownloadProgress, ModelStatus};
use perch_core::engine::add_link_save;
use perch_core::mcp::catalog::{CATALOG, CatalogEntry};
use perch_core::mcp::sign_in::SignInView;
use perch_core::mcp::{ConfigProblem, ServerView};
use perch_core::questions::{Answer, OpenQuestion};
use perch_core::settings::{Settings, ToolSettings, merge_edit};
use serde::Serialize;
use serde_json::{Map, Value};
use tauri::State;
use tauri::ipc::Channel;

use crate::add_link::{AddLinkRequest, AddLinks};
use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct McpOverview {
    pub servers: Vec<ServerView>,
    pub problems: Vec<ConfigProblem>,
}

#[tauri::command]
#[specta::specta]
pub fn mcp_overview(state: State<'_, AppState>) -> CommandResult<McpOverview> {
    let mcp = state.engine()?.mcp().clone();
    Ok(McpOverview { servers: mcp.list(), problems: mcp.problems() })
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_start(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    state.engine()?.mcp().start(&name).map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_stop(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    state.engine()?.mcp().stop(&name).await.map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_restart(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    state.engine()?.mcp().restart(&name).await.map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_refresh(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    state.engine()?.mcp().refresh(&name).await.map_err(Into::into)
}

/// Well-known remote servers for the Add dialog (picking one only fills the form).
#[tauri::command]
#[specta::specta]
pub fn mcp_catalog() -> Vec<CatalogEntry> {
    CATALOG.to_vec()
}

/// Add-server links (`perch://mcp/add?...`) waiting for the user's answer, oldest first. A
/// link naming a server or permissions Perch has comes as refused, with why (it is refused
/// again on Add, `mcp_add_link_accept`).
#[tauri::command]
#[specta::specta]
pub async fn mcp_add_links(
    state: State<'_, AppState>,
    links: State<'_, AddLinks>,
) -> CommandResult<Vec<AddLinkRequest>> {
    let mut pending = links.pending();
    // Without an engine nothing can be added anyway; Add then says why.
    let Ok(engine) = state.engine() else { return Ok(pending) };
    for request in &mut pending {
        let Some(proposal) = &request.proposal else { continue };
        if let Err(e) = add_link_save::check_name(engine, &proposal.name).await {
            request.error = Some(e.to_string());
            request.proposal = None;
        }
    }
    Ok(pending)
}

/// The user pressed Add on link `id`: the engine saves the entry the link proposed (never over
/// a server or permissions of the same name), and the link is answered.
#[tauri::command]
#[specta::specta]
pub async fn mcp_add_link_accept(
    state: State<'_, AppState>,
    links: State<'_, AddLinks>,
    id: u32,
) -> CommandResult<Vec<String>> {
    let proposal = links.proposal(id).ok_or_else(|| {
        CommandError::new(
            ErrorKind::NotFound,
            "this link was answered already; open it again to add the server",
        )
    })?;
    let names = add_link_save::add(state.engine()?, &proposal)
        .await
        .map_err(|e| CommandError::new(ErrorKind::Invalid, e.to_string()))?;
    links.dismiss(id);
    Ok(names)
}

/// The user dismissed a link (Cancel, Esc, Close).
#[tauri::command]
#[specta::specta]
pub fn mcp_add_link_dismiss(links: State<'_, AddLinks>, id: u32) -> bool {
    links.dismiss(id)
}

/// Adds servers from pasted JSON (or the Add form, which builds the same JSON).
#[tauri::command]
#[specta::specta]
pub async fn mcp_import(state: State<'_, AppState>, json: String) -> CommandResult<Vec<String>> {
    state.engine()?.mcp().import(&json).await.map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_remove(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    state.engine()?.mcp().remove(&name).await.map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_set_enabled(state: State<'_, AppState>, name: String, enabled: bool) -> CommandResult<()> {
    state.engine()?.mcp().set_enabled(&name, enabled).await.map_err(Into::into)
}

/// Signs in to a server in the user's browser and returns when it is done (or failed, or was
/// cancelled); the server then starts with its tokens. `scope` asks for more than was granted.
#[tauri::command]
#[specta::specta]
pub async fn mcp_sign_in(
    state: State<'_, AppState>,
    name: String,
    scope: Option<String>,
) -> CommandResult<SignInView> {
    let engine = state.engine()?;
    let open = Box::new(|page: &str| {
        // Where no browser opens, the dashboard shows the page's address to open or copy.
        if let Err(e) = perch_core::oauth::browser::open(page) {
            tracing::warn!(error = %e, "could not open the sign-in page in a browser");
        }
    });
    engine.sign_in_mcp(&name, scope, open).await.map_err(Into::into)
}

/// Stops waiting for the browser of a sign-in under way.
#[tauri::command]
#[specta::specta]
pub fn mcp_cancel_sign_in(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    state.engine()?.mcp().cancel_sign_in(&name).map_err(Into::into)
}

/// Signs out: revoked at the server where it can be, forgotten here. True when the server was told.
#[tauri::command]
#[specta::specta]
pub async fn mcp_sign_out(state: State<'_, AppState>, name: String) -> CommandResult<bool> {
    state.engine()?.mcp().sign_out(&name).await.map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub fn mcp_logs(state: State<'_, AppState>, name: String) -> CommandResult<Vec<String>> {
    state.engine()?.mcp().logs(&name).map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_read_resource(
    state: State<'_, AppState>,
    name: String,
    uri: String,
) -> CommandResult<String> {
    state.engine()?.mcp().read_resource(&name, &uri).await.map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_get_prompt(
    state: State<'_, AppState>,
    name: String,
    prompt: String,
    values: Map<String, Value>,
) -> CommandResult<String> {
    state.engine()?.mcp().get_prompt(&name, &prompt, values).await.map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub async fn set_tool_settings(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    base: ToolSettings,
    tools: ToolSettings,
) -> CommandResult<Settings> {
    use tauri_specta::Event;
    let engine = state.engine()?;
    let before = engine.settings().get().await.tools;
    let settings = engine.settings().update(|s| s.tools = merge_edit(&s.tools, &base, &tools)).await?;
    if before.roots != settings.tools.roots {
        engine.mcp().set_roots(settings.tools.roots.iter().map(Into::into).collect()).await;
    }
    if (before.apps, &before.apps_off) != (settings.tools.apps, &settings.tools.apps_off) {
        for session in engine.apply_apps_setting().await {
            let reason = crate::window::apps::AppStopReason::TurnedOff;
            let _ = crate::window::apps::McpAppStopped { session, reason }.emit(&app);
        }
    }
    Ok(settings)
}

/// Questions still open (for a window that opened after they were asked).
#[tauri::command]
#[specta::specta]
pub fn questions_pending(state: State<'_, AppState>) -> CommandResult<Vec<OpenQuestion>> {
    Ok(state.engine()?.questions().pending())
}

#[tauri::command]
#[specta::specta]
pub fn question_answer(state: State<'_, AppState>, id: u64, answer: Answer) -> CommandResult<()> {
    Ok(state.engine()?.questions().answer(id, answer)?)
}

/// Whether the embedded retrieval model (all-MiniLM-L6-v2) is downloaded.
#[tauri::command]
#[specta::specta]
pub fn tools_model_status(state: State<'_, AppState>) -> CommandResult<ModelStatus> {
    Ok(state.engine()?.tool_picker().model_status())
}

/// Downloads the embedded model once, checked against its sha256, with progress.
#[tauri::command]
#[specta::specta]
pub async fn tools_model_download(
    state: State<'_, AppState>,
    progress: Channel<DownloadProgress>,
) -> CommandResult<ModelStatus> {
    let engine = state.engine()?;
    let mut last = 0u64;
    engine
        .tool_picker()
        .download_model(|done, total| {
            // A message per half megabyte is plenty for a progress bar.
            if done == total || done >= last + (1 << 19) {
                last = done;
                let _ = progress.send(DownloadProgress { done, total });
            }
        })
        .await?;
    Ok(engine.tool_picker().model_status())
}
