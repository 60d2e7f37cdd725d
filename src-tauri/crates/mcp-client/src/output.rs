//! A tool's result as an MCP server sends it, read into what Perch keeps ([`ToolOutput`]), and
//! what Perch kept given back in that shape (to an app in a tool card).

use perch_tools::output::MAX_APP_STRUCTURED;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

pub use perch_tools::{ToolImage, ToolOutput};

/// A kept result as MCP's `CallToolResult` (the text, the images, the structured part).
pub fn to_result_json(output: &ToolOutput) -> serde_json::Value {
    let mut content = vec![serde_json::json!({ "type": "text", "text": output.text })];
    content.extend(
        output
            .images
            .iter()
            .map(|i| serde_json::json!({ "type": "image", "data": i.base64, "mimeType": i.mime })),
    );
    let mut v = serde_json::json!({ "content": content, "isError": output.is_error });
    if let Some(s) = &output.structured {
        v["structuredContent"] = s.clone();
    }
    v
}

/// A server's result: its text blocks joined, images kept apart (and image resources with
/// them), anything else named in a line, and its structured part kept for an app.
pub fn from_result(result: CallToolResult) -> ToolOutput {
    let mut out = ToolOutput { is_error: result.is_error == Some(true), ..ToolOutput::default() };
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
            ContentBlock::ResourceLink(r) => parts.push(format!("[link to resource {} ({})]", r.uri, r.name)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use perch_tools::output::MAX_STRUCTURED;

    #[test]
    fn images_and_text_are_kept_apart() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("a chart"),
            ContentBlock::image("aGVsbG8=", "image/png"),
        ]);
        let out = from_result(result);
        assert_eq!(out.text, "a chart");
        assert_eq!(out.images, [ToolImage { mime: "image/png".into(), base64: "aGVsbG8=".into() }]);
        assert!(!out.is_error);
        let failed = from_result(CallToolResult::error(vec![ContentBlock::text("nope")]));
        assert!(failed.is_error);
    }

    #[test]
    fn structured_results_are_kept_for_the_card_unless_large() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("1 message")]);
        result.structured_content = Some(serde_json::json!({ "messages": [{ "from": "Ada" }] }));
        let out = from_result(result);
        assert_eq!(out.text, "1 message", "the model reads the text");
        assert_eq!(out.structured.unwrap()["messages"][0]["from"], "Ada");
        // A larger one is read, for an app, but not kept with the card.
        let mut large = CallToolResult::success(vec![ContentBlock::text("big")]);
        large.structured_content = Some(serde_json::json!({ "body": "x".repeat(MAX_STRUCTURED) }));
        let mut read = from_result(large);
        assert!(read.structured.is_some());
        read.keep(100);
        assert_eq!((read.text.as_str(), read.structured), ("big", None));
        let mut huge = CallToolResult::success(vec![ContentBlock::text("huge")]);
        huge.structured_content = Some(serde_json::json!({ "body": "x".repeat(MAX_APP_STRUCTURED) }));
        assert_eq!(from_result(huge).structured, None);
    }
}
