//! Audio as whisper wants it: 16 kHz mono `f32`. Whatever a microphone or a WAV file gives
//! (any rate, any channel count) is mixed down to mono and resampled with rubato's windowed-sinc
//! resampler, chunk by chunk, so a live stream and a whole file go through the same code.
//!
//! Sinc rather than rubato's FFT resampler: the FFT one brings rustfft, 0.8 MB of the app binary
//! for a job that costs the sinc filter (256 taps) well under 1% of a core at 48 kHz (issue 16).

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Async, FixedAsync, Indexing, Resampler, SincInterpolationParameters};

/// The sample rate whisper models are trained on.
pub const WHISPER_RATE: u32 = 16_000;

/// Frames the resampler takes per call (about 20 ms at 48 kHz): small enough for a live
/// level meter.
const CHUNK_FRAMES: usize = 1024;

/// Averages interleaved frames into one channel.
pub fn mix_to_mono(interleaved: &[f32], channels: usize, out: &mut Vec<f32>) {
    match channels {
        0 => {}
        1 => out.extend_from_slice(interleaved),
        n => {
            let scale = 1.0 / n as f32;
            out.extend(interleaved.chunks_exact(n).map(|frame| frame.iter().sum::<f32>() * scale));
        }
    }
}

/// Turns a stream of interleaved frames at any rate and channel count into 16 kHz mono.
pub struct ToWhisper {
    channels: usize,
    rate_in: u32,
    /// Mono samples waiting for a full resampler chunk.
    pending: Vec<f32>,
    resampler: Option<Async<f32>>,
    /// Output frames still to drop at the start (the resampler's delay).
    delay_left: usize,
    frames_in: u64,
    frames_out: u64,
    scratch: Vec<f32>,
}

impl std::fmt::Debug for ToWhisper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToWhisper").field("channels", &self.channels).field("rate_in", &self.rate_in).finish()
    }
}

/// Why a stream's format cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("audio with {channels} channel(s) at {rate} Hz cannot be converted: {reason}")]
pub struct FormatError {
    pub channels: usize,
    pub rate: u32,
    pub reason: String,
}

impl ToWhisper {
    pub fn new(rate_in: u32, channels: usize) -> Result<Self, FormatError> {
        let fail = |reason: &str| FormatError { channels, rate: rate_in, reason: reason.to_owned() };
        if channels == 0 {
            return Err(fail("no channels"));
        }
        if !(1_000..=768_000).contains(&rate_in) {
            return Err(fail("the sample rate is outside 1 kHz to 768 kHz"));
        }
        let resampler = if rate_in == WHISPER_RATE {
            None
        } else {
            let ratio = f64::from(WHISPER_RATE) / f64::from(rate_in);
            let sinc = Async::<f32>::new_sinc(
                ratio,
                1.0,
                &SincInterpolationParameters::default(),
                CHUNK_FRAMES,
                1,
                FixedAsync::Input,
            )
            .map_err(|e| fail(&e.to_string()))?;
            Some(sinc)
        };
        let delay_left = resampler.as_ref().map_or(0, |r| r.output_delay());
        Ok(Self {
            channels,
            rate_in,
            pending: Vec::with_capacity(CHUNK_FRAMES * 2),
            resampler,
            delay_left,
            frames_in: 0,
            frames_out: 0,
            scratch: Vec::new(),
        })
    }

    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Converts `interleaved` (a whole number of frames) and appends the result to `out`.
    pub fn push(&mut self, interleaved: &[f32], out: &mut Vec<f32>) {
        let before = self.pending.len();
        mix_to_mono(interleaved, self.channels, &mut self.pending);
        self.frames_in += (self.pending.len() - before) as u64;
        self.drain(out, false);
    }

    /// Flushes what the resampler still holds; the total output then matches the input's
    /// duration to the sample.
    pub fn finish(&mut self, out: &mut Vec<f32>) {
        self.drain(out, true);
    }

    fn drain(&mut self, out: &mut Vec<f32>, last: bool) {
        let Some(resampler) = self.resampler.as_mut() else {
            self.frames_out += self.pending.len() as u64;
            out.append(&mut self.pending);
            return;
        };
        let expected_total = self.frames_in * u64::from(WHISPER_RATE) / u64::from(self.rate_in);
        loop {
            let need = resampler.input_frames_next();
            let partial = self.pending.len() < need;
            if partial && !last {
                return;
            }
            if last && self.frames_out >= expected_total {
                self.pending.clear();
                return;
            }
            let take = self.pending.len().min(need);
            self.scratch.resize(resampler.output_frames_max(), 0.0);
            let mut chunk = std::mem::take(&mut self.pending);
            let rest = chunk.split_off(take);
            chunk.resize(need, 0.0);
            let input = InterleavedSlice::new(&chunk, 1, need).expect("one channel of `need` frames");
            let frames = self.scratch.len();
            let mut output =
                InterleavedSlice::new_mut(&mut self.scratch, 1, frames).expect("one channel of output");
            let indexing = partial.then(|| Indexing::new().partial_len(take));
            let (_, written) = resampler
                .process_into_buffer(&input, &mut output, indexing.as_ref())
                .expect("buffers are sized by the resampler's own limits");
            self.pending = rest;
            let skip = self.delay_left.min(written);
            self.delay_left -= skip;
            let mut produced = &self.scratch[skip..written];
            if last {
                let room = expected_total.saturating_sub(self.frames_out) as usize;
                produced = &produced[..produced.len().min(room)];
            }
            self.frames_out += produced.len() as u64;
            out.extend_from_slice(produced);
        }
    }
}

