//! WAV files of any common format (8/16/24/32-bit integer or 32-bit float, any rate, any
//! channel count), read in pieces so a two-hour recording never sits in memory whole.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use hound::{SampleFormat, WavReader};

use super::VoiceError;
use super::audio::{ToWhisper, WHISPER_RATE};

/// What a WAV file holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WavInfo {
    pub sample_rate: u32,
    pub channels: u16,
    pub bits: u16,
    pub float: bool,
    pub seconds: f64,
}

/// A WAV file read as 16 kHz mono, piece by piece.
pub struct WavStream {
    path: PathBuf,
    reader: WavReader<BufReader<File>>,
    info: WavInfo,
    convert: ToWhisper,
    finished: bool,
}

impl std::fmt::Debug for WavStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WavStream").field("path", &self.path).field("info", &self.info).finish()
    }
}

fn unsupported(path: &Path, message: impl Into<String>) -> VoiceError {
    VoiceError::UnsupportedAudio { path: path.to_path_buf(), message: message.into() }
}

impl WavStream {
    pub fn open(path: &Path) -> Result<Self, VoiceError> {
        let file = File::open(path).map_err(|e| VoiceError::io("opening", path, e))?;
        let reader = WavReader::new(BufReader::new(file)).map_err(|e| match e {
            hound::Error::IoError(e) => VoiceError::io("reading", path, e),
            hound::Error::FormatError(m) => unsupported(path, format!("not a WAV file Perch can read ({m})")),
            hound::Error::Unsupported => {
                unsupported(path, "this WAV encoding is not supported; use PCM or 32-bit float")
            }
            other => unsupported(path, other.to_string()),
        })?;
        let spec = reader.spec();
        let float = spec.sample_format == SampleFormat::Float;
        if float && spec.bits_per_sample != 32 {
            return Err(unsupported(
                path,
                format!("{}-bit float samples are not supported", spec.bits_per_sample),
            ));
        }
        if !float && !(8..=32).contains(&spec.bits_per_sample) {
            return Err(unsupported(path, format!("{}-bit samples are not supported", spec.bits_per_sample)));
        }
        let info = WavInfo {
            sample_rate: spec.sample_rate,
            channels: spec.channels,
            bits: spec.bits_per_sample,
            float,
            seconds: f64::from(reader.duration()) / f64::from(spec.sample_rate.max(1)),
        };
        let convert = ToWhisper::new(spec.sample_rate, usize::from(spec.channels))
            .map_err(|e| unsupported(path, e.to_string()))?;
        Ok(Self { path: path.to_path_buf(), reader, info, convert, finished: false })
    }

    pub fn info(&self) -> WavInfo {
        self.info
    }

    /// Appends up to `max_seconds` of 16 kHz mono audio to `out`; returns false at the end.
    pub fn read(&mut self, max_seconds: f64, out: &mut Vec<f32>) -> Result<bool, VoiceError> {
        if self.finished {
            return Ok(false);
        }
        let channels = usize::from(self.info.channels);
        let frames = (max_seconds * f64::from(self.info.sample_rate)).max(1.0) as usize;
        let mut interleaved = Vec::with_capacity(frames * channels);
        let bits = u32::from(self.info.bits);
        let path = &self.path;
        let bad = |e: hound::Error| match e {
            hound::Error::IoError(e) => VoiceError::io("reading", path, e),
            other => unsupported(path, format!("the file is damaged ({other})")),
        };
        if self.info.float {
            for sample in self.reader.samples::<f32>().take(frames * channels) {
                interleaved.push(sample.map_err(bad)?);
            }
        } else {
            let scale = 1.0 / (1u64 << (bits - 1)) as f32;
            for sample in self.reader.samples::<i32>().take(frames * channels) {
                interleaved.push(sample.map_err(bad)? as f32 * scale);
            }
        }
        // A truncated last frame is dropped rather than shifting every channel after it.
        interleaved.truncate(interleaved.len() / channels * channels);
        self.convert.push(&interleaved, out);
        if interleaved.len() < frames * channels {
            self.convert.finish(out);
            self.finished = true;
        }
        Ok(!self.finished)
    }
}

/// Reads a whole WAV file as 16 kHz mono.
pub fn read_wav(path: &Path) -> Result<(Vec<f32>, WavInfo), VoiceError> {
    let mut stream = WavStream::open(path)?;
    let info = stream.info();
    let mut out = Vec::with_capacity((info.seconds * f64::from(WHISPER_RATE)) as usize + 16);
    while stream.read(60.0, &mut out)? {}
    Ok((out, info))
}

