//! Finds where speech starts and ends, so the silence before and after it is never sent to
//! whisper (which invents words such as "Thank you." in silence, and spends time on it).
//!
//! The detector is earshot: a 40 KiB neural network in pure Rust that scores 16 ms frames,
//! works for any language and holds up in noise (SNR >= 3 dB). Chosen over webrtc-vad (a C
//! library, GMM-based, easily fooled by steady noise), over Silero (needs ONNX Runtime: 8 MB
//! more and a native library we cannot fetch from a registry here), and over an energy
//! threshold (a fan or keyboard is as loud as quiet speech). It runs about 3600x faster than
//! real time, so it scores the audio as it arrives.

use std::ops::Range;

use earshot::Detector;

use super::audio::WHISPER_RATE;

/// Samples per detector frame (16 ms at 16 kHz), fixed by earshot.
pub const FRAME: usize = 256;
/// A frame scoring at least this is speech (earshot's recommended default).
const THRESHOLD: f32 = 0.5;
/// Speech must last this many frames in a row (48 ms) to count, so a click is not speech.
const MIN_RUN: usize = 3;
/// Audio kept before the first and after the last speech: whisper needs the onset of the first
/// consonant and a moment of quiet after the last word to end its sentence.
const PAD_BEFORE_MS: usize = 250;
const PAD_AFTER_MS: usize = 450;

/// Scores audio as it arrives and remembers where speech was.
pub struct SpeechTracker {
    detector: Box<Detector>,
    leftover: Vec<f32>,
    frames: usize,
    run: usize,
    first: Option<usize>,
    last: Option<usize>,
    speech_frames: usize,
}

impl std::fmt::Debug for SpeechTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechTracker")
            .field("frames", &self.frames)
            .field("first", &self.first)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl Default for SpeechTracker {
    fn default() -> Self {
        Self {
            detector: Detector::default_boxed(),
            leftover: Vec::with_capacity(FRAME),
            frames: 0,
            run: 0,
            first: None,
            last: None,
            speech_frames: 0,
        }
    }
}

impl SpeechTracker {
    /// Seconds of audio scored since the last speech frame, once speech was heard (the pause
    /// a hands-free turn waits out before it sends).
    pub fn silence_after_speech(&self) -> Option<f32> {
        let last = self.last?;
        Some((self.frames.saturating_sub(last + 1) * FRAME) as f32 / WHISPER_RATE as f32)
    }

    /// Scores 16 kHz mono samples (any number; partial frames wait for the next call).
    pub fn push(&mut self, samples: &[f32]) {
        let mut rest = samples;
        if !self.leftover.is_empty() {
            let take = (FRAME - self.leftover.len()).min(rest.len());
            self.leftover.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.leftover.len() == FRAME {
                let frame = std::mem::take(&mut self.leftover);
                self.score(&frame);
                self.leftover = frame;
                self.leftover.clear();
            }
        }
        let mut frames = rest.chunks_exact(FRAME);
        for frame in frames.by_ref() {
            self.score(frame);
        }
        self.leftover.extend_from_slice(frames.remainder());
    }

    fn score(&mut self, frame: &[f32]) {
        let index = self.frames;
        self.frames += 1;
        if self.detector.predict_f32(frame) < THRESHOLD {
            self.run = 0;
            return;
        }
        self.run += 1;
        if self.run >= MIN_RUN {
            if self.run == MIN_RUN {
                self.speech_frames += MIN_RUN;
                if self.first.is_none() {
                    self.first = Some(index + 1 - MIN_RUN);
                }
            } else {
                self.speech_frames += 1;
            }
            self.last = Some(index);
        }
    }

    /// Whether any speech was heard.
    pub fn heard_speech(&self) -> bool {
        self.first.is_some()
    }

    /// Seconds of speech heard so far.
    pub fn speech_seconds(&self) -> f32 {
        (self.speech_frames * FRAME) as f32 / WHISPER_RATE as f32
    }

