//! `perch say`: text read aloud in Perch's voice (the one Settings -> Voice picks), to the
//! loudspeaker or into a WAV file; and the voices themselves (list, download, delete).

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Subcommand;
use perch_core::Engine;
use perch_core::speech::{Phrases, SpeechEvent, VoiceChoice, VoiceState};

#[derive(Debug, Subcommand)]
pub enum VoicesCommand {
    /// The natural voices Perch offers, and which are downloaded.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Downloads a voice (resumes an interrupted download).
    Download { name: String },
    /// Deletes a downloaded voice.
    Delete { name: String },
}

pub struct SayArgs {
    pub text: Option<String>,
    pub file: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub voice: Option<String>,
    pub speed: Option<u32>,
}

pub async fn say(engine: Engine, args: SayArgs) -> anyhow::Result<()> {
    let text = match (&args.text, &args.file) {
        (Some(text), None) => text.clone(),
        (None, Some(path)) if path.as_os_str() == "-" => {
            std::io::read_to_string(std::io::stdin()).context("reading stdin")?
        }
        (None, Some(path)) => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
        }
        _ => bail!("give the text to say, or --file FILE (- for standard input)"),
    };
    if text.trim().is_empty() {
        bail!("there is nothing to say");
    }
    let all = engine.settings().get().await;
    let mut settings = all.speech.clone();
    if let Some(voice) = args.voice {
        settings.voice = voice;
    }
    if let Some(speed) = args.speed {
        settings.speed_percent = speed;
    }
    let language = perch_core::read_aloud::language(all.language.as_deref());
    let speech = engine.speech().clone();
    if let VoiceChoice::Espeak { reason, .. } = speech.choose(&settings, &language) {
        eprintln!("Speaking with espeak-ng: {reason}.");
    }
    if let Some(out) = args.out {
        let (speech_clone, text_clone) = (speech.clone(), text.clone());
        let (audio, rate) = tokio::task::spawn_blocking(move || {
            speech_clone.render(&text_clone, &settings, &language, Phrases::default())
        })
        .await??;
        perch_core::speech::write_wav(&out, &audio, rate)?;
        eprintln!("Wrote {} ({:.1} s of speech).", out.display(), audio.len() as f64 / f64::from(rate));
        return Ok(());
    }
    let mut events = speech.subscribe();
    perch_core::read_aloud::speak_text(&speech, "say", &text, &settings, &language, Phrases::default());
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(SpeechEvent::Finished { .. }) => return Ok(()),
                Ok(SpeechEvent::Failed { message, .. }) => bail!(message),
                Ok(SpeechEvent::Stopped { .. }) => return Ok(()),
                Ok(SpeechEvent::Speaking { .. }) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => bail!("the speaker stopped"),
            },
            _ = tokio::signal::ctrl_c() => {
                speech.speaker().stop();
                return Ok(());
            }
        }
    }
}

pub async fn voices(engine: Engine, command: VoicesCommand) -> anyhow::Result<()> {
    let speech = engine.speech();
    match command {
        VoicesCommand::List { json } => {
            let voices = speech.voices();
            if json {
                println!("{}", serde_json::to_string_pretty(&voices)?);
                return Ok(());
            }
            for voice in voices {
                let state = match voice.state {
                    VoiceState::Ready => "downloaded".to_owned(),
                    VoiceState::Partial => {
                        format!("{} of {} MB", voice.partial / 1_000_000, voice.size / 1_000_000)
                    }
                    VoiceState::Absent => format!("{} MB", voice.size / 1_000_000),
                };
                println!("{:<28} {:<6} {:<14} {}", voice.name, voice.language, state, voice.summary);
            }
        }
        VoicesCommand::Download { name } => {
            let mut last = 0;
            let view = speech
                .download(&name, |p: perch_core::speech::Progress| {
                    let percent = (p.done * 100).checked_div(p.total).unwrap_or(100);
                    if percent != last {
                        last = percent;
                        eprint!("\rDownloading {name}: {percent}%");
                    }
                })
                .await?;
            eprintln!();
            println!("{} is ready.", view.name);
        }
        VoicesCommand::Delete { name } => {
            speech.delete(&name)?;
            println!("Deleted {name}.");
        }
    }
    Ok(())
}