/// Converts a whole clip at once.
pub fn to_whisper(interleaved: &[f32], rate: u32, channels: usize) -> Result<Vec<f32>, FormatError> {
    let mut conv = ToWhisper::new(rate, channels)?;
    let mut out =
        Vec::with_capacity(interleaved.len() / channels * WHISPER_RATE as usize / rate as usize + 16);
    conv.push(interleaved, &mut out);
    conv.finish(&mut out);
    Ok(out)
}

/// A level for the meter, 0 (silence) to 1 (loud speech), from the RMS of a block mapped
/// logarithmically over -60..0 dBFS, so quiet speech still moves the bar.
pub fn level(samples: &[f32]) -> f32 {
    if samples.is_empty() {
        return 0.0;
    }
    let mean_square = samples.iter().map(|s| s * s).sum::<f32>() / samples.len() as f32;
    let db = 10.0 * mean_square.max(1e-12).log10();
    ((db + 60.0) / 60.0).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(freq: f32, rate: u32, seconds: f32, channels: usize) -> Vec<f32> {
        let frames = (rate as f32 * seconds) as usize;
        (0..frames)
            .flat_map(|i| {
                let v = (2.0 * std::f32::consts::PI * freq * i as f32 / rate as f32).sin() * 0.5;
                std::iter::repeat_n(v, channels)
            })
            .collect()
    }

    /// The strongest frequency in `samples` (a plain DFT over a few candidates is enough).
    fn power_at(samples: &[f32], freq: f32, rate: u32) -> f32 {
        let (mut re, mut im) = (0.0f64, 0.0f64);
        for (i, s) in samples.iter().enumerate() {
            let phase = 2.0 * std::f64::consts::PI * f64::from(freq) * i as f64 / f64::from(rate);
            re += f64::from(*s) * phase.cos();
            im += f64::from(*s) * phase.sin();
        }
        ((re * re + im * im).sqrt() / samples.len() as f64) as f32
    }

    #[test]
    fn stereo_at_44_1_and_48_khz_becomes_16_khz_mono_of_the_same_length_and_pitch() {
        for rate in [44_100, 48_000] {
            let input = sine(440.0, rate, 1.5, 2);
            // Fed in uneven pieces, as a microphone delivers it.
            let mut conv = ToWhisper::new(rate, 2).unwrap();
            let mut out = Vec::new();
            for piece in input.chunks(2 * 377) {
                conv.push(piece, &mut out);
            }
            conv.finish(&mut out);
            assert_eq!(out.len(), 24_000, "{rate} Hz: 1.5 s is 24000 samples at 16 kHz");
            let middle = &out[4_000..20_000];
            let at_440 = power_at(middle, 440.0, WHISPER_RATE);
            let at_880 = power_at(middle, 880.0, WHISPER_RATE);
            assert!(at_440 > 0.2, "{rate} Hz: the tone survives ({at_440})");
            assert!(at_880 < at_440 / 100.0, "{rate} Hz: no other pitch appears ({at_880})");
            // No delay at the start: the first samples already carry the tone's rising edge.
            let rms_first_ms = level(&out[16..160]);
            assert!(rms_first_ms > 0.5, "{rate} Hz: the start is not silence ({rms_first_ms})");
        }
    }

    #[test]
    fn content_above_8_khz_is_filtered_out_instead_of_folding_back() {
        // 12 kHz would alias to 4 kHz at 16 kHz without the resampler's anti-aliasing filter.
        let input = sine(12_000.0, 48_000, 1.0, 1);
        let out = to_whisper(&input, 48_000, 1).unwrap();
        assert!(power_at(&out[2_000..14_000], 4_000.0, WHISPER_RATE) < 0.005);
    }

    #[test]
    fn channels_are_averaged() {
        let mut out = Vec::new();
        mix_to_mono(&[1.0, 0.0, 0.5, 0.5, -1.0, 1.0], 2, &mut out);
        assert_eq!(out, vec![0.5, 0.5, 0.0]);
    }

    #[test]
    fn sixteen_khz_mono_passes_through_untouched() {
        let input = sine(300.0, 16_000, 0.25, 1);
        assert_eq!(to_whisper(&input, 16_000, 1).unwrap(), input);
    }

    #[test]
    fn impossible_formats_are_refused() {
        assert!(ToWhisper::new(48_000, 0).is_err());
        assert!(ToWhisper::new(10, 1).is_err());
    }

    #[test]
    fn the_level_follows_loudness() {
        assert_eq!(level(&[0.0; 160]), 0.0);
        let quiet = level(&sine(200.0, 16_000, 0.1, 1).iter().map(|s| s * 0.01).collect::<Vec<_>>());
        let loud = level(&sine(200.0, 16_000, 0.1, 1));
        assert!(quiet > 0.1 && quiet < loud && loud > 0.8, "{quiet} {loud}");
    }
}
