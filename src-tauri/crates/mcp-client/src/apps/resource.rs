//! Reading an app's page: the `ui://` resource must be one HTML document of the apps media
//! type, at most [`MAX_PAGE_BYTES`], as text or base64. Its `_meta.ui` may be on the read's
//! content item or on the listing's entry; the content item's wins (hosts must check both).

use base64::Engine as _;
use rmcp::model::{ReadResourceResult, ResourceContents};

use super::ResourceUi;

/// The largest page Perch renders.
pub const MAX_PAGE_BYTES: usize = 8 * 1024 * 1024;

/// A page ready to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppPage {
    pub html: String,
    /// What it declares (content item first, else the listing's).
    pub ui: Option<ResourceUi>,
}

/// Is this the apps media type? `text/html` (any case) with `profile=mcp-app`, other
/// parameters (a charset) allowed.
pub fn is_app_mime(mime: &str) -> bool {
    let mut parts = mime.split(';').map(str::trim);
    let base_ok = parts.next().is_some_and(|b| b.eq_ignore_ascii_case("text/html"));
    let profile_ok = parts.any(|p| {
        p.split_once('=').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("profile") && v.trim().trim_matches('"') == "mcp-app"
        })
    });
    base_ok && profile_ok
}

/// Why what a server returned is not an app's page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageRefused {
    #[error("the server's answer has no content for {0}")]
    NoContent(String),
    #[error("the page is {kib} KiB, more than Perch shows ({max} KiB)", kib = .0 / 1024, max = MAX_PAGE_BYTES / 1024)]
    TooBig(usize),
    #[error("the page is not valid base64: {0}")]
    NotBase64(String),
    #[error("the page is not UTF-8 text")]
    NotUtf8,
    #[error("the page is of a kind of content Perch does not know")]
    UnknownContent,
    #[error("the page's type is {0:?}, not {wanted}", wanted = super::MIME_TYPE)]
    WrongType(String),
    #[error("the page is empty")]
    Empty,
}

