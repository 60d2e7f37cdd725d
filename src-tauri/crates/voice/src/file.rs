//! Transcribing a WAV file of any length: read in pieces of a few minutes, each cut at its
//! quietest moment near the end (never inside a word), trimmed to its speech and transcribed
//! as it comes, so a two-hour recording needs the memory of five minutes and shows text from
//! the first minutes on.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::audio::WHISPER_RATE;
use super::whisper::{Model, TranscribeOptions};
use super::{VoiceError, vad, wav};

const PIECE_SECONDS: usize = 300;
/// The cut falls in the quietest 100 ms of the piece's last ten seconds.
const CUT_SEARCH_SECONDS: usize = 10;
const CUT_WINDOW: usize = WHISPER_RATE as usize / 10;

/// Progress of a file's transcription.
#[derive(Debug, Clone, PartialEq)]
pub struct FileProgress {
    pub seconds_done: f64,
    pub seconds_total: f64,
    /// The text of the piece just finished (empty for a piece without speech).
    pub text: String,
}

/// Where to cut `audio` (a piece ending before the file does): the start of its quietest
/// 100 ms in the last ten seconds.
pub fn quiet_cut(audio: &[f32]) -> usize {
    let search_from = audio.len().saturating_sub(CUT_SEARCH_SECONDS * WHISPER_RATE as usize);
    let mut best = (f32::MAX, audio.len());
    let mut start = search_from;
    while start + CUT_WINDOW <= audio.len() {
        let energy: f32 = audio[start..start + CUT_WINDOW].iter().map(|s| s * s).sum();
        if energy < best.0 {
            best = (energy, start + CUT_WINDOW / 2);
        }
        start += CUT_WINDOW / 2;
    }
    best.1
}

/// Transcribes the file at `path` piece by piece; `progress` hears about each piece. Blocks.
pub fn transcribe_file(
    model: &Model,
    path: &Path,
    options: &TranscribeOptions,
    abort: Option<Arc<AtomicBool>>,
    mut progress: impl FnMut(FileProgress),
) -> Result<String, VoiceError> {
    let mut stream = wav::WavStream::open(path)?;
    let total = stream.info().seconds;
    let mut pending: Vec<f32> = Vec::new();
    let mut consumed = 0usize;
    let mut texts: Vec<String> = Vec::new();
    let mut more = true;
    while more || !pending.is_empty() {
        while more && pending.len() < PIECE_SECONDS * WHISPER_RATE as usize {
            more = stream.read(30.0, &mut pending)?;
        }
        let cut = if more { quiet_cut(&pending) } else { pending.len() };
        let piece: Vec<f32> = pending.drain(..cut).collect();
        consumed += piece.len();
        let text = match vad::speech_span(&piece) {
            Some(span) => model.transcribe(&piece[span], options, abort.clone())?.text,
            None => String::new(),
        };
        if !text.is_empty() {
            texts.push(text.clone());
        }
        progress(FileProgress {
            seconds_done: consumed as f64 / f64::from(WHISPER_RATE),
            seconds_total: total,
            text,
        });
        if !more && pending.is_empty() {
            break;
        }
    }
    if texts.is_empty() {
        return Err(VoiceError::NoSpeech);
    }
    Ok(texts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_falls_in_the_quiet_gap_near_the_end() {
        let rate = WHISPER_RATE as usize;
        let mut audio = vec![0.3f32; rate * 60];
        // A gap of silence 4 s before the end.
        for s in &mut audio[rate * 56..rate * 56 + rate / 5] {
            *s = 0.0;
        }
        let cut = quiet_cut(&audio);
        assert!((rate * 56..rate * 56 + rate / 5).contains(&cut), "{cut}");
    }
}
