use perch_core::agent::thread::{self, ConversationView};
use perch_core::agent::{TurnEvent, TurnRequest, TurnSink, run_turn};
use perch_core::keys::{KeyBackend, KeyStatus, Secret};
use perch_core::prices::{self, Price};
use perch_core::providers::{ProviderError, ProviderModels, Registry, pick_default};
use perch_core::settings::{ModelSettings, ProviderSettings, Settings};
use perch_core::store::Message;
use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

/// The turn's events go to the UI over the channel it passed.
struct ChannelSink(Channel<TurnEvent>);

impl TurnSink for ChannelSink {
    fn send(&self, event: TurnEvent) {
        if let Err(e) = self.0.send(event) {
            tracing::debug!(error = %e, "the chat view went away during an answer");
        }
    }
}

/// Sends a question (or regenerates, or edits) and streams the answer over `on_event`.
/// Returns the saved answer; errors here mean nothing was sent or saved.
#[tauri::command]
#[specta::specta]
pub async fn chat_send(
    state: State<'_, AppState>,
    request: TurnRequest,
    on_event: Channel<TurnEvent>,
) -> CommandResult<Message> {
    let engine = state.engine()?.clone();
    Ok(run_turn(&engine, request, &ChannelSink(on_event)).await?)
}

/// Stops an answer; what arrived is kept, marked stopped.
#[tauri::command]
#[specta::specta]
pub fn chat_stop(state: State<'_, AppState>, run_id: String) -> CommandResult<bool> {
    Ok(state.engine()?.runs().cancel(&run_id))
}

#[tauri::command]
#[specta::specta]
pub async fn conversation_view(state: State<'_, AppState>, id: String) -> CommandResult<ConversationView> {
    let engine = state.engine()?;
    let detail = engine.store().conversation(&id).await?;
    let attachments = engine.store().attachments(&detail.conversation.id).await?;
    let prices = prices::merged(&engine.settings().get().await.models.prices);
    Ok(thread::view(&detail, &attachments, &prices))
}

/// The conversation as Markdown (for copying).
#[tauri::command]
#[specta::specta]
pub async fn conversation_markdown(state: State<'_, AppState>, id: String) -> CommandResult<String> {
    Ok(thread::to_markdown(&state.engine()?.store().conversation(&id).await?))
}

/// Saves the conversation as a Markdown file where the user picks; `None` when cancelled.
#[tauri::command]
#[specta::specta]
pub async fn conversation_export(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    id: String,
) -> CommandResult<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let detail = state.engine()?.store().conversation(&id).await?;
    let markdown = thread::to_markdown(&detail);
    let name: String =
        detail.conversation.title.chars().filter(|c| c.is_alphanumeric() || " -_".contains(*c)).collect();
    let name = format!("{}.md", if name.trim().is_empty() { "conversation" } else { name.trim() });
    let picked = tauri::async_runtime::spawn_blocking(move || {
        app.dialog().file().set_file_name(name).add_filter("Markdown", &["md"]).blocking_save_file()
    })
    .await
    .map_err(|e| CommandError::new(ErrorKind::Window, e.to_string()))?;
    let Some(path) = picked.and_then(|p| p.into_path().ok()) else { return Ok(None) };
    tokio::fs::write(&path, markdown)
        .await
        .map_err(|e| CommandError::new(ErrorKind::Storage, format!("{}: {e}", path.display())))?;
    Ok(Some(path.display().to_string()))
}

/// Every provider's models, and the one a new chat starts with.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ModelsOverview {
    pub providers: Vec<ProviderModels>,
    pub default_model: Option<String>,
}

/// Lists models (providers without a key are left out unless `all`).
#[tauri::command]
#[specta::specta]
pub async fn models_list(state: State<'_, AppState>, all: bool) -> CommandResult<ModelsOverview> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await;
    let providers = Registry::of(engine, &settings).list_models(all).await;
    let available: Vec<_> = providers.iter().flat_map(|p| p.models.iter().cloned()).collect();
    let default_model = pick_default(settings.models.default_model.as_deref(), &available);
    Ok(ModelsOverview { providers, default_model })
}

#[tauri::command]
#[specta::specta]
pub async fn set_provider_settings(
    state: State<'_, AppState>,
    providers: ProviderSettings,
) -> CommandResult<Settings> {
    let engine = state.engine()?;
    engine.model_cache().clear();
    Ok(engine.settings().update(|s| s.providers = providers).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn set_model_settings(
    state: State<'_, AppState>,
    models: ModelSettings,
) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().update(|s| s.models = models).await?)
}

/// The price table in use: the user's entries, then the shipped ones.
#[tauri::command]
#[specta::specta]
pub async fn prices(state: State<'_, AppState>) -> CommandResult<Vec<Price>> {
    Ok(prices::merged(&state.engine()?.settings().get().await.models.prices))
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct KeysOverview {
    pub backend: KeyBackend,
    pub keys: Vec<KeyStatus>,
}

/// Which providers have keys (masked) and where keys are kept.
#[tauri::command]
#[specta::specta]
pub async fn keys_overview(state: State<'_, AppState>) -> CommandResult<KeysOverview> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await;
    let registry = Registry::of(engine, &settings);
    let wanted: Vec<(String, Option<String>)> = registry
        .endpoints()
        .iter()
        .filter(|e| e.needs_key || e.key_env.is_some())
        .map(|e| (e.name.clone(), e.key_env.clone()))
        .collect();
    let keys = engine.keys().clone();
    blocking(move || {
        let backend = keys.backend();
        let keys =
            wanted.iter().map(|(name, env)| keys.status(name, env.as_deref())).collect::<Result<_, _>>()?;
        Ok(KeysOverview { backend, keys })
    })
    .await
}

/// The outcome of saving a key: stored, and whether one cheap call with it worked.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct KeyCheck {
    pub works: bool,
    pub message: String,
}

/// Stores a key and checks it with one call that lists the provider's models.
#[tauri::command]
#[specta::specta]
pub async fn key_set(state: State<'_, AppState>, provider: String, key: String) -> CommandResult<KeyCheck> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await;
    let registry = Registry::of(engine, &settings);
    let name = registry.endpoint(&provider)?.name.clone();
    let secret = Secret::new(key.trim());
    if secret.expose().is_empty() {
        return Err(CommandError::new(ErrorKind::Invalid, "the key is empty"));
    }
    let keys = engine.keys().clone();
    blocking(move || keys.set(&name, &secret)).await?;
    engine.model_cache().clear();
    Ok(match registry.provider(&provider).await?.list_models().await {
        Ok(models) => KeyCheck { works: true, message: format!("The key works ({} models).", models.len()) },
        Err(e @ ProviderError::Auth { .. }) => KeyCheck { works: false, message: e.to_string() },
        Err(e) => KeyCheck { works: false, message: format!("Stored, but it could not be checked now: {e}") },
    })
}

#[tauri::command]
#[specta::specta]
pub async fn key_delete(state: State<'_, AppState>, provider: String) -> CommandResult<()> {
    let engine = state.engine()?;
    let keys = engine.keys().clone();
    engine.model_cache().clear();
    blocking(move || keys.delete(&provider)).await
}

/// Runs blocking key-store work off the async runtime.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, perch_core::keys::KeyError> + Send + 'static,
) -> CommandResult<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::new(ErrorKind::Storage, e.to_string()))?
        .map_err(|e| CommandError::new(ErrorKind::Storage, e.to_string()))
}
