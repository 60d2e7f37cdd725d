//! Answers read aloud: a turn's text goes to the speaker sentence by sentence as it streams (when
//! Settings -> Voice -> "Read answers aloud" is on), and any saved answer can be spoken again
//! (its Speak action, `perch say`). The voice is chosen for the UI's language.

use std::sync::{Arc, Mutex};

use crate::agent::{TurnEvent, TurnSink};
use crate::speech::{Phrases, Sentences, Speech, SpeechSettings};

/// The language the voice speaks: the UI's, else the system's, else English.
pub fn language(ui_language: Option<&str>) -> String {
    ui_language
        .map(str::to_owned)
        .or_else(|| {
            std::env::var("LANG").ok().and_then(|l| l.split(['.', '@']).next().map(|l| l.replace('_', "-")))
        })
        .filter(|l| !l.is_empty() && l != "C" && l != "POSIX")
        .unwrap_or_else(|| "en".to_owned())
}

/// Passes a turn's events on, and speaks its answer as it is written.
pub struct ReadAloud<'a> {
    inner: &'a dyn TurnSink,
    speech: Arc<Speech>,
    settings: SpeechSettings,
    language: String,
    state: Mutex<Option<(String, Sentences)>>,
    phrases: Phrases,
}

impl<'a> ReadAloud<'a> {
    pub fn new(
        inner: &'a dyn TurnSink,
        speech: Arc<Speech>,
        settings: SpeechSettings,
        language: String,
    ) -> Self {
        Self { inner, speech, settings, language, state: Mutex::new(None), phrases: Phrases::default() }
    }

    /// The phrases said for code and tables, in the UI's language.
    pub fn with_phrases(mut self, phrases: Phrases) -> Self {
        self.phrases = phrases;
        self
    }

    /// The answer's last sentences, and its end.
    fn end(&self, answer: Option<(String, Sentences)>) {
        let Some((id, sentences)) = answer else { return };
        let speaker = self.speech.speaker();
        for sentence in sentences.finish() {
            speaker.sentence(&id, &sentence);
        }
        speaker.end(&id);
    }
}

impl TurnSink for ReadAloud<'_> {
    fn send(&self, event: TurnEvent) {
        let speaker = self.speech.speaker();
        {
            let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match &event {
                TurnEvent::Started(started) => {
                    let id = started.assistant_message.id.to_string();
                    speaker.begin(&id, &self.settings, &self.language);
                    *state = Some((id, Sentences::new(self.phrases.clone())));
                }
                TurnEvent::Text(delta) => {
                    if let Some((id, sentences)) = state.as_mut() {
                        for sentence in sentences.push(delta) {
                            speaker.sentence(id, &sentence);
                        }
                    }
                }
                TurnEvent::Finished(_) => self.end(state.take()),
                _ => {}
            }
        }
        self.inner.send(event);
    }
}

impl Drop for ReadAloud<'_> {
    /// A turn that ended without `Finished` (its task cancelled or panicked) still ends its
    /// answer, so the speaker finishes it and does not wait for sentences that will never come.
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        self.end(state);
    }
}

/// Speaks a saved answer from its start (stopping whatever was being said).
pub fn speak_text(
    speech: &Speech,
    id: &str,
    text: &str,
    settings: &SpeechSettings,
    language: &str,
    phrases: Phrases,
) {
    let speaker = speech.speaker();
    speaker.begin(id, settings, language);
    for sentence in Sentences::all(text, phrases) {
        speaker.sentence(id, &sentence);
    }
    speaker.end(id);
}
