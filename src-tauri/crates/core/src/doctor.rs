//! `perch doctor`: what this machine has, what Perch found in its data dir, and what is missing.

use std::path::PathBuf;

use serde::Serialize;

use crate::paths::{self, DataDir, DataDirSource};
use crate::probes::{self, Probe};
use crate::providers::builtin_endpoints;
use crate::settings::{Settings, SettingsHandle};
use crate::store::{Integrity, LATEST_VERSION, Store, StoreError};

#[derive(Debug, Serialize)]
pub struct DoctorReport {
    pub version: &'static str,
    pub data_dir: DataDirReport,
    pub database: DatabaseReport,
    pub components: Vec<Probe>,
    /// Streamable HTTP servers that sign in rather than send a token of the user's.
    pub sign_ins: Vec<SignInReport>,
    /// The Google connection (client, account, services; no token).
    pub google: Option<crate::google::GoogleStatus>,
}

/// One server's sign-in, from the key store (no server is started to find out).
#[derive(Debug, Serialize)]
pub struct SignInReport {
    pub server: String,
    pub sign_in: Option<crate::mcp::sign_in::SignInView>,
}

impl DoctorReport {
    /// Healthy means Perch can run and keep history here; missing optional parts are fine.
    pub fn healthy(&self) -> bool {
        self.data_dir.error.is_none() && matches!(self.database.status, DbStatus::Ok | DbStatus::Recovered)
    }
}

#[derive(Debug, Serialize)]
pub struct DataDirReport {
    pub path: Option<PathBuf>,
    pub source: Option<DataDirSource>,
    pub error: Option<String>,
}

#[derive(Debug, Serialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum DbStatus {
    Ok,
    /// The file was damaged: a backup was kept and a new database started.
    Recovered,
    /// Written by a newer Perch; left untouched.
    TooNew,
    Error,
    /// Not checked because the data dir is unusable.
    Skipped,
}

#[derive(Debug, Serialize)]
pub struct DatabaseReport {
    pub path: Option<PathBuf>,
    pub status: DbStatus,
    pub schema_version: Option<i64>,
    pub latest_schema: i64,
    pub size_bytes: Option<u64>,
    pub conversations: Option<i64>,
    pub messages: Option<i64>,
    pub detail: String,
}

/// Runs every check; the slow ones (network, login shell, keyring) run concurrently.
pub async fn run() -> DoctorReport {
    let resolved = paths::resolve(&paths::ResolveInputs::from_env()).and_then(DataDir::prepare);
    let (data_dir, dir) = match resolved {
        Ok(dir) => (
            DataDirReport { path: Some(dir.root().to_path_buf()), source: Some(dir.source()), error: None },
            Some(dir),
        ),
        Err(e) => (DataDirReport { path: None, source: None, error: Some(e.to_string()) }, None),
    };
    let (database, settings) = match &dir {
        Some(dir) => check_database(dir).await,
        None => (skipped_database(), Settings::default()),
    };
    let ollama_url = builtin_endpoints(&settings.providers)
        .into_iter()
        .find(|e| e.name == "ollama")
        .map(|e| e.url)
        .unwrap_or_else(|| crate::settings::DEFAULT_OLLAMA_URL.to_owned());
    let blocking = |f: fn() -> Probe, name: &'static str| async move {
        tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| Probe {
            name: name.into(),
            available: false,
            detail: format!("the probe failed: {e}"),
        })
    };
    let voice = dir.as_ref().map(|d| (crate::voice::Voice::new(d.root()), settings.voice.clone()));
    let (audio, speech, keyring, certificates, ollama, runners, capture, sandbox, typing, gpu) = tokio::join!(
        blocking(crate::voice::device::probe, "audio input"),
        blocking(crate::speech::probe, "speech out"),
        blocking(probes::keyring, "keyring"),
        blocking(probes::root_certificates, "certificates"),
        probes::ollama(&ollama_url),
        probes::package_runners(),
        blocking(crate::capture::probe, "screen capture"),
        terminal_sandbox(),
        blocking(perch_typing::probe, "typing into other apps"),
        graphics_card(voice),
    );
    let mut components =
        vec![probes::display(), capture, audio, speech, typing, keyring, certificates, ollama, sandbox, gpu];
    if matches!(crate::capture::screen::backend(), Ok(crate::capture::screen::Backend::Wayland)) {
        components.extend(probes::wayland_desktop().await);
    }
    components.extend(runners);
    if let Some(dir) = &dir {
        components.push(crate::crash::probe(&dir.crashes_dir()));
    }
    let (sign_ins, google) = match &dir {
        Some(dir) => (sign_ins(dir).await, google(dir).await),
        None => (Vec::new(), None),
    };
    DoctorReport { version: crate::VERSION, data_dir, database, components, sign_ins, google }
}