/// Writes 16 kHz mono audio as a 16-bit WAV file (tests and `perch dictate --save`).
pub fn write_wav(path: &Path, samples: &[f32]) -> Result<(), VoiceError> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: WHISPER_RATE,
        bits_per_sample: 16,
        sample_format: SampleFormat::Int,
    };
    let io = |e: hound::Error| match e {
        hound::Error::IoError(e) => VoiceError::io("writing", path, e),
        other => VoiceError::io("writing", path, std::io::Error::other(other.to_string())),
    };
    let mut writer = hound::WavWriter::create(path, spec).map_err(io)?;
    for s in samples {
        writer.write_sample((s.clamp(-1.0, 1.0) * 32767.0) as i16).map_err(io)?;
    }
    writer.finalize().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcm16(channels: u16, sample_rate: u32) -> hound::WavSpec {
        hound::WavSpec { channels, sample_rate, bits_per_sample: 16, sample_format: SampleFormat::Int }
    }

    fn write(path: &Path, spec: hound::WavSpec, frames: usize) {
        let mut w = hound::WavWriter::create(path, spec).unwrap();
        for i in 0..frames {
            let v = (i as f32 * 0.05).sin() * 0.5;
            for _ in 0..spec.channels {
                match (spec.sample_format, spec.bits_per_sample) {
                    (SampleFormat::Float, _) => w.write_sample(v).unwrap(),
                    (_, 8) => w.write_sample((v * 127.0) as i8).unwrap(),
                    (_, 16) => w.write_sample((v * 32767.0) as i16).unwrap(),
                    (_, 24) => w.write_sample((v * 8_388_607.0) as i32).unwrap(),
                    _ => w.write_sample((v * 2_147_483_647.0) as i32).unwrap(),
                }
            }
        }
        w.finalize().unwrap();
    }

    #[test]
    fn every_common_format_reads_as_16_khz_mono_of_the_right_length() {
        let dir = tempfile::tempdir().unwrap();
        let formats = [
            (SampleFormat::Int, 8, 8_000, 1),
            (SampleFormat::Int, 16, 44_100, 2),
            (SampleFormat::Int, 24, 48_000, 2),
            (SampleFormat::Int, 32, 22_050, 1),
            (SampleFormat::Float, 32, 96_000, 6),
        ];
        for (format, bits, rate, channels) in formats {
            let path = dir.path().join(format!("{bits}-{rate}-{channels}.wav"));
            let spec =
                hound::WavSpec { channels, sample_rate: rate, bits_per_sample: bits, sample_format: format };
            write(&path, spec, rate as usize / 2);
            let (samples, info) = read_wav(&path).unwrap();
            assert_eq!(samples.len(), 8_000, "{path:?}");
            assert_eq!((info.sample_rate, info.channels), (rate, channels));
            let peak = samples.iter().fold(0f32, |m, s| m.max(s.abs()));
            assert!((0.4..0.6).contains(&peak), "{path:?}: amplitude kept ({peak})");
        }
    }

    #[test]
    fn non_wav_and_truncated_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.wav");
        std::fs::write(&text, "this is not audio").unwrap();
        let err = read_wav(&text).unwrap_err();
        assert!(matches!(err, VoiceError::UnsupportedAudio { .. }), "{err}");
        assert!(err.to_string().contains("not a WAV file"), "{err}");

        let missing = read_wav(&dir.path().join("nope.wav")).unwrap_err();
        assert!(missing.to_string().contains("nope.wav"), "{missing}");

        let good = dir.path().join("good.wav");
        write(&good, pcm16(1, 16_000), 16_000);
        let bytes = std::fs::read(&good).unwrap();
        let cut = dir.path().join("cut.wav");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        // A file cut short reads what is there, or says it is damaged; it never panics.
        match read_wav(&cut) {
            Ok((samples, _)) => assert!(samples.len() < 16_000),
            Err(e) => {
                assert!(matches!(e, VoiceError::UnsupportedAudio { .. } | VoiceError::Io { .. }), "{e}")
            }
        }
    }

    #[test]
    fn long_files_are_read_in_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("long.wav");
        write(&path, pcm16(2, 48_000), 48_000 * 5);
        let mut stream = WavStream::open(&path).unwrap();
        let mut out = Vec::new();
        let mut pieces = 0;
        while stream.read(1.0, &mut out).unwrap() {
            pieces += 1;
            assert!(out.len() <= (pieces + 1) * 16_000);
        }
        assert_eq!(out.len(), 80_000);
        assert!(pieces >= 4);
    }
}
