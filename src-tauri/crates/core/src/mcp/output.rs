//! A tool's result as Perch keeps it: text for the model and the card, images to show (and
//! to pass to vision models), and whether the tool said it failed.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
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
const MAX_STRUCTURED: usize = 64 * 1024;
/// The largest structured result read from a server, serialised: a tool's app may be given this
/// much (saved apart from the card, `Store::set_app_result`).
const MAX_APP_STRUCTURED: usize = 4 * 1024 * 1024;

impl ToolOutput {
    pub fn error(text: impl Into<String>) -> Self {
        Self { text: text.into(), is_error: true, ..Self::default() }
    }

    pub fn from_result(result: CallToolResult) -> Self {
        let mut out = Self { is_error: result.is_error == Some(true), ..Self::default() };
        let mut parts: Vec<String> = Vec::new();
        for block in result.content {
            match block {
                ContentBlock::Text(t) => parts.push(t.text),
                ContentBlock::Image(i) => out.images.push(ToolImage { mime: i.mime_type, base64: i.data }),
                ContentBlock::Audio(a) => parts.push(format!("[audio: {}, not shown]", a.mime_type)),
                ContentBlock::Resource(r) => match r.resource {
                    ResourceContents::TextResourceContents { uri, text, .. } => {
                        parts.push(format!("[resource {uri}]\n{text}"));
                    }
                    ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
                        let mime = mime_type.unwrap_or_default();
                        if mime.starts_with("image/") {
                            out.images.push(ToolImage { mime, base64: blob });
                        } else {
                            parts.push(format!(
                                "[resource {uri}: {mime}, {} bytes of binary data]",
                                blob.len() / 4 * 3
                            ));
                        }
                    }
                    _ => parts.push("[a resource of a kind Perch does not know]".into()),
                },
                ContentBlock::ResourceLink(r) => {
                    parts.push(format!("[link to resource {} ({})]", r.uri, r.name))
                }
                _ => parts.push("[content of a kind Perch does not know]".into()),
            }
        }
        // Structured output repeats the text by convention; use it only when there is no text.
        if let Some(value) = result.structured_content {
            let serialised = value.to_string();
            if parts.is_empty() {
                parts.push(serialised.clone());
            }
            if serialised.len() <= MAX_APP_STRUCTURED {
                out.structured = Some(value);
            }
        }
        if parts.is_empty() && !out.images.is_empty() {
            parts.push(format!("[{} image(s), shown to the user]", out.images.len()));
        }
        out.text = parts.join("\n");
        out
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

    #[test]
    fn images_and_text_are_kept_apart() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("a chart"),
            ContentBlock::image("aGVsbG8=", "image/png"),
        ]);
        let out = ToolOutput::from_result(result);
        assert_eq!(out.text, "a chart");
        assert_eq!(out.images, [ToolImage { mime: "image/png".into(), base64: "aGVsbG8=".into() }]);
        assert!(!out.is_error);
        let failed = ToolOutput::from_result(CallToolResult::error(vec![ContentBlock::text("nope")]));
        assert!(failed.is_error);
    }

    #[test]
    fn structured_results_are_kept_for_the_card_unless_large() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("1 message")]);
        result.structured_content = Some(serde_json::json!({ "messages": [{ "from": "Ada" }] }));
        let out = ToolOutput::from_result(result);
        assert_eq!(out.text, "1 message", "the model reads the text");
        assert_eq!(out.structured.unwrap()["messages"][0]["from"], "Ada");
        // A larger one is read, for an app, but not kept with the card.
        let mut large = CallToolResult::success(vec![ContentBlock::text("big")]);
        large.structured_content = Some(serde_json::json!({ "body": "x".repeat(MAX_STRUCTURED) }));
        let mut read = ToolOutput::from_result(large);
        assert!(read.structured.is_some());
        read.keep(100);
        assert_eq!((read.text.as_str(), read.structured), ("big", None));
        let mut huge = CallToolResult::success(vec![ContentBlock::text("huge")]);
        huge.structured_content = Some(serde_json::json!({ "body": "x".repeat(MAX_APP_STRUCTURED) }));
        assert_eq!(ToolOutput::from_result(huge).structured, None);
    }
}
