//! Reads a Gmail message resource (`format=full`): its headers, its text (text/plain preferred,
//! else HTML reduced to text) found by walking nested multipart parts, and its attachments. Only a
//! bounded prefix of a body is decoded, so a 5 MB message costs no more than a short one.

use base64::Engine;
use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde::Deserialize;

use crate::html;

/// Gmail's `body.data` is base64url, sometimes padded and sometimes not.
const BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Decodes base64url, as Gmail writes bodies and raw messages.
pub fn decode_base64url(data: &str) -> Option<Vec<u8>> {
    let clean: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    BASE64URL.decode(clean.trim_end_matches('=')).ok()
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Message {
    pub id: String,
    pub thread_id: String,
    pub label_ids: Vec<String>,
    pub snippet: String,
    /// Milliseconds since the epoch, as a string: when Gmail received the message.
    pub internal_date: String,
    pub size_estimate: u64,
    pub payload: Part,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Part {
    pub part_id: String,
    pub mime_type: String,
    pub filename: String,
    pub headers: Vec<Header>,
    pub body: PartBody,
    pub parts: Vec<Part>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PartBody {
    pub attachment_id: Option<String>,
    pub size: u64,
    pub data: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Header {
    pub name: String,
    pub value: String,
}

impl Part {
    /// The first header of this name (names compare case-insensitively), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value.trim())
    }

    fn media_type(&self) -> String {
        self.mime_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
    }

    fn is_attachment(&self) -> bool {
        !self.filename.is_empty()
            || self
                .header("Content-Disposition")
                .is_some_and(|d| d.to_ascii_lowercase().starts_with("attachment"))
    }

    fn charset(&self) -> Option<String> {
        let content_type = self.header("Content-Type")?;
        content_type.split(';').skip(1).find_map(|param| {
            let (key, value) = param.split_once('=')?;
            key.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches('"').to_owned())
        })
    }
}

impl Message {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.payload.header(name)
    }

    pub fn has_label(&self, label: &str) -> bool {
        self.label_ids.iter().any(|l| l == label)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub name: String,
    pub mime_type: String,
    pub size: u64,
}

/// A message's readable text, cut at a bound.
#[derive(Debug, Clone, Default)]
pub struct Body {
    pub text: String,
    /// Characters left out after the bound (an estimate when the undecoded rest was skipped).
    pub cut: bool,
    /// The size of the chosen text parts in bytes, as Gmail reports it.
    pub bytes: u64,
    pub from_html: bool,
    pub attachments: Vec<Attachment>,
}

/// The text of `payload` up to `max_chars` characters, and its attachments.
pub fn read_body(payload: &Part, max_chars: usize) -> Body {
    let mut found = Found::default();
    walk(payload, &mut found);
    let (parts, from_html) = if found.plain.is_empty() { (found.html, true) } else { (found.plain, false) };
    // Decoding stops well past the bound: HTML markup takes room that its text does not.
    let decode_bytes =
        if from_html { max_chars.saturating_mul(16).max(64 * 1024) } else { max_chars * 4 + 4 };
    let mut texts = Vec::new();
    let mut cut = false;
    let mut bytes = 0;
    for part in &parts {
        bytes += part.body.size;
        let Some(data) = &part.body.data else { continue };
        let (decoded, partial) = decode_prefix(data, decode_bytes);
        cut |= partial;
        let text = decode_charset(&decoded, part.charset().as_deref(), partial);
        texts.push(if from_html { html::to_text(&text) } else { normalize(&text) });
    }
    let joined = texts.join("\n\n");
    let text = match joined.char_indices().nth(max_chars) {
        Some((at, _)) => {
            cut = true;
            // Prefer ending at a paragraph or line break in the last fifth.
            let head = &joined[..at];
            let end =
                head.rfind("\n\n").or_else(|| head.rfind('\n')).filter(|&i| i > at * 4 / 5).unwrap_or(at);
            joined[..end].trim_end().to_owned()
        }
        None => joined.trim().to_owned(),
    };
    Body { text, cut, bytes, from_html, attachments: found.attachments }
}

#[derive(Default)]
struct Found<'a> {
    plain: Vec<&'a Part>,
    html: Vec<&'a Part>,
    attachments: Vec<Attachment>,
}

fn walk<'a>(part: &'a Part, found: &mut Found<'a>) {
    let media = part.media_type();
    if media.starts_with("multipart/") || (media == "message/rfc822" && !part.parts.is_empty()) {
        part.parts.iter().for_each(|child| walk(child, found));
    } else if part.is_attachment() {
        found.attachments.push(Attachment {
            name: if part.filename.is_empty() { "(unnamed)".into() } else { part.filename.clone() },
            mime_type: media,
            size: part.body.size,
        });
    } else if media == "text/plain" || (media.is_empty() && part.body.data.is_some()) {
        found.plain.push(part);
    } else if media == "text/html" {
        found.html.push(part);
    } else if part.body.size > 0 || part.body.attachment_id.is_some() {
        // An inline image or calendar invitation: worth naming, not reading.
        found.attachments.push(Attachment {
            name: "(inline)".into(),
            mime_type: media,
            size: part.body.size,
        });
    }
}

