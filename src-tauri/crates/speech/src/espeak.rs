//! espeak-ng, opened at run time: the phonemes Piper voices are trained on (IPA, clause by
//! clause, as Piper's own phonemizer makes them), and espeak-ng's own voice, the fallback that
//! always works. The library keeps global state and is not thread-safe, so every call holds one
//! lock.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_int, c_short, c_uint, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use super::SpeechError;

/// espeak-ng's output rate for its own voice.
pub const SAMPLE_RATE: u32 = 22_050;

const SONAME: &str = "libespeak-ng.so.1";
/// `AUDIO_OUTPUT_SYNCHRONOUS`: `espeak_Synth` returns when the sound is made, through the callback.
const AUDIO_OUTPUT_SYNCHRONOUS: c_int = 2;
/// `espeakINITIALIZE_DONT_EXIT`: report a missing data folder instead of exiting the process.
const INITIALIZE_DONT_EXIT: c_int = 0x8000;
const CHARS_UTF8: c_int = 1;
/// `espeakPHONEMES_IPA`.
const PHONEMES_IPA: c_int = 0x02;
const POS_CHARACTER: c_int = 1;
/// `espeakRATE`, in words per minute.
const PARAMETER_RATE: c_int = 1;
const EE_OK: c_int = 0;

type Initialize = unsafe extern "C" fn(c_int, c_int, *const c_char, c_int) -> c_int;
type SetVoiceByName = unsafe extern "C" fn(*const c_char) -> c_int;
type TextToPhonemes = unsafe extern "C" fn(*mut *const c_void, c_int, c_int) -> *const c_char;
type SynthCallback = unsafe extern "C" fn(*mut c_short, c_int, *mut c_void) -> c_int;
type SetSynthCallback = unsafe extern "C" fn(SynthCallback);
type SetParameter = unsafe extern "C" fn(c_int, c_int, c_int) -> c_int;
type Synth = unsafe extern "C" fn(
    *const c_void,
    usize,
    c_uint,
    c_int,
    c_uint,
    c_uint,
    *mut c_uint,
    *mut c_void,
) -> c_int;

struct Library {
    _library: libloading::Library,
    set_voice: SetVoiceByName,
    text_to_phonemes: TextToPhonemes,
    set_parameter: SetParameter,
    synth: Synth,
    /// The voice last set, so a sentence of the same voice does not reload it.
    voice: Option<String>,
}

// SAFETY: the function pointers are plain C functions of a library that stays loaded; every use
// goes through the one Mutex below.
unsafe impl Send for Library {}

static LIBRARY: OnceLock<Result<Mutex<Library>, String>> = OnceLock::new();
/// Samples the synthesis callback receives (espeak-ng calls it on the synthesising thread, inside
/// `espeak_Synth`, while the library's lock is held).
static SYNTH_OUT: Mutex<Vec<f32>> = Mutex::new(Vec::new());
/// Set to stop a synthesis in progress (the callback tells espeak-ng to abort).
static STOP: AtomicBool = AtomicBool::new(false);

fn open() -> Result<Mutex<Library>, String> {
    // SAFETY: loading espeak-ng runs no code beyond its initialisers; the symbols are looked up
    // with the signatures of speak_lib.h (espeak-ng 1.49 and later).
    unsafe {
        let library = libloading::Library::new(SONAME).map_err(|e| e.to_string())?;
        let initialize: Initialize = *library.get(b"espeak_Initialize\0").map_err(|e| e.to_string())?;
        let set_callback: SetSynthCallback =
            *library.get(b"espeak_SetSynthCallback\0").map_err(|e| e.to_string())?;
        let set_voice: SetVoiceByName =
            *library.get(b"espeak_SetVoiceByName\0").map_err(|e| e.to_string())?;
        let text_to_phonemes: TextToPhonemes =
            *library.get(b"espeak_TextToPhonemes\0").map_err(|e| e.to_string())?;
        let set_parameter: SetParameter =
            *library.get(b"espeak_SetParameter\0").map_err(|e| e.to_string())?;
        let synth: Synth = *library.get(b"espeak_Synth\0").map_err(|e| e.to_string())?;
        let rate = initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, std::ptr::null(), INITIALIZE_DONT_EXIT);
        if rate <= 0 {
            return Err("its voice data could not be read (is the espeak-ng-data package installed?)".into());
        }
        set_callback(collect_samples);
        Ok(Mutex::new(Library {
            _library: library,
            set_voice,
            text_to_phonemes,
            set_parameter,
            synth,
            voice: None,
        }))
    }
}

unsafe extern "C" fn collect_samples(wav: *mut c_short, count: c_int, _events: *mut c_void) -> c_int {
    if !wav.is_null() && count > 0 {
        // SAFETY: espeak-ng hands `count` samples at `wav`, valid for this call.
        let samples = unsafe { std::slice::from_raw_parts(wav, count as usize) };
        let mut out = SYNTH_OUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        out.extend(samples.iter().map(|s| f32::from(*s) / 32_768.0));
    }
    // 1 aborts the synthesis.
    c_int::from(STOP.load(Ordering::Relaxed))
}

fn library() -> Result<MutexGuard<'static, Library>, SpeechError> {
    match LIBRARY.get_or_init(open) {
        Ok(library) => Ok(library.lock().unwrap_or_else(std::sync::PoisonError::into_inner)),
        Err(message) => Err(SpeechError::EspeakMissing { message: message.clone() }),
    }
}

/// Whether espeak-ng can be used here (for `perch doctor` and Settings).
pub fn available() -> Result<(), SpeechError> {
    library().map(drop)
}

