//! `perch transcribe`, `perch dictate` and `perch voice models`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Subcommand;
use perch_core::Engine;
use perch_core::voice::models::{ModelState, ModelView};
use perch_core::voice::{AudioSource, DictationEvent, DictationSink, DictationUpdate, VoiceSettings};

use crate::output::print_json;

#[derive(Subcommand)]
pub enum VoiceCommand {
    /// Whisper models: list them, download one, delete one.
    Models {
        #[command(subcommand)]
        command: Option<ModelsCommand>,
    },
    /// The microphones this machine offers (names for `perch dictate --device`).
    Devices {
        #[arg(long)]
        json: bool,
    },
}

pub fn devices(json: bool) -> anyhow::Result<()> {
    let devices = perch_core::voice::device::list_devices()?;
    if json {
        return print_json(&devices);
    }
    if devices.is_empty() {
        outln!("No microphone found.");
    }
    for d in devices {
        let format = match (d.sample_rate, d.channels) {
            (Some(rate), Some(channels)) => format!("{rate} Hz, {channels} channel(s)"),
            _ => "format unknown".to_owned(),
        };
        outln!("{} {}  ({format})", if d.is_default { "*" } else { " " }, d.name);
    }
    Ok(())
}

#[derive(Subcommand)]
pub enum ModelsCommand {
    /// Every model, whether it is downloaded, and its disk and memory needs.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Downloads a model (resumes an interrupted download; checked against its SHA-256).
    Download { name: String },
    /// Deletes a downloaded model.
    Delete { name: String },
}

fn megabytes(bytes: u64) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}

fn describe(m: &ModelView) -> String {
    let state = match m.state {
        ModelState::Ready => "downloaded".to_owned(),
        ModelState::Partial => format!("partly downloaded ({})", megabytes(m.partial)),
        ModelState::Absent => "not downloaded".to_owned(),
    };
    format!(
        "{:<9} {:<11} disk {:>6}  memory ~{:>4} MB  {:<26} {}",
        m.name,
        if m.english_only { "English" } else { "99 languages" },
        megabytes(m.size),
        m.memory_mb,
        state,
        m.summary
    )
}

pub async fn models(engine: Engine, command: Option<ModelsCommand>) -> anyhow::Result<()> {
    let voice = engine.voice();
    match command.unwrap_or(ModelsCommand::List { json: false }) {
        ModelsCommand::List { json } => {
            let list = voice.models();
            if json {
                return print_json(&list);
            }
            let chosen = engine.settings().get().await.voice.model;
            for m in &list {
                let mark = if m.name == chosen { "*" } else { " " };
                outln!("{mark} {}", describe(m));
            }
            outln!(
                "\n* dictation uses this one (Settings -> Voice). Models are kept in {}",
                voice.store().dir().display()
            );
        }
        ModelsCommand::Download { name } => {
            let tty = std::io::stderr().is_terminal();
            let mut last_percent = u64::MAX;
            let view = voice
                .download(&name, move |p| {
                    let percent = p.done * 100 / p.total.max(1);
                    if percent != last_percent {
                        last_percent = percent;
                        if tty {
                            eprint!("\rdownloading {percent:>3}% of {}", megabytes(p.total));
                        } else if percent % 10 == 0 {
                            eprintln!("downloading {percent}% of {}", megabytes(p.total));
                        }
                    }
                })
                .await;
            if tty {
                eprintln!();
            }
            let view = view?;
            outln!("{} is ready ({}).", view.name, view.path);
        }
        ModelsCommand::Delete { name } => {
            let view = voice.delete_model(&name)?;
            outln!("Deleted {} ({}).", view.name, view.path);
        }
    }
    Ok(())
}

/// The voice settings with the command line's choices applied.
async fn settings_with(engine: &Engine, language: Option<String>) -> VoiceSettings {
    let mut settings = engine.settings().get().await.voice;
    if let Some(language) = language {
        settings.language = language;
    }
    settings
}

pub async fn transcribe(
    engine: Engine,
    file: PathBuf,
    model: Option<String>,
    language: Option<String>,
) -> anyhow::Result<()> {
    let settings = settings_with(&engine, language).await;
    let tty = std::io::stderr().is_terminal();
    // Each piece's text is printed as soon as it is ready; progress goes to stderr.
    let text = engine
        .voice()
        .transcribe_file(&settings, model.as_deref(), file.clone(), move |p| {
            if p.seconds_done < p.seconds_total - 0.5 && tty {
                eprintln!("perch: transcribed {:.0} of {:.0} s", p.seconds_done, p.seconds_total);
            }
            if !p.text.is_empty() {
                outln!("{}", p.text);
            }
        })
        .await
        .with_context(|| format!("could not transcribe {}", file.display()))?;
    tracing::debug!(chars = text.len(), "transcribed");
    Ok(())
}

/// Prints a dictation's progress on the terminal.
struct TerminalSink {
    tty: bool,
}

impl DictationSink for TerminalSink {
    fn send(&self, update: DictationUpdate) {
        let mut err = std::io::stderr();
        match update.event {
            DictationEvent::Listening { device, sample_rate, channels, max_seconds } => {
                let _ = writeln!(
                    err,
                    "Listening on \"{device}\" ({sample_rate} Hz, {channels} channel(s), {} s at most). Press Enter to stop.",
                    max_seconds
                );
            }
            DictationEvent::Level { level, seconds } if self.tty => {
                let bar = "#".repeat((level * 20.0).round() as usize);
                let _ = write!(err, "\r{seconds:>5.1} s [{bar:<20}]");
            }
            DictationEvent::Partial { text } if self.tty => {
                let _ = write!(err, "\r\x1b[2K\x1b[2m{text}\x1b[0m\n");
            }
            DictationEvent::Warning { message } => {
                let _ = writeln!(err, "\nperch: {message}");
            }
            DictationEvent::Transcribing { seconds } => {
                let _ = writeln!(err, "\nTranscribing {seconds:.1} s of audio...");
            }
            _ => {}
        }
    }
}

pub async fn dictate(
    engine: Engine,
    device: Option<String>,
    model: Option<String>,
    language: Option<String>,
    save: Option<PathBuf>,
) -> anyhow::Result<()> {
    let mut settings = settings_with(&engine, language).await;
    if let Some(model) = model {
        settings.model = model;
    }
    let device = device.or_else(|| settings.device());
    let sink = Arc::new(TerminalSink { tty: std::io::stderr().is_terminal() });
    let voice = engine.voice().clone();
    voice.start_dictation(&settings, AudioSource::Device(device), sink)?;
    // Enter (or the end of input) stops the recording.
    let stopper = voice.clone();
    tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        let _ = stopper.stop_dictation();
    });
    let outcome = voice.wait_dictation().await?;
    if let Some(path) = save {
        perch_core::voice::wav::write_wav(&path, &outcome.audio)?;
        eprintln!("Saved the recording to {}.", path.display());
    }
    outln!("{}", outcome.text);
    Ok(())
}
