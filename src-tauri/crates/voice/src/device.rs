//! Microphones through cpal: listing them and recording from one at its own native rate,
//! channel count and sample format (conversion happens later, in `audio`). The stream lives
//! on its own thread, since cpal streams may not move between threads on every platform.

use std::sync::mpsc;
use std::thread::JoinHandle;

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, SampleFormat, SizedSample};
use serde::Serialize;

use perch_foundation::probe::Probe;

use super::VoiceError;

/// A microphone as Settings lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct InputDevice {
    pub name: String,
    pub is_default: bool,
    /// Its native format, when it would say.
    pub sample_rate: Option<u32>,
    pub channels: Option<u16>,
}

/// ALSA's `null` device, which every Linux lists: it "records" silence, so it is no microphone.
fn is_null(name: &str) -> bool {
    name == "null" || name.starts_with("Discard all samples")
}

/// Every microphone this machine offers (never ALSA's `null` device).
pub fn list_devices() -> Result<Vec<InputDevice>, VoiceError> {
    let host = cpal::default_host();
    let default_name = host.default_input_device().map(|d| d.to_string());
    let devices = host.input_devices().map_err(|e| map_error(e, "the audio system"))?;
    Ok(devices
        .filter(|d| !is_null(&d.to_string()))
        .map(|d| {
            let config = d.default_input_config().ok();
            let name = d.to_string();
            InputDevice {
                is_default: default_name.as_deref() == Some(name.as_str()),
                sample_rate: config.as_ref().map(|c| c.sample_rate()),
                channels: config.as_ref().map(|c| c.channels()),
                name,
            }
        })
        .collect())
}

/// What the recording thread sends.
#[derive(Debug)]
pub enum CaptureEvent {
    /// Interleaved frames at the device's rate, as `f32`.
    Samples(Vec<f32>),
    /// The stream broke (the device went away, or the system took it).
    Failed(VoiceError),
}

/// The format a recording runs at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureFormat {
    pub device: String,
    pub sample_rate: u32,
    pub channels: u16,
}

