//! The agent: a turn saves the question, builds the context, streams the answer to a sink while
//! saving it as it grows, and finishes it as complete, stopped or failed (`turn`). One loop for
//! every provider (`rounds`): when the stream ends with tool calls they run (see `tools`) and the
//! model is asked again. What a turn reports goes to a `TurnSink` as `TurnEvent`s (`events`).

pub mod attachments;
pub mod context;
mod events;
pub mod live;
pub mod picker;
pub mod references;
mod rounds;
pub mod runs;
pub mod sampling;
mod stream;
pub mod thread;
pub mod tools;
mod turn;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use events::{TurnError, TurnEvent, TurnFinished, TurnSink, TurnStarted};
use rounds::Outcome;
pub use turn::{run_turn, run_turn_with, title_from};

use crate::capture::Captures;
use crate::keys::Keys;
use crate::local::LocalModels;
use crate::mcp::McpManager;
use crate::mcp::apps::sessions::AppSessions;
use crate::owner::ProcessOwner;
use crate::paths::DataDir;
use crate::providers::http::Clients;
use crate::providers::{ModelCache, ProviderError};
use crate::questions::Questions;
use crate::settings::SettingsHandle;
use crate::store::{Store, StoreError};

/// What answering works with: the history, the settings, the providers' keys and clients, the
/// tools and the questions they ask, the screenshots waiting, and the answers in flight. The
/// engine builds it from the parts it shares with the rest of Perch and hands it to every turn,
/// so the agent never reaches for the agent.
#[derive(Debug)]
pub struct Agent {
    data_dir: DataDir,
    store: Store,
    settings: Arc<SettingsHandle>,
    keys: Arc<Keys>,
    http: Clients,
    local: Arc<LocalModels>,
    questions: Arc<Questions>,
    mcp: Arc<McpManager>,
    captures: Arc<Captures>,
    owner: Option<ProcessOwner>,
    models: ModelCache,
    runs: Arc<runs::Runs>,
    live: live::LiveTurns,
    picker: picker::ToolPicker,
    /// The knowledge folders: searched by the `search_knowledge` tool, their files linkable
    /// from answers.
    knowledge: Arc<crate::knowledge::KnowledgeService>,
    /// What the user asked Perch to keep, given to a question when it is about them.
    memories: Arc<crate::memories::Memories>,
    apps: Arc<AppSessions>,
}

/// The parts an [`Agent`] shares with the engine that builds it.
pub struct AgentParts {
    pub data_dir: DataDir,
    pub store: Store,
    pub settings: Arc<SettingsHandle>,
    pub keys: Arc<Keys>,
    pub http: Clients,
    pub local: Arc<LocalModels>,
    pub questions: Arc<Questions>,
    pub mcp: Arc<McpManager>,
    pub captures: Arc<Captures>,
    /// Marks this process's streaming answers, so another process can tell them from ones an
    /// exit cut off.
    pub owner: Option<ProcessOwner>,
}

impl Agent {
    pub fn new(parts: AgentParts) -> Self {
        let picker = picker::ToolPicker::new(parts.data_dir.root(), parts.http.clone());
        let knowledge =
            crate::knowledge::KnowledgeService::new(parts.data_dir.root(), picker.minilm().clone());
        let memories = Arc::new(crate::memories::Memories::new(
            parts.store.clone(),
            picker.minilm().clone(),
            parts.data_dir.root().to_owned(),
            parts.settings.clone(),
            parts.keys.clone(),
        ));
        Self {
            knowledge,
            memories,
            data_dir: parts.data_dir,
            store: parts.store,
            settings: parts.settings,
            keys: parts.keys,
            http: parts.http,
            local: parts.local,
            questions: parts.questions,
            mcp: parts.mcp,
            captures: parts.captures,
            owner: parts.owner,
            models: ModelCache::default(),
            runs: Arc::default(),
            live: live::LiveTurns::default(),
            picker,
            apps: Arc::default(),
        }
    }