impl Library {
    fn use_voice(&mut self, voice: &str) -> Result<(), SpeechError> {
        if self.voice.as_deref() == Some(voice) {
            return Ok(());
        }
        let name =
            CString::new(voice).map_err(|_| SpeechError::UnknownEspeakVoice { voice: voice.into() })?;
        // SAFETY: a NUL-terminated name; the library lock is held.
        let status = unsafe { (self.set_voice)(name.as_ptr()) };
        if status != EE_OK {
            self.voice = None;
            return Err(SpeechError::UnknownEspeakVoice { voice: voice.into() });
        }
        self.voice = Some(voice.to_owned());
        Ok(())
    }
}

/// The IPA phonemes of `text` in `voice`'s language, as Piper voices expect them: each clause's
/// phonemes followed by the punctuation that ended it, clauses joined by a space.
pub fn phonemes(voice: &str, text: &str) -> Result<String, SpeechError> {
    let mut library = library()?;
    library.use_voice(voice)?;
    let mut out = String::new();
    for (clause, end) in clauses(text) {
        let Ok(clause_c) = CString::new(clause.replace('\0', " ")) else { continue };
        let mut pointer = clause_c.as_ptr().cast::<c_void>();
        let mut clause_phonemes = String::new();
        // espeak-ng reads one clause per call and moves the pointer on; NULL at the end.
        while !pointer.is_null() {
            // SAFETY: `pointer` points into `clause_c`, alive for the loop; the returned text is
            // espeak-ng's buffer, copied out before the next call.
            let result = unsafe { (library.text_to_phonemes)(&mut pointer, CHARS_UTF8, PHONEMES_IPA) };
            if result.is_null() {
                break;
            }
            // SAFETY: a NUL-terminated string owned by espeak-ng, valid until the next call.
            let piece = unsafe { CStr::from_ptr(result) }.to_string_lossy();
            if !clause_phonemes.is_empty() && !piece.is_empty() {
                clause_phonemes.push(' ');
            }
            clause_phonemes.push_str(piece.trim());
        }
        // Words of another language are marked "(en)...(de)"; the marks are no phonemes.
        let clause_phonemes = strip_language_marks(&clause_phonemes);
        if clause_phonemes.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&clause_phonemes);
        if let Some(end) = end {
            out.push(end);
        }
    }
    Ok(out)
}

fn strip_language_marks(phonemes: &str) -> String {
    let mut out = String::with_capacity(phonemes.len());
    let mut depth = 0;
    for c in phonemes.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// A sentence's clauses and the punctuation ending each (kept for the voice's pauses and tone).
fn clauses(text: &str) -> Vec<(&str, Option<char>)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let punctuation = matches!(c, ',' | ';' | ':' | '.' | '!' | '?');
        let at_break = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if punctuation && at_break {
            out.push((&text[start..i], Some(c)));
            start = i + c.len_utf8();
        }
    }
    if !text[start..].trim().is_empty() {
        out.push((&text[start..], None));
    }
    out.retain(|(clause, _)| !clause.trim().is_empty());
    out
}

/// Speaks `text` in espeak-ng's own voice: mono samples at [`SAMPLE_RATE`]. `words_per_minute`
/// is espeak-ng's rate (175 is its normal speed).
pub fn synthesize(voice: &str, text: &str, words_per_minute: u32) -> Result<Vec<f32>, SpeechError> {
    let mut library = library()?;
    library.use_voice(voice)?;
    let text_c = CString::new(text.replace('\0', " ")).map_err(|_| SpeechError::Synthesis {
        message: "the text could not be passed to espeak-ng".into(),
    })?;
    STOP.store(false, Ordering::Relaxed);
    SYNTH_OUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
    // SAFETY: the lock is held; the text is NUL-terminated and its size counts the NUL, as
    // espeak_Synth wants.
    let status = unsafe {
        (library.set_parameter)(PARAMETER_RATE, words_per_minute.clamp(80, 450) as c_int, 0);
        (library.synth)(
            text_c.as_ptr().cast(),
            text_c.as_bytes_with_nul().len(),
            0,
            POS_CHARACTER,
            0,
            CHARS_UTF8 as c_uint,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    let samples = std::mem::take(&mut *SYNTH_OUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    if status != EE_OK {
        return Err(SpeechError::Synthesis { message: format!("espeak-ng failed (error {status})") });
    }
    Ok(samples)
}

/// Stops a synthesis in progress on another thread (its samples so far are returned).
pub fn stop() {
    STOP.store(true, Ordering::Relaxed);
}

/// espeak-ng's voice for a language tag ("de", "pt-BR", "zh-CN"): its names are lowercase, with
/// a few of its own ("cmn" for Mandarin, "pt-br").
pub fn voice_for_language(language: &str) -> String {
    let lower = language.to_lowercase().replace('_', "-");
    match lower.as_str() {
        "" | "en" => "en-us".into(),
        "zh" | "zh-cn" | "zh-hans" => "cmn".into(),
        "pt" | "pt-br" => "pt-br".into(),
        "ja" => "ja".into(),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_keep_their_punctuation() {
        assert_eq!(
            clauses("Well, it is 3.5 now; fine. Yes"),
            [("Well", Some(',')), (" it is 3.5 now", Some(';')), (" fine", Some('.')), (" Yes", None)]
        );
    }

    #[test]
    fn language_marks_are_dropped() {
        assert_eq!(strip_language_marks("hˈaləʊ (en)wˈɜːld(de) ja"), "hˈaləʊ wˈɜːld ja");
    }
}