/// A running recording; dropping it stops the stream.
pub struct Capture {
    pub format: CaptureFormat,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture").field("format", &self.format).finish()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts recording from `device` (by name; `None` is the system default), sending audio to
/// `events` as it arrives.
pub fn start(device: Option<&str>, events: mpsc::Sender<CaptureEvent>) -> Result<Capture, VoiceError> {
    let wanted = device.map(str::to_owned);
    let (ready_tx, ready_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("perch-microphone".into())
        .spawn(move || match open(wanted.as_deref(), events) {
            Ok((stream, format)) => {
                let _ = ready_tx.send(Ok(format));
                // Recording until the Capture is dropped (the sender closes).
                let _ = stop_rx.recv();
                drop(stream);
            }
            Err(e) => {
                let _ = ready_tx.send(Err(e));
            }
        })
        .map_err(|e| VoiceError::io("starting", "the recording thread", e))?;
    let format = ready_rx.recv().map_err(|_| VoiceError::DeviceFailed {
        device: "microphone".into(),
        message: "the recording thread stopped".into(),
    })??;
    tracing::info!(device = %format.device, rate = format.sample_rate, channels = format.channels, "recording");
    Ok(Capture { format, stop: Some(stop_tx), thread: Some(thread) })
}

fn open(
    wanted: Option<&str>,
    events: mpsc::Sender<CaptureEvent>,
) -> Result<(cpal::Stream, CaptureFormat), VoiceError> {
    let host = cpal::default_host();
    let no_microphone = || VoiceError::NoMicrophone {
        detail: format!("the {} audio system has no input device", host.id().name()),
    };
    let device = match wanted {
        // With nothing but `null` to record from, the default device opens and then fails
        // ("stopped working"): there is no microphone, and that is what to say.
        None if list_devices()?.is_empty() => return Err(no_microphone()),
        None => host.default_input_device().ok_or_else(no_microphone)?,
        Some(name) => host
            .input_devices()
            .map_err(|e| map_error(e, name))?
            .find(|d| d.to_string() == name)
            .ok_or_else(|| VoiceError::DeviceNotFound { name: name.to_owned() })?,
    };
    let name = device.to_string();
    let chosen = wanted.is_some();
    let unopened = |e: VoiceError| not_opened(chosen, &name, e);
    let config = device.default_input_config().map_err(|e| unopened(map_error(e, &name)))?;
    let format = CaptureFormat {
        device: name.clone(),
        sample_rate: config.sample_rate(),
        channels: config.channels(),
    };
    let stream_config = config.config();
    let stream = match config.sample_format() {
        SampleFormat::F32 => build::<f32>(&device, &stream_config, events, &name, chosen),
        SampleFormat::F64 => build::<f64>(&device, &stream_config, events, &name, chosen),
        SampleFormat::I8 => build::<i8>(&device, &stream_config, events, &name, chosen),
        SampleFormat::I16 => build::<i16>(&device, &stream_config, events, &name, chosen),
        SampleFormat::I32 => build::<i32>(&device, &stream_config, events, &name, chosen),
        SampleFormat::U8 => build::<u8>(&device, &stream_config, events, &name, chosen),
        SampleFormat::U16 => build::<u16>(&device, &stream_config, events, &name, chosen),
        SampleFormat::U32 => build::<u32>(&device, &stream_config, events, &name, chosen),
        other => Err(VoiceError::DeviceFailed {
            device: name.clone(),
            message: format!("its sample format {other} is not supported"),
        }),
    }
    .map_err(unopened)?;
    stream.play().map_err(|e| unopened(map_error(e, &name)))?;
    Ok((stream, format))
}

/// A device that failed before it delivered any sound never worked, so "stopped working (it was
/// unplugged)" would mislead. The system's default input failing so (a sound server's ALSA
/// device with no server or no source behind it, as on a machine without a microphone) means
/// there is no microphone to record from; one the user chose could not be opened.
fn not_opened(chosen: bool, name: &str, e: VoiceError) -> VoiceError {
    let reason = match e {
        VoiceError::DeviceLost { .. } => "it is not available".to_owned(),
        VoiceError::DeviceFailed { message, .. } => message,
        other => return other,
    };
    if chosen {
        VoiceError::DeviceFailed {
            device: name.to_owned(),
            message: format!("it could not be opened ({reason})"),
        }
    } else {
        VoiceError::NoMicrophone {
            detail: format!("the system's default input \"{name}\" could not be opened: {reason}"),
        }
    }
}

fn build<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    events: mpsc::Sender<CaptureEvent>,
    name: &str,
    chosen: bool,
) -> Result<cpal::Stream, VoiceError>
where
    T: SizedSample + Send + 'static,
    f32: FromSample<T>,
{
    let errors = events.clone();
    let device_name = name.to_owned();
    let heard = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let heard_before_failing = heard.clone();
    device
        .build_input_stream::<T, _, _>(
            *config,
            move |data: &[T], _| {
                heard.store(true, std::sync::atomic::Ordering::Relaxed);
                let samples = data.iter().map(|s| finite(f32::from_sample_(*s))).collect();
                let _ = events.send(CaptureEvent::Samples(samples));
            },
            move |e| {
                // Over- and underruns lose a few milliseconds; only a broken stream is an error.
                if !matches!(
                    e.kind(),
                    cpal::ErrorKind::Xrun | cpal::ErrorKind::DeviceChanged | cpal::ErrorKind::RealtimeDenied
                ) {
                    let error = map_error(e, &device_name);
                    let error = if heard_before_failing.load(std::sync::atomic::Ordering::Relaxed) {
                        error
                    } else {
                        not_opened(chosen, &device_name, error)
                    };
                    let _ = errors.send(CaptureEvent::Failed(error));
                }
            },
            None,
        )
        .map_err(|e| map_error(e, name))
}

/// Plays a WAV file into a dictation as if a microphone heard it: its own rate and channels,
/// in 20 ms blocks, paced like real time when `realtime` (else as fast as it can be read).
/// Silence follows the file until the recording stops, as a quiet room would.
pub fn start_wav(
    path: &std::path::Path,
    realtime: bool,
    events: mpsc::Sender<CaptureEvent>,
) -> Result<Capture, VoiceError> {
    let mut reader = hound::WavReader::open(path)
        .map_err(|e| VoiceError::UnsupportedAudio { path: path.to_path_buf(), message: e.to_string() })?;
    let spec = reader.spec();
    let scale = match spec.sample_format {
        hound::SampleFormat::Float => 1.0,
        hound::SampleFormat::Int => 1.0 / (1u64 << (spec.bits_per_sample - 1)) as f32,
    };
    let samples: Vec<f32> = match spec.sample_format {
        hound::SampleFormat::Float => reader.samples::<f32>().filter_map(Result::ok).map(finite).collect(),
        hound::SampleFormat::Int => {
            reader.samples::<i32>().filter_map(Result::ok).map(|s| s as f32 * scale).collect()
        }
    };
    let format = CaptureFormat {
        device: format!("file {}", path.display()),
        sample_rate: spec.sample_rate,
        channels: spec.channels,
    };
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let block = (spec.sample_rate as usize / 50).max(1) * usize::from(spec.channels);
    let thread = std::thread::Builder::new()
        .name("perch-wav-source".into())
        .spawn(move || {
            let started = std::time::Instant::now();
            let silence = vec![0.0f32; block];
            for n in 0.. {
                let chunk =
                    samples.get(n * block..((n + 1) * block).min(samples.len())).filter(|c| !c.is_empty());
                let chunk = chunk.unwrap_or(&silence).to_vec();
                if events.send(CaptureEvent::Samples(chunk)).is_err() {
                    return;
                }
                let due = started + std::time::Duration::from_millis(20 * (n as u64 + 1));
                let wait = if realtime {
                    due.saturating_duration_since(std::time::Instant::now())
                } else {
                    Default::default()
                };
                match stop_rx.recv_timeout(wait) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
            }
        })
        .map_err(|e| VoiceError::io("starting", "the recording thread", e))?;
    Ok(Capture { format, stop: Some(stop_tx), thread: Some(thread) })
}

/// A broken driver or file can deliver NaN or huge values; they become silence or full scale
/// instead of poisoning the resampler.
fn finite(sample: f32) -> f32 {
    if sample.is_finite() { sample.clamp(-1.0, 1.0) } else { 0.0 }
}

/// cpal's errors as ones a user can act on.
fn map_error(e: cpal::Error, device: &str) -> VoiceError {
    let device = device.to_owned();
    match e.kind() {
        cpal::ErrorKind::PermissionDenied => VoiceError::PermissionDenied { device },
        cpal::ErrorKind::DeviceNotAvailable | cpal::ErrorKind::StreamInvalidated => {
            VoiceError::DeviceLost { device }
        }
        cpal::ErrorKind::HostUnavailable => VoiceError::NoMicrophone { detail: e.to_string() },
        _ => VoiceError::DeviceFailed { device, message: e.to_string() },
    }
}

/// Whether a microphone can be opened. Blocking (audio back ends are synchronous).
pub fn probe() -> Probe {
    let host = cpal::default_host();
    let Some(device) = host.default_input_device() else {
        return Probe::no("audio input", format!("no input device ({} audio)", host.id().name()));
    };
    let name = device.to_string();
    if cfg!(target_os = "linux") && !linux_has_capture_hardware() {
        return Probe::no(
            "audio input",
            format!(
                "no sound card and no PulseAudio/PipeWire server; the ALSA device \"{name}\" has nothing behind it"
            ),
        );
    }
    match device.default_input_config() {
        Ok(config) => Probe::yes(
            "audio input",
            format!("{name}: {} Hz, {} channel(s)", config.sample_rate(), config.channels()),
        ),
        Err(e) => Probe::no("audio input", format!("{name} cannot record: {e}")),
    }
}

/// ALSA always offers a "default" device; it only records if a card or a sound server exists.
fn linux_has_capture_hardware() -> bool {
    let cards = std::fs::read_to_string("/proc/asound/cards").unwrap_or_default();
    let has_card = !cards.trim().is_empty() && !cards.contains("no soundcards");
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from).unwrap_or_default();
    let has_server = ["pulse/native", "pipewire-0"].iter().any(|s| runtime.join(s).exists());
    has_card || has_server
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_input_that_never_opened_is_no_microphone_and_a_chosen_one_could_not_be_opened() {
        let failed = || VoiceError::DeviceFailed {
            device: "Default Audio Device".into(),
            message: "ALSA function 'snd_pcm_open' failed with error 'Host is down (112)'".into(),
        };
        let default = not_opened(false, "Default Audio Device", failed());
        assert!(matches!(default, VoiceError::NoMicrophone { .. }), "{default:?}");
        let said = default.to_string();
        assert!(
            said.starts_with("No microphone found (the system's default input \"Default Audio Device\""),
            "{said}"
        );
        assert!(said.contains("Host is down") && !said.contains("stopped working"), "{said}");

        let lost = not_opened(false, "Default Audio Device", VoiceError::DeviceLost { device: "x".into() });
        assert!(lost.to_string().contains("could not be opened: it is not available"), "{lost}");
        assert!(!lost.to_string().contains("unplugged"), "{lost}");

        let chosen = not_opened(true, "USB Mic", VoiceError::DeviceLost { device: "USB Mic".into() });
        assert_eq!(
            chosen.to_string(),
            "The microphone \"USB Mic\" could not record: it could not be opened (it is not available)"
        );
        // Refusals keep their own words.
        let denied = not_opened(false, "Mic", VoiceError::PermissionDenied { device: "Mic".into() });
        assert!(matches!(denied, VoiceError::PermissionDenied { .. }));
    }
}
