//! `perch`: the Perch engine on the command line, for scripts, headless machines and checks.
//! A library so the desktop binary can be `perch` too (installed as a link to it), and a
//! binary of its own for development and the tests.

/// `println!` for what a command prints on stdout: a reader that goes away (`perch ... | head`)
/// ends the command quietly instead of panicking (see [`output::write_out`]).
macro_rules! outln {
    () => { $crate::output::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` for stdout, like [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write_out(format_args!($($arg)*)) };
}

mod app;
mod ask;
mod doctor;
mod google;
mod history;
mod keys;
mod knowledge;
mod local;
mod mcp;
mod memories;
mod output;
mod permissions;
mod review;
mod say;
mod sign_in;
mod terminal;
mod voice;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use perch_core::paths::DataDir;

#[derive(Parser)]
#[command(name = "perch", version = perch_core::VERSION, about = "Perch, a small private AI assistant, from the terminal")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check the data folder, the database and which optional parts this machine has.
    Doctor {
        /// Print the report as JSON.
        #[arg(long, conflicts_with = "bundle")]
        json: bool,
        /// Write a diagnostics bundle (a zip: the report, versions, settings, MCP config and
        /// recent logs, with keys and tokens removed) to FILE, for a bug report.
        #[arg(long, value_name = "FILE")]
        bundle: Option<std::path::PathBuf>,
        /// Also show the home folder as ~ in the bundle.
        #[arg(long, requires = "bundle")]
        redact_home: bool,
    },
    /// Browse and search saved conversations.
    History {
        #[command(subcommand)]
        command: history::HistoryCommand,
    },
    /// Ask a model; the answer streams to stdout and is saved to history.
    Ask(ask::Ask),
    /// List the models of every provider, with what they can do.
    Models {
        #[arg(long)]
        json: bool,
    },
    /// Models that run on this machine: list, download, add a GGUF file, delete.
    Local {
        #[command(subcommand)]
        command: local::LocalCommand,
    },
    /// Your folders Perch searches for answers, indexed on this machine: add, list, remove,
    /// reindex, search.
    Knowledge {
        #[command(subcommand)]
        command: knowledge::KnowledgeCommand,
    },
    /// What Perch keeps about you for later answers (kept only with your yes): list, add,
    /// forget.
    Memories {
        #[command(subcommand)]
        command: memories::MemoriesCommand,
    },
    /// Manage API keys (kept in the OS keyring, never shown in full).
    Keys {
        #[command(subcommand)]
        command: keys::KeysCommand,
    },
    /// The Google connection (mail and calendar): connect, status, disconnect.
    Google {
        #[command(subcommand)]
        command: google::GoogleCommand,
    },
    /// The MCP servers Perch uses for tools.
    Mcp {
        #[command(subcommand)]
        command: mcp::McpCommand,
    },
    /// Capture the screen in the running app, as its shortcut does (bind this in your desktop's
    /// keyboard settings where global shortcuts do not work, e.g. on Wayland).
    Screenshot {
        /// fullscreen, precision or window (default: the mode set in Perch).
        #[arg(long)]
        mode: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Newer versions of Perch, through the running app: `check` says what is on offer,
    /// `apply` downloads it, verifies its signature and installs it.
    Update {
        #[command(subcommand)]
        command: UpdateCommand,
        #[arg(long, global = true)]
        json: bool,
    },
    /// Bring the running app's window forward.
    Show,
    /// Show the running app's window, or hide it when it is in front.
    Toggle,
    /// Take the text selected in the focused application into the running app (what the
    /// selection shortcut does; bind this to a key where the desktop binds only commands).
    Selection,
    /// Transcribe a WAV file (any format or length) with a local whisper model.
    Transcribe {
        file: std::path::PathBuf,
        /// A model name (tiny.en, base, ...) or the path of a ggml model file.
        #[arg(long)]
        model: Option<String>,
        /// auto, or a language code such as en or de.
        #[arg(long)]
        language: Option<String>,
    },
    /// Record from the microphone until Enter, then print the text.
    Dictate {
        /// A microphone by name (default: the one in Settings -> Voice, else the system's).
        #[arg(long)]
        device: Option<String>,
        #[arg(long)]
        model: Option<String>,
        #[arg(long)]
        language: Option<String>,
        /// Also save the recording (16 kHz mono WAV).
        #[arg(long)]
        save: Option<std::path::PathBuf>,
        /// Start or stop dictate-anywhere in the running app instead (the words typed into the
        /// focused application), for desktops where only commands can be bound to keys.
        #[arg(long, conflicts_with_all = ["device", "model", "language", "save"])]
        toggle: bool,
    },
    /// Reads text aloud in Perch's voice (Settings -> Voice), or writes it to a WAV file.
    Say {
        /// The text (Markdown is read as prose: code and tables are announced, not spelled).
        #[arg(conflicts_with = "file")]
        text: Option<String>,
        /// Read the text from a file (- for standard input).
        #[arg(long)]
        file: Option<std::path::PathBuf>,
        /// Write the speech to this WAV file instead of playing it.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// A voice's name (`perch voices list`), a Piper .onnx file, or `espeak`.
        #[arg(long)]
        voice: Option<String>,
        /// Speed in percent of the voice's own (50 to 200).
        #[arg(long, value_parser = clap::value_parser!(u32).range(50..=200))]
        speed: Option<u32>,
    },
    /// The natural voices Perch reads aloud with.
    Voices {
        #[command(subcommand)]
        command: say::VoicesCommand,
    },
    /// Whisper models for dictation.
    Voice {
        #[command(subcommand)]
        command: voice::VoiceCommand,
    },
    /// The terminal the model may use: check a command, manage remembered approvals.
    Terminal {
        #[command(subcommand)]
        command: terminal::TerminalCommand,
    },
    /// Every permission you have given (tool rules, conversation grants, commands always
    /// allowed, sessions): list, add, revoke.
    Permissions {
        #[command(subcommand)]
        command: permissions::PermissionsCommand,
    },
    /// Push reviews to the running app, or read its selection.
    Review {
        #[command(subcommand)]
        command: review::ReviewCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum UpdateCommand {
    /// Is there a newer Perch? Prints its version and release notes.
    Check,
    /// Download the newer Perch, verify its signature and install it (restart Perch after).
    Apply,
}

/// Runs the command line on this process's arguments.
pub fn main() -> ExitCode {
    perch_core::crash::install("cli");
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return output::fail(&format!("could not start: {e}")),
    };
    runtime.block_on(async move {
        match cli.command {
            // The doctor opens the data dir itself, so it can report a broken one.
            Command::Doctor { json, bundle: None, .. } => doctor::run(json).await,
            Command::Doctor { bundle: Some(file), redact_home, .. } => {
                doctor::bundle(&file, redact_home).await
            }
            Command::History { command } => with_engine(|engine| history::run(engine, command)).await,
            Command::Ask(args) => with_engine(|engine| ask::ask(engine, args)).await,
            Command::Models { json } => with_engine(|engine| ask::models(engine, json)).await,
            Command::Keys { command } => with_engine(|engine| keys::run(engine, command)).await,
            Command::Knowledge { command } => with_engine(|engine| knowledge::run(engine, command)).await,
            Command::Memories { command } => with_engine(|engine| memories::run(engine, command)).await,
            Command::Local { command } => with_engine(|engine| local::run(engine, command)).await,
            Command::Mcp { command } => with_engine(|engine| mcp::run(engine, command)).await,
            Command::Google { command } => with_engine(|engine| google::run(engine, command)).await,
            // These talk to the running app; they open no database of their own.
            Command::Screenshot { mode, json } => {
                app_request(app::AppRequest::Screenshot { mode }, json).await
            }
            Command::Update { command: UpdateCommand::Check, json } => {
                app_request(app::AppRequest::UpdateCheck, json).await
            }
            Command::Update { command: UpdateCommand::Apply, json } => {
                app_request(app::AppRequest::UpdateApply, json).await
            }
            Command::Show => app_request(app::AppRequest::Show, false).await,
            Command::Toggle => app_request(app::AppRequest::Toggle, false).await,
            Command::Selection => app_request(app::AppRequest::ActOnSelection, false).await,
            Command::Say { text, file, out, voice, speed } => {
                with_engine(|engine| say::say(engine, say::SayArgs { text, file, out, voice, speed })).await
            }
            Command::Voices { command } => with_engine(|engine| say::voices(engine, command)).await,
            Command::Transcribe { file, model, language } => {
                with_engine(|engine| voice::transcribe(engine, file, model, language)).await
            }
            Command::Dictate { toggle: true, .. } => app_request(app::AppRequest::DictateToggle, false).await,
            Command::Dictate { device, model, language, save, .. } => {
                with_engine(|engine| voice::dictate(engine, device, model, language, save)).await
            }
            Command::Voice { command: voice::VoiceCommand::Models { command } } => {
                with_engine(|engine| voice::models(engine, command)).await
            }
            Command::Voice { command: voice::VoiceCommand::Devices { json } } => match voice::devices(json) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => output::fail(&format!("{e:#}")),
            },
            Command::Terminal { command } => with_engine(|engine| terminal::run(engine, command)).await,
            Command::Permissions { command } => with_engine(|engine| permissions::run(engine, command)).await,
            // Talks to the running app; opens no database of its own.
            Command::Review { command } => match review::run(command).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => output::fail(&format!("{e:#}")),
            },
        }
    })
}

async fn app_request(request: app::AppRequest, json: bool) -> ExitCode {
    match app::run(request, json).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output::fail(&format!("{e:#}")),
    }
}

/// Opens the data dir, logging and the engine, then runs `f`; every failure becomes a clear message.
async fn with_engine<F, Fut>(f: F) -> ExitCode
where
    F: FnOnce(perch_core::Engine) -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    let dir = match DataDir::from_env() {
        Ok(dir) => dir,
        Err(e) => return output::fail(&e.to_string()),
    };
    let _logs = perch_core::logging::init(Some(&dir.logs_dir()), "warn");
    let engine = match perch_core::Engine::start(dir).await {
        Ok(engine) => engine,
        Err(e) => return output::fail(&e.to_string()),
    };
    for notice in engine.startup_notices() {
        eprintln!("perch: {}. {}", notice.title, notice.detail);
    }
    match f(engine).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output::fail(&format!("{e:#}")),
    }
}
