//! The loudspeaker, through cpal: a stream on its own thread (cpal streams may not move between
//! threads) that plays queued speech at the device's own rate and channel count. The stream is
//! paused while nothing is queued (no wake-ups, and the sound server sees an idle client), and
//! started again by the next sentence. `stop` empties the queue, so the voice stops within one
//! audio buffer.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, SampleFormat, SizedSample};
use serde::Serialize;

use super::SpeechError;

/// A loudspeaker as Settings lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct OutputDevice {
    pub name: String,
    pub is_default: bool,
}

/// ALSA's `null` device plays nothing anyone hears.
fn is_null(name: &str) -> bool {
    name == "null" || name.starts_with("Discard all samples")
}

/// Every output this machine offers (never ALSA's `null` device).
pub fn list_devices() -> Result<Vec<OutputDevice>, SpeechError> {
    let host = cpal::default_host();
    let default_name = host.default_output_device().map(|d| d.to_string());
    let devices = host.output_devices().map_err(|e| SpeechError::Output { message: e.to_string() })?;
    Ok(devices
        .map(|d| d.to_string())
        .filter(|name| !is_null(name))
        .map(|name| OutputDevice { is_default: default_name.as_deref() == Some(name.as_str()), name })
        .collect())
}

#[derive(Default)]
struct Queue {
    /// Mono samples at the device's rate.
    samples: VecDeque<f32>,
    /// Why the stream ended (the device was unplugged, the sound server went away): nothing
    /// queued will play.
    failed: Option<String>,
}

/// An open loudspeaker.
pub struct Player {
    queue: Arc<Mutex<Queue>>,
    rate: u32,
    device: String,
    /// The device asked for (`None`: the system's default), to know when Settings changed it.
    requested: Option<String>,
    /// Wakes the stream's thread: `true` to play, and closed to end it.
    control: Option<mpsc::Sender<bool>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Player")
            .field("device", &self.device)
            .field("rate", &self.rate)
            .finish_non_exhaustive()
    }
}

impl Player {
    /// Opens `device` (`None`: the system's default output).
    pub fn open(device: Option<&str>) -> Result<Self, SpeechError> {
        let queue = Arc::new(Mutex::new(Queue::default()));
        let wanted = device.map(str::to_owned);
        let (ready_tx, ready_rx) = mpsc::channel();
        let (control_tx, control_rx) = mpsc::channel::<bool>();
        let stream_queue = queue.clone();
        let thread = std::thread::Builder::new()
            .name("perch-speaker".into())
            .spawn(move || match open_stream(wanted.as_deref(), stream_queue.clone()) {
                Ok((stream, rate, name)) => {
                    let _ = ready_tx.send(Ok((rate, name)));
                    run_stream(&stream, &control_rx, &stream_queue);
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            })
            .map_err(|e| SpeechError::Output {
                message: format!("the playback thread could not start: {e}"),
            })?;
        let (rate, name) = ready_rx
            .recv()
            .map_err(|_| SpeechError::Output { message: "the playback thread stopped".into() })??;
        tracing::info!(device = %name, rate, "speaker open");
        let requested = device.map(str::to_owned);
        Ok(Self { queue, rate, device: name, requested, control: Some(control_tx), thread: Some(thread) })
    }

    pub fn device(&self) -> &str {
        &self.device
    }

    /// The device it was opened for (`None`: the default).
    pub fn requested(&self) -> Option<&str> {
        self.requested.as_deref()
    }

    /// Queues mono `samples` recorded at `rate`, converted to the device's rate.
    pub fn play(&self, samples: &[f32], rate: u32) {
        let converted = resample(samples, rate, self.rate);
        self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).samples.extend(converted);
        if let Some(control) = &self.control {
            let _ = control.send(true);
        }
    }