/// Decodes at most `max_bytes` of a base64url body; whether some was left undecoded.
fn decode_prefix(data: &str, max_bytes: usize) -> (Vec<u8>, bool) {
    let chars = max_bytes.div_ceil(3) * 4;
    if data.len() <= chars {
        return (decode_base64url(data).unwrap_or_default(), false);
    }
    // A prefix of whole 4-character groups decodes on its own (base64url is ASCII).
    let prefix = &data[..chars];
    (decode_base64url(prefix).unwrap_or_default(), true)
}

fn decode_charset(bytes: &[u8], charset: Option<&str>, partial: bool) -> String {
    let encoding =
        charset.and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes())).unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(bytes);
    // A cut can split a character; its replacement mark says nothing the note does not.
    if partial { text.trim_end_matches('\u{fffd}').to_owned() } else { text.into_owned() }
}

/// Plain text with line ends made `\n` and runs of blank lines made one.
fn normalize(text: &str) -> String {
    let unix = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(unix.len());
    let mut blank = 0;
    for line in unix.lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use serde_json::json;

    fn b64(s: &str) -> String {
        URL_SAFE_NO_PAD.encode(s)
    }

    fn part(value: serde_json::Value) -> Part {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn prefers_plain_text_in_nested_alternatives_and_lists_attachments() {
        let payload = part(json!({
            "mimeType": "multipart/mixed",
            "parts": [
                {"mimeType": "multipart/alternative", "parts": [
                    {"mimeType": "text/plain", "body": {"size": 20, "data": b64("Hello Ann,\r\n\r\n\r\nSee the report?")}},
                    {"mimeType": "text/html", "body": {"size": 40, "data": b64("<p>Hello <b>Ann</b></p>")}}
                ]},
                {"mimeType": "application/pdf", "filename": "report.pdf",
                 "body": {"attachmentId": "att-1", "size": 120345}}
            ]
        }));
        let body = read_body(&payload, 1000);
        assert_eq!(body.text, "Hello Ann,\n\nSee the report?");
        assert!(!body.from_html && !body.cut);
        assert_eq!(
            body.attachments,
            [Attachment { name: "report.pdf".into(), mime_type: "application/pdf".into(), size: 120345 }]
        );
    }

    #[test]
    fn reduces_html_only_mail_and_decodes_base64url_and_charsets() {
        // '?' and '>' in the text give the base64url-only characters '_' and '-'.
        let html = "<html><head><style>p{color:red}</style><script>steal()</script></head>\
                    <body><p>Is it ready?>></p><p>Read <a href=\"https://example.org/a?b=1\">the notes</a>.</p></body></html>";
        let encoded = b64(html);
        assert!(encoded.contains('_') || encoded.contains('-'), "{encoded}");
        let payload = part(json!({"mimeType": "text/html", "body": {"size": html.len(), "data": encoded}}));
        let body = read_body(&payload, 1000);
        assert!(body.from_html);
        assert_eq!(body.text, "Is it ready?>>\n\nRead the notes (https://example.org/a?b=1).");

        let latin1 = part(json!({
            "mimeType": "text/plain",
            "headers": [{"name": "Content-Type", "value": "text/plain; charset=\"ISO-8859-1\""}],
            "body": {"size": 4, "data": URL_SAFE_NO_PAD.encode(b"caf\xe9")}
        }));
        assert_eq!(read_body(&latin1, 100).text, "café");
    }

    #[test]
    fn a_huge_body_is_decoded_only_up_to_the_bound() {
        let big = "All work and no play. ".repeat(250_000); // about 5.5 MB
        let payload = part(json!({"mimeType": "text/plain", "body": {"size": big.len(), "data": b64(&big)}}));
        let body = read_body(&payload, 2_000);
        assert!(body.cut && body.text.chars().count() <= 2_000);
        assert!(body.text.starts_with("All work and no play."));
        assert_eq!(body.bytes, big.len() as u64);
    }
}
