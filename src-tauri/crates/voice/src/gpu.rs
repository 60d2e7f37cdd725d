//! Whether a whisper model runs on the graphics card.
//!
//! whisper.cpp (built with ggml's Vulkan backend) takes the first card ggml's device registry
//! lists; this asks the same registry, so what it reports is what whisper.cpp will use. Only the
//! registry is asked, never the Vulkan backend's own functions: the registry catches the backend's
//! start-up failures (no loader, a broken driver), the backend's functions throw them.

use std::ffi::CStr;

use whisper_rs_sys as sys;

/// A graphics card as ggml lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    pub description: String,
    pub free: u64,
    pub total: u64,
}

/// The card whisper.cpp would use, or why there is none.
#[allow(unsafe_code)]
pub fn card() -> Result<Card, String> {
    // SAFETY: the registry's functions take no pointers but the devices it hands out, which
    // live as long as the process; the strings they return are NUL-terminated and owned by ggml.
    unsafe {
        for i in 0..sys::ggml_backend_dev_count() {
            let dev = sys::ggml_backend_dev_get(i);
            let kind = sys::ggml_backend_dev_type(dev);
            if kind != sys::ggml_backend_dev_type_GGML_BACKEND_DEVICE_TYPE_GPU
                && kind != sys::ggml_backend_dev_type_GGML_BACKEND_DEVICE_TYPE_IGPU
            {
                continue;
            }
            let (mut free, mut total) = (0usize, 0usize);
            sys::ggml_backend_dev_memory(dev, &mut free, &mut total);
            let description = sys::ggml_backend_dev_description(dev);
            let description = if description.is_null() {
                String::new()
            } else {
                CStr::from_ptr(description).to_string_lossy().into_owned()
            };
            return Ok(Card { description, free: free as u64, total: total as u64 });
        }
    }
    Err(match perch_gpu::loader::unavailable() {
        Some(why) => why.to_owned(),
        None => "no Vulkan graphics card was found".to_owned(),
    })
}

/// The one way to make the card fail whisper on purpose, for the fallback's tests (a real card's
/// failure cannot be caused from outside): `PERCH_VOICE_FAIL_GPU=load` fails every load on the
/// card, `PERCH_VOICE_FAIL_GPU=pass` every transcription there. Unset in the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectedFailure {
    Load,
    Pass,
}

impl InjectedFailure {
    pub fn from_env() -> Option<Self> {
        match std::env::var("PERCH_VOICE_FAIL_GPU").ok().as_deref() {
            Some("load") => Some(Self::Load),
            Some("pass") => Some(Self::Pass),
            _ => None,
        }
    }
}

/// What a whisper model of `model_bytes` needs on the card: its weights, and the encoder's and
/// decoder's buffers (measured at 1.3x the file for tiny and base, 1.2x for small).
pub fn need(model_bytes: u64) -> u64 {
    model_bytes + model_bytes / 2 + (64 << 20)
}

/// Where a model goes: the card's description, or the CPU and why.
pub fn choose(model_bytes: u64, wanted: bool, card: Result<Card, String>) -> Result<Card, String> {
    if !wanted {
        return Err("the graphics card is turned off for dictation in Settings -> Voice".to_owned());
    }
    let card = card?;
    let need = need(model_bytes);
    let kept = perch_gpu::fit::headroom(card.total);
    if card.free < need + kept {
        return Err(format!(
            "{} has {} MiB free and the model needs {} MiB",
            card.description,
            card.free >> 20,
            need >> 20
        ));
    }
    Ok(card)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arc(free_mib: u64) -> Result<Card, String> {
        Ok(Card {
            description: "Intel(R) Arc(tm) A380 Graphics (DG2)".into(),
            free: free_mib << 20,
            total: 6 << 30,
        })
    }

    #[test]
    fn a_model_goes_to_the_card_when_it_fits() {
        let tiny = 77_691_713;
        assert!(choose(tiny, true, arc(4000)).is_ok());
        let why = choose(tiny, true, arc(300)).unwrap_err();
        assert!(why.contains("300 MiB free") && why.contains("needs 175 MiB"), "{why}");
        assert!(choose(tiny, false, arc(4000)).unwrap_err().contains("turned off"));
        let none = choose(tiny, true, Err("no Vulkan graphics card was found".into()));
        assert_eq!(none.unwrap_err(), "no Vulkan graphics card was found");
    }
}