    /// Silences the voice at once: everything queued is dropped.
    pub fn stop(&self) {
        self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).samples.clear();
    }

    /// Why the loudspeaker can no longer play, once its stream has failed.
    pub fn failure(&self) -> Option<String> {
        self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).failed.clone()
    }

    /// Seconds of speech still queued.
    pub fn queued_seconds(&self) -> f64 {
        let queued = self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).samples.len();
        queued as f64 / f64::from(self.rate)
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        self.control.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Plays while there is speech queued; pauses a quarter of a second after the queue empties.
fn run_stream(stream: &cpal::Stream, control: &mpsc::Receiver<bool>, queue: &Mutex<Queue>) {
    let mut playing = false;
    let mut empty_since: Option<std::time::Instant> = None;
    let tick = std::time::Duration::from_millis(50);
    loop {
        // Paused, nothing can change until the next sentence: wait for it without waking.
        let message = if playing {
            control.recv_timeout(tick)
        } else {
            control.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
        };
        match message {
            Ok(_) if !playing => {
                if let Err(e) = stream.play() {
                    tracing::warn!(error = %e, "the speaker could not start");
                }
                playing = true;
                empty_since = None;
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        if playing {
            let empty = queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).samples.is_empty();
            match (empty, empty_since) {
                (false, _) => empty_since = None,
                (true, None) => empty_since = Some(std::time::Instant::now()),
                // The device's own buffer has played out by now.
                (true, Some(since)) if since.elapsed() >= std::time::Duration::from_millis(250) => {
                    if let Err(e) = stream.pause() {
                        tracing::debug!(error = %e, "the speaker could not pause");
                    }
                    playing = false;
                }
                (true, Some(_)) => {}
            }
        }
    }
}

fn open_stream(
    wanted: Option<&str>,
    queue: Arc<Mutex<Queue>>,
) -> Result<(cpal::Stream, u32, String), SpeechError> {
    let host = cpal::default_host();
    let device = match wanted {
        None => host.default_output_device().ok_or_else(|| SpeechError::Output {
            message: format!("the {} audio system has no output device", host.id().name()),
        })?,
        Some(name) => host
            .output_devices()
            .map_err(|e| SpeechError::Output { message: e.to_string() })?
            .find(|d| d.to_string() == name)
            .ok_or_else(|| SpeechError::OutputNotFound { name: name.to_owned() })?,
    };
    let name = device.to_string();
    let failed =
        |e: cpal::Error| SpeechError::Output { message: format!("\"{name}\" could not be opened: {e}") };
    let config = device.default_output_config().map_err(failed)?;
    let rate = config.sample_rate();
    let channels = usize::from(config.channels());
    let stream_config = config.config();
    let stream = match config.sample_format() {
        SampleFormat::F32 => build::<f32>(&device, &stream_config, channels, queue),
        SampleFormat::I16 => build::<i16>(&device, &stream_config, channels, queue),
        SampleFormat::I32 => build::<i32>(&device, &stream_config, channels, queue),
        SampleFormat::U16 => build::<u16>(&device, &stream_config, channels, queue),
        SampleFormat::U8 => build::<u8>(&device, &stream_config, channels, queue),
        SampleFormat::F64 => build::<f64>(&device, &stream_config, channels, queue),
        other => {
            return Err(SpeechError::Output {
                message: format!("\"{name}\" wants {other} samples, which Perch cannot play"),
            });
        }
    }
    .map_err(failed)?;
    // Started by the first sentence (some back ends start a stream when it is built).
    let _ = stream.pause();
    Ok((stream, rate, name))
}

fn build<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    channels: usize,
    queue: Arc<Mutex<Queue>>,
) -> Result<cpal::Stream, cpal::Error>
where
    T: SizedSample + FromSample<f32> + Send + 'static,
{
    let errors = queue.clone();
    device.build_output_stream::<T, _, _>(
        *config,
        move |data: &mut [T], _| {
            let mut queue = queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            for frame in data.chunks_mut(channels.max(1)) {
                frame.fill(T::from_sample(queue.samples.pop_front().unwrap_or(0.0)));
            }
        },
        move |e: cpal::Error| {
            tracing::warn!(error = %e, "speaker stream");
            if ends_stream(e.kind()) {
                errors.lock().unwrap_or_else(std::sync::PoisonError::into_inner).failed = Some(e.to_string());
            }
        },
        None,
    )
}

/// Whether a stream error means nothing more will play (the answer would otherwise wait forever
/// for its queue to drain); an underrun or a route change is only a glitch.
fn ends_stream(kind: cpal::ErrorKind) -> bool {
    use cpal::ErrorKind as K;
    !matches!(kind, K::Xrun | K::DeviceChanged | K::RealtimeDenied | K::DeviceBusy)
}

/// Linear interpolation from `from` Hz to `to` Hz. Speech from the voices is band-limited well
/// below both rates' Nyquist frequency, so this is transparent for it (and costs nothing next to
/// the model).
pub fn resample(samples: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || samples.is_empty() {
        return samples.to_vec();
    }
    let step = f64::from(from) / f64::from(to);
    let count = ((samples.len() as f64) / step).floor() as usize;
    (0..count)
        .map(|i| {
            let at = i as f64 * step;
            let left = at.floor() as usize;
            let frac = (at - left as f64) as f32;
            let a = samples[left.min(samples.len() - 1)];
            let b = samples[(left + 1).min(samples.len() - 1)];
            a + (b - a) * frac
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_errors_that_end_the_stream_fail_the_answer() {
        assert!(ends_stream(cpal::ErrorKind::DeviceNotAvailable));
        assert!(ends_stream(cpal::ErrorKind::StreamInvalidated));
        assert!(ends_stream(cpal::ErrorKind::HostUnavailable));
        assert!(!ends_stream(cpal::ErrorKind::Xrun));
        assert!(!ends_stream(cpal::ErrorKind::DeviceChanged));
    }

    #[test]
    fn resampling_keeps_duration_and_shape() {
        let tone: Vec<f32> =
            (0..22_050).map(|i| (i as f32 * 440.0 * std::f32::consts::TAU / 22_050.0).sin()).collect();
        let out = resample(&tone, 22_050, 48_000);
        assert!((out.len() as i64 - 48_000).abs() <= 2, "{}", out.len());
        // The same tone: zero crossings per second stay about 880.
        let crossings = out.windows(2).filter(|w| (w[0] < 0.0) != (w[1] < 0.0)).count();
        assert!((860..=900).contains(&crossings), "{crossings}");
    }
}