    pub fn data_dir(&self) -> &DataDir {
        &self.data_dir
    }
    pub fn store(&self) -> &Store {
        &self.store
    }
    pub fn settings(&self) -> &Arc<SettingsHandle> {
        &self.settings
    }
    pub fn keys(&self) -> &Arc<Keys> {
        &self.keys
    }
    /// The HTTP clients every provider and download reuses.
    pub fn http_clients(&self) -> &Clients {
        &self.http
    }
    /// Local models and the sidecar that runs them.
    pub fn local(&self) -> &Arc<LocalModels> {
        &self.local
    }
    /// Questions waiting for the user (tool approvals, elicitation, sampling).
    pub fn questions(&self) -> &Arc<Questions> {
        &self.questions
    }
    pub fn mcp(&self) -> &Arc<McpManager> {
        &self.mcp
    }
    /// Screen captures waiting for a question, and the frozen screen while selecting.
    pub fn captures(&self) -> &Arc<Captures> {
        &self.captures
    }
    /// The id this process's streaming answers record as their owner.
    pub fn owner_id(&self) -> Option<&str> {
        self.owner.as_ref().map(ProcessOwner::id)
    }
    pub fn model_cache(&self) -> &ModelCache {
        &self.models
    }
    /// A model's capabilities, cached for ten minutes.
    pub async fn model_info(
        &self,
        provider: &dyn crate::providers::Provider,
        id: &crate::providers::ModelId,
    ) -> Result<crate::providers::ModelInfo, ProviderError> {
        self.models.model_info(provider, id).await
    }
    /// The providers these settings configure, with the agent's keys, clients and local models.
    pub fn registry(&self, settings: &crate::settings::Settings) -> crate::providers::Registry {
        // A local model on the graphics card leaves room for the dictation model beside it.
        self.local.runtime().reserve_gpu(settings.voice.gpu_reserve());
        crate::providers::Registry::with_local(
            &settings.providers,
            &settings.local,
            self.keys.clone(),
            self.http.clone(),
            self.local.clone(),
        )
    }
    /// Runs in flight, to stop one or all.
    pub fn runs(&self) -> &Arc<runs::Runs> {
        &self.runs
    }
    /// Turns being answered, for a view that comes back to one.
    pub fn live_turns(&self) -> &live::LiveTurns {
        &self.live
    }
    /// Top-K tool retrieval (and the embedded model it may use).
    pub fn tool_picker(&self) -> &picker::ToolPicker {
        &self.picker
    }
    /// The knowledge folders (`crate::knowledge`).
    pub fn knowledge(&self) -> &Arc<crate::knowledge::KnowledgeService> {
        &self.knowledge
    }
    /// The apps (MCP Apps) open in tool cards.
    /// The memories (`crate::memories`).
    pub fn memories(&self) -> &Arc<crate::memories::Memories> {
        &self.memories
    }
    pub fn app_sessions(&self) -> &Arc<AppSessions> {
        &self.apps
    }
}

/// The longest message Perch accepts; a bigger paste is refused with this number.
pub const MAX_MESSAGE_CHARS: usize = 1_000_000;

/// An image attached to a question, as the UI or the CLI read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ImageInput {
    pub name: String,
    pub mime: String,
    pub base64: String,
    /// A capture on the shelf to attach instead of `base64` (which is then empty).
    #[serde(default)]
    pub capture: Option<String>,
}

/// Text selected in another application and brought into Perch with the selection shortcut: the
/// model reads it as content to work on, marked as coming from that application
/// (`perch_typing::selection_block`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SelectionInput {
    pub text: String,
    /// The application's window title.
    pub app: String,
}

/// A text file attached to a question (`@` in the composer, `perch ask --file`), read when the
/// question is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct FileInput {
    pub path: String,
    /// Only the first lines (the offer made when the whole file is too large).
    #[serde(default)]
    pub first_lines: Option<u32>,
    /// One passage of the knowledge folders (`#` in the composer): the lines it spans (a PDF's
    /// page, twice), read from the index as the picker showed it.
    #[serde(default)]
    pub lines: Option<(u32, u32)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnKind {
    /// A new question, with images and text files attached.
    Ask {
        text: String,
        images: Vec<ImageInput>,
        #[serde(default)]
        files: Vec<FileInput>,
        #[serde(default)]
        selections: Vec<SelectionInput>,
    },
    /// A new answer to the same question; the old answer is kept as an alternative.
    Regenerate { message_id: i64 },
    /// The last question, edited and sent again; the old one is kept as an alternative.
    Edit { message_id: i64, text: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TurnRequest {
    /// Continue this conversation; a new one starts when absent.
    pub conversation_id: Option<String>,
    /// `provider:model`.
    pub model: String,
    pub kind: TurnKind,
    /// The id under which the run can be stopped (the UI picks it so Stop works at once).
    pub run_id: Option<String>,
}

impl TurnRequest {
    /// A question in words alone (no pictures, files or selections), to `model`, in
    /// `conversation` or a new one.
    pub fn ask(model: &str, conversation: Option<&str>, text: &str) -> Self {
        let kind = TurnKind::Ask {
            text: text.into(),
            images: Vec::new(),
            files: Vec::new(),
            selections: Vec::new(),
        };
        Self { conversation_id: conversation.map(str::to_owned), model: model.into(), kind, run_id: None }
    }
}

/// A turn that could not start. Nothing was saved; the UI keeps what the user typed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChatError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An attached file cannot be sent (missing, binary, too large...).
    #[error(transparent)]
    File(#[from] crate::files::FilesError),
}

/// How a turn may differ from the app's settings.
#[derive(Debug, Clone, Default)]
pub struct TurnOptions {
    /// Rules for this turn only, checked before the saved ones (`perch ask --approve demo:*`).
    pub extra_rules: Vec<crate::settings::ToolRule>,
    /// Offer no tools this time.
    pub no_tools: bool,
}