/// Checks what `resources/read` returned for `uri`.
pub fn page_from(
    uri: &str,
    listed: Option<&ResourceUi>,
    read: ReadResourceResult,
) -> Result<AppPage, PageRefused> {
    let item = read
        .contents
        .into_iter()
        .find(|c| match c {
            ResourceContents::TextResourceContents { uri: u, .. }
            | ResourceContents::BlobResourceContents { uri: u, .. } => u == uri,
            _ => false,
        })
        .ok_or_else(|| PageRefused::NoContent(uri.to_owned()))?;
    let (mime, meta, html) = match item {
        ResourceContents::TextResourceContents { mime_type, meta, text, .. } => {
            if text.len() > MAX_PAGE_BYTES {
                return Err(PageRefused::TooBig(text.len()));
            }
            (mime_type, meta, text)
        }
        ResourceContents::BlobResourceContents { mime_type, meta, blob, .. } => {
            // base64 is 4 characters for 3 bytes: refuse before decoding an oversized one.
            if blob.len() / 4 * 3 > MAX_PAGE_BYTES + 3 {
                return Err(PageRefused::TooBig(blob.len() / 4 * 3));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .map_err(|e| PageRefused::NotBase64(e.to_string()))?;
            if bytes.len() > MAX_PAGE_BYTES {
                return Err(PageRefused::TooBig(bytes.len()));
            }
            let html = String::from_utf8(bytes).map_err(|_| PageRefused::NotUtf8)?;
            (mime_type, meta, html)
        }
        _ => return Err(PageRefused::UnknownContent),
    };
    let mime = mime.unwrap_or_default();
    if !is_app_mime(&mime) {
        return Err(PageRefused::WrongType(mime));
    }
    if html.trim().is_empty() {
        return Err(PageRefused::Empty);
    }
    let ui = ResourceUi::from_meta(meta.as_ref().map(|m| &m.0)).or_else(|| listed.cloned());
    Ok(AppPage { html, ui })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::MetaObject;
    use serde_json::json;

    const URI: &str = "ui://clock/app.html";

    fn text(uri: &str, mime: &str, body: &str) -> ResourceContents {
        ResourceContents::text(body, uri).with_mime_type(mime)
    }

    fn read(contents: Vec<ResourceContents>) -> ReadResourceResult {
        ReadResourceResult::new(contents)
    }

    #[test]
    fn the_media_type_must_be_the_apps_one() {
        assert!(is_app_mime("text/html;profile=mcp-app"));
        assert!(is_app_mime("TEXT/HTML; charset=utf-8; profile=\"mcp-app\""));
        for mime in
            ["text/html", "text/plain;profile=mcp-app", "text/html;profile=mcp-apps", "", "text/html;mcp-app"]
        {
            assert!(!is_app_mime(mime), "{mime}");
        }
    }

    #[test]
    fn a_text_page_is_taken_and_a_wrong_type_or_address_refused() {
        let ok =
            page_from(URI, None, read(vec![text(URI, "text/html;profile=mcp-app", "<p>hi</p>")])).unwrap();
        assert_eq!(ok.html, "<p>hi</p>");
        let wrong =
            page_from(URI, None, read(vec![text(URI, "text/html", "<p>hi</p>")])).unwrap_err().to_string();
        assert!(wrong.contains("not text/html;profile=mcp-app"), "{wrong}");
        let elsewhere =
            page_from(URI, None, read(vec![text("ui://other", "text/html;profile=mcp-app", "x")]))
                .unwrap_err()
                .to_string();
        assert!(elsewhere.contains("no content for"), "{elsewhere}");
        assert!(page_from(URI, None, read(vec![])).is_err());
        assert!(page_from(URI, None, read(vec![text(URI, "text/html;profile=mcp-app", "  ")])).is_err());
    }

    #[test]
    fn a_base64_page_is_decoded_and_must_be_utf8() {
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let blob = |data: String| {
            read(vec![ResourceContents::blob(data, URI).with_mime_type("text/html;profile=mcp-app")])
        };
        assert_eq!(page_from(URI, None, blob(b64("<b>ok</b>".as_bytes()))).unwrap().html, "<b>ok</b>");
        assert!(
            page_from(URI, None, blob(b64(&[0xff, 0xfe, 0x00]))).unwrap_err().to_string().contains("UTF-8")
        );
        assert!(
            page_from(URI, None, blob("!!not base64!!".into())).unwrap_err().to_string().contains("base64")
        );
    }

    #[test]
    fn pages_over_the_limit_are_refused_before_decoding() {
        let huge = "a".repeat(MAX_PAGE_BYTES + 1);
        let err = page_from(URI, None, read(vec![text(URI, "text/html;profile=mcp-app", &huge)]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than Perch shows"), "{err}");
        let blob = "QUFB".repeat(MAX_PAGE_BYTES / 3 + 2);
        let read_blob =
            read(vec![ResourceContents::blob(blob, URI).with_mime_type("text/html;profile=mcp-app")]);
        assert!(page_from(URI, None, read_blob).unwrap_err().to_string().contains("more than Perch shows"));
    }

    #[test]
    fn the_content_items_declarations_win_over_the_listings() {
        let listed =
            ResourceUi { connect_domains: vec!["https://listed.example.com".into()], ..Default::default() };
        let plain =
            page_from(URI, Some(&listed), read(vec![text(URI, "text/html;profile=mcp-app", "x")])).unwrap();
        assert_eq!(plain.ui.as_ref(), Some(&listed), "the listing's when the item has none");
        let meta = json!({ "ui": { "csp": { "connectDomains": ["https://item.example.com"] } } });
        let item = text(URI, "text/html;profile=mcp-app", "x")
            .with_meta(MetaObject(meta.as_object().cloned().unwrap()));
        let page = page_from(URI, Some(&listed), read(vec![item])).unwrap();
        assert_eq!(page.ui.unwrap().connect_domains, vec!["https://item.example.com"]);
    }
}
