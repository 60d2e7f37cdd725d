//! A tool's result as Perch keeps it: text for the model and the card, images to show (and
//! to pass to vision models), and whether the tool said it failed.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ToolImage {
    pub mime: String,
    pub base64: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ToolOutput {
    pub text: String,
    pub images: Vec<ToolImage>,
    pub is_error: bool,
    /// Characters cut from the text for the model (the card says so).
    pub truncated_chars: u32,
    /// The tool's structured result, for a card that shows it as a summary (mail, events) and
    /// for the tool's app; the model reads the text. What is kept ([`ToolOutput::keep`]) leaves
    /// it out when it is larger than [`MAX_STRUCTURED`]; a fresh result holds up to
    /// [`MAX_APP_STRUCTURED`], for an app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
}

/// The largest structured result kept for a card, serialised; a larger one is the text alone.
pub const MAX_STRUCTURED: usize = 64 * 1024;
/// The largest structured result read from a server, serialised: a tool's app may be given this
/// much (saved apart from the card, `Store::set_app_result`).
pub const MAX_APP_STRUCTURED: usize = 4 * 1024 * 1024;

impl ToolOutput {
    pub fn error(text: impl Into<String>) -> Self {
        Self { text: text.into(), is_error: true, ..Self::default() }
    }

    /// What is kept of a result (saved with its card, read by the model): the text cut to
    /// `max_chars`, and the structured part only when a card would show it.
    pub fn keep(&mut self, max_chars: usize) {
        self.truncate(max_chars);
        if self.structured.as_ref().is_some_and(|s| s.to_string().len() > MAX_STRUCTURED) {
            self.structured = None;
        }
    }

    /// Cuts the text to `max_chars`, with a note that tells the model what was left out.
    pub fn truncate(&mut self, max_chars: usize) {
        let total = self.text.chars().count();
        if total <= max_chars {
            return;
        }
        let cut = total - max_chars;
        let end = self.text.char_indices().nth(max_chars).map_or(self.text.len(), |(i, _)| i);
        self.text.truncate(end);
        self.text.push_str(&format!(
            "\n\n[Perch cut this result: {cut} more characters of {total} were left out. \
             If the tool can return a part (a start, an offset, a page), ask for the part you need.]"
        ));
        self.truncated_chars = u32::try_from(cut).unwrap_or(u32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_are_cut_with_a_note_on_a_character_boundary() {
        let mut out = ToolOutput { text: "é".repeat(100), ..ToolOutput::default() };
        out.truncate(10);
        assert!(out.text.starts_with(&"é".repeat(10)));
        assert!(out.text.contains("90 more characters of 100"), "{}", out.text);
        assert_eq!(out.truncated_chars, 90);
        let mut short = ToolOutput { text: "ok".into(), ..ToolOutput::default() };
        short.truncate(10);
        assert_eq!(short.text, "ok");
    }
}
