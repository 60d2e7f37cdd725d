//! Settings -> Models: providers and their models, the default model, prices and API keys.

use perch_core::keys::{KeyBackend, KeyStatus, Secret};
use perch_core::mcp::ServerStatus;
use perch_core::mcp::secrets::{gets_search_keys, is_web_search_key};
use perch_core::prices::{self, Price};
use perch_core::providers::{
    ProviderEndpoint, ProviderError, ProviderModels, builtin_endpoints, pick_default,
};
use perch_core::settings::{ModelSettings, ProviderSettings, Settings, merge_edit};
use serde::Serialize;
use tauri::State;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

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
    let providers = engine.registry(&settings).list_models(all).await;
    let available: Vec<_> = providers.iter().flat_map(|p| p.models.iter().cloned()).collect();
    let default_model = pick_default(settings.models.default_model.as_deref(), &available);
    Ok(ModelsOverview { providers, default_model })
}

#[tauri::command]
#[specta::specta]
pub async fn set_provider_settings(
    state: State<'_, AppState>,
    base: ProviderSettings,
    providers: ProviderSettings,
) -> CommandResult<Settings> {
    let engine = state.engine()?;
    engine.model_cache().clear();
    Ok(engine.settings().update(|s| s.providers = merge_edit(&s.providers, &base, &providers)).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn set_model_settings(
    state: State<'_, AppState>,
    base: ModelSettings,
    models: ModelSettings,
) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().update(|s| s.models = merge_edit(&s.models, &base, &models)).await?)
}

/// Where each provider is reached now: the settings, or the environment variable that wins
/// over them (`OLLAMA_HOST`, `OPENAI_BASE_URL`), so Settings can show the address in use.
#[tauri::command]
#[specta::specta]
pub async fn provider_endpoints(state: State<'_, AppState>) -> CommandResult<Vec<ProviderEndpoint>> {
    Ok(builtin_endpoints(&state.engine()?.settings().get().await.providers))
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
    let registry = engine.registry(&settings);
    let wanted = registry.keys_kept();
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
    if is_web_search_key(&provider) {
        let secret = Secret::new(key.trim());
        if secret.expose().is_empty() {
            return Err(CommandError::new(ErrorKind::Invalid, "the key is empty"));
        }
        let (keys, name) = (engine.keys().clone(), provider.clone());
        blocking(move || keys.set(&name, &secret)).await?;
        restart_web_servers(engine).await?;
        return Ok(KeyCheck {
            works: true,
            message: format!("Stored. Web search uses it when the web server's backend is {provider}."),
        });
    }
    let settings = engine.settings().get().await;
    let registry = engine.registry(&settings);
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
    let web = is_web_search_key(&provider);
    blocking(move || keys.delete(&provider)).await?;
    if web {
        restart_web_servers(engine).await?;
    }
    Ok(())
}

/// The web server reads its search keys when it starts: a running one starts again.
async fn restart_web_servers(engine: &perch_core::Engine) -> CommandResult<()> {
    let mcp = engine.mcp();
    let running =
        mcp.list().into_iter().filter(|v| v.status == ServerStatus::Connected && gets_search_keys(&v.config));
    for view in running {
        mcp.restart(&view.config.name).await?;
    }
    Ok(())
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