    /// The part of a buffer of `len` samples worth transcribing: from just before the first
    /// speech to just after the last, or `None` when nobody spoke.
    pub fn speech_span(&self, len: usize) -> Option<Range<usize>> {
        let (first, last) = (self.first?, self.last?);
        let ms = |ms: usize| ms * WHISPER_RATE as usize / 1000;
        let start = (first * FRAME).saturating_sub(ms(PAD_BEFORE_MS));
        let end = ((last + 1) * FRAME + ms(PAD_AFTER_MS)).min(len);
        (start < end).then_some(start..end)
    }
}

/// The speech in a whole clip (see [`SpeechTracker::speech_span`]).
pub fn speech_span(samples: &[f32]) -> Option<Range<usize>> {
    let mut tracker = SpeechTracker::default();
    tracker.push(samples);
    tracker.speech_span(samples.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vowel-like sound: a 140 Hz voice with formants at 700 and 1200 Hz, modulated at a
    /// syllable rate of 4 Hz, which is what the detector is trained to call speech.
    fn voiced(seconds: f32) -> Vec<f32> {
        let n = (seconds * WHISPER_RATE as f32) as usize;
        (0..n)
            .map(|i| {
                let t = i as f32 / WHISPER_RATE as f32;
                let tau = std::f32::consts::TAU;
                let glottal: f32 = (1..30).map(|h| (tau * 140.0 * h as f32 * t).sin() / h as f32).sum();
                let formants = (tau * 700.0 * t).sin() * 0.6 + (tau * 1200.0 * t).sin() * 0.4;
                let syllables = 0.55 + 0.45 * (tau * 4.0 * t).sin();
                glottal * formants * syllables * 0.15
            })
            .collect()
    }

    fn noise(seconds: f32, amplitude: f32, seed: u64) -> Vec<f32> {
        let mut state = seed;
        (0..(seconds * WHISPER_RATE as f32) as usize)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 2.0 * amplitude
            })
            .collect()
    }

    #[test]
    fn silence_a_quiet_room_and_mains_hum_are_not_speech() {
        assert_eq!(speech_span(&vec![0.0; 16_000 * 2]), None);
        // About -55 dBFS of hiss, a quiet room through a laptop microphone. (Loud broadband
        // noise can pass for speech; whisper then finds no words and the dictation says so.)
        assert_eq!(speech_span(&noise(2.0, 0.005, 7)), None);
        let hum: Vec<f32> =
            (0..32_000).map(|i| (std::f32::consts::TAU * 50.0 * i as f32 / 16_000.0).sin() * 0.3).collect();
        assert_eq!(speech_span(&hum), None);
    }

    #[test]
    fn silence_around_speech_is_trimmed_with_a_little_margin() {
        let mut clip = vec![0.0; 16_000 * 2];
        clip.extend(voiced(1.5));
        clip.extend(vec![0.0; 16_000 * 3]);
        let span = speech_span(&clip).expect("the voiced part is speech");
        let (speech_start, speech_end) = (32_000, 56_000);
        assert!(span.start <= speech_start && span.start >= speech_start - 8_000, "{span:?}");
        assert!(span.end >= speech_end - 1_600 && span.end <= speech_end + 12_000, "{span:?}");
    }

    #[test]
    fn speech_in_a_noisy_room_is_still_found() {
        let mut clip = noise(1.0, 0.005, 11);
        let speech: Vec<f32> = voiced(1.5).iter().zip(noise(1.5, 0.02, 12)).map(|(v, n)| v + n).collect();
        clip.extend(speech);
        clip.extend(noise(1.0, 0.005, 13));
        let span = speech_span(&clip).expect("speech over noise is speech");
        assert!(span.start < 16_000 + 4_000 && span.end > 16_000 + 20_000, "{span:?}");
    }

    #[test]
    fn feeding_in_odd_pieces_gives_the_same_answer_as_all_at_once() {
        let mut clip = noise(1.0, 0.002, 3);
        clip.extend(voiced(1.0));
        clip.extend(noise(1.0, 0.002, 4));
        let whole = speech_span(&clip);
        let mut tracker = SpeechTracker::default();
        for piece in clip.chunks(1000) {
            tracker.push(piece);
        }
        assert_eq!(tracker.speech_span(clip.len()), whole);
        assert!(tracker.heard_speech());
        assert!(tracker.speech_seconds() > 0.5, "{}", tracker.speech_seconds());
    }
}