async fn sign_ins(dir: &DataDir) -> Vec<SignInReport> {
    use crate::mcp::config::Transport;
    let keys = std::sync::Arc::new(crate::keys::Keys::new(dir.root()));
    let mut reports = Vec::new();
    for server in crate::mcp::config::load(dir.root()).servers {
        let Transport::Http { headers, .. } = &server.transport else { continue };
        if !server.enabled || headers.keys().any(|k| k.eq_ignore_ascii_case("authorization")) {
            continue;
        }
        let sign_in = crate::mcp::sign_in::view(keys.clone(), &server).await;
        reports.push(SignInReport { server: server.name, sign_in });
    }
    reports
}

async fn google(dir: &DataDir) -> Option<crate::google::GoogleStatus> {
    let keys = std::sync::Arc::new(crate::keys::Keys::new(dir.root()));
    match crate::google::Connection::new(keys).status().await {
        Ok(status) => Some(status),
        Err(e) => {
            tracing::warn!(error = %e, "could not read the Google connection");
            None
        }
    }
}

fn skipped_database() -> DatabaseReport {
    DatabaseReport {
        path: None,
        status: DbStatus::Skipped,
        schema_version: None,
        latest_schema: LATEST_VERSION,
        size_bytes: None,
        conversations: None,
        messages: None,
        detail: "not checked: the data folder is unusable".into(),
    }
}

async fn check_database(dir: &DataDir) -> (DatabaseReport, Settings) {
    let path = dir.db_path();
    let mut report = DatabaseReport {
        path: Some(path.clone()),
        status: DbStatus::Ok,
        schema_version: None,
        latest_schema: LATEST_VERSION,
        size_bytes: None,
        conversations: None,
        messages: None,
        detail: String::new(),
    };
    let (store, open) = match Store::open(&path, Integrity::Full).await {
        Ok(opened) => opened,
        Err(e) => {
            report.status = match e {
                StoreError::TooNew { found, .. } => {
                    report.schema_version = Some(found);
                    DbStatus::TooNew
                }
                _ => DbStatus::Error,
            };
            report.detail = e.to_string();
            return (report, Settings::default());
        }
    };
    report.schema_version = Some(open.schema_version);
    report.detail = match &open.recovered {
        Some(r) => {
            report.status = DbStatus::Recovered;
            format!(
                "the database was damaged ({}); it was kept as {} and a new one was created",
                r.reason,
                r.backup.display()
            )
        }
        None => "integrity check passed".into(),
    };
    let counts = store
        .call(|c| {
            let count = |table: &str| {
                c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get::<_, i64>(0))
            };
            Ok((count("conversations")?, count("messages")?))
        })
        .await;
    if let Ok((conversations, messages)) = counts {
        report.conversations = Some(conversations);
        report.messages = Some(messages);
    }
    report.size_bytes = std::fs::metadata(&path).ok().map(|m| m.len());
    let settings = match SettingsHandle::load(store).await {
        Ok(handle) => handle.get().await,
        Err(_) => Settings::default(),
    };
    (report, settings)
}

/// The graphics card (Vulkan) local models and dictation run on, or why they run on the CPU.
/// The local model runtime is started to be asked (what it finds is what it uses).
async fn graphics_card(voice: Option<(crate::voice::Voice, crate::voice::VoiceSettings)>) -> Probe {
    let name = "graphics card";
    let local = crate::local::find_gpus(None).await;
    let dictation = match voice {
        Some((voice, settings)) => tokio::task::spawn_blocking(move || voice.runs_on(&settings))
            .await
            .unwrap_or_else(|e| e.to_string()),
        None => "unknown (no data folder)".to_owned(),
    };
    match local {
        Ok(gpus) => match gpus.devices.first() {
            Some(card) => Probe::yes(
                name,
                format!(
                    "{} ({} of {} MiB free); local models: as many layers as fit (Settings -> Models); dictation: {dictation}",
                    card.description,
                    card.memory_free >> 20,
                    card.memory_total >> 20
                ),
            ),
            None => Probe::no(
                name,
                format!(
                    "{}; local models run on the CPU; dictation: {dictation}",
                    gpus.none_because.unwrap_or_else(|| "no Vulkan graphics card was found".into())
                ),
            ),
        },
        Err(e) => Probe::no(
            name,
            format!("the local model runtime could not be asked ({e}); dictation: {dictation}"),
        ),
    }
}

/// Whether terminal commands run fully sandboxed here (`perch-sandbox`), or what is missing.
async fn terminal_sandbox() -> Probe {
    use crate::terminal::sandbox;
    let name = "sandbox".to_owned();
    let launcher = sandbox::launcher();
    let found = match &launcher {
        Some(l) => Some(sandbox::probe(l).await),
        None => None,
    };
    match (sandbox::missing_reason(launcher.as_deref(), found.as_ref()), found) {
        (None, Some(Ok(e))) => Probe {
            name,
            available: true,
            detail: format!(
                "terminal commands are sandboxed: Landlock ABI {}, user, mount, PID and network namespaces, \
                 your session and credentials hidden, seccomp",
                e.landlock_abi
            ),
        },
        (why, _) => Probe {
            name,
            available: false,
            detail: format!(
                "terminal commands are not sandboxed ({}); Perch asks before every command",
                why.map_or_else(|| "unknown".into(), |w| w.to_string())
            ),
        },
    }
}
