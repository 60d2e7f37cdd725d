//! `messages.send` and `drafts.create`: the raw RFC 2822 message (JSON `raw`, or the upload
//! endpoint's media and multipart forms), the checks Gmail makes on it, and Gmail's threading
//! rule: a message joins `threadId` only when its Subject matches and its `In-Reply-To` or
//! `References` name a message of that thread.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::{COMPOSE, MAIL, MODIFY, SEND, authorize};
use crate::http::{Request, Response};
use crate::mime::{self, Part};
use crate::{Sent, State, errors};

const SEND_SCOPES: &[&str] = &[MAIL, MODIFY, COMPOSE, SEND];
const DRAFT_SCOPES: &[&str] = &[MAIL, MODIFY, COMPOSE];

/// Gmail's media upload limit (35 MB).
pub(crate) const UPLOAD_LIMIT: usize = 36_700_160;
/// The JSON route takes the message base64url-encoded inside the request. Google documents no
/// figure for it; requests of about 8.5 MB are reported refused, so this fake takes 8 MiB.
pub(crate) const JSON_LIMIT: usize = 8 * 1024 * 1024;

const RAW_REQUIRED: &str =
    "'raw' RFC822 payload message string or uploading message via /upload/* URL required";

/// What came in: the message bytes and the thread asked for.
struct Outgoing {
    raw: Vec<u8>,
    thread_id: Option<String>,
}

fn decode_raw(raw: &str) -> Option<Vec<u8>> {
    // Gmail takes base64url, padded or not; the standard alphabet is accepted too.
    let normalized: String = raw
        .trim()
        .trim_end_matches('=')
        .chars()
        .map(|c| {
            if c == '+' {
                '-'
            } else if c == '/' {
                '_'
            } else {
                c
            }
        })
        .collect();
    URL_SAFE_NO_PAD.decode(normalized).ok()
}

fn from_json(message: &Value) -> Result<Outgoing, Response> {
    let Some(raw) = message["raw"].as_str().filter(|r| !r.is_empty()) else {
        return Err(errors::bad_request(RAW_REQUIRED));
    };
    let Some(raw) = decode_raw(raw) else {
        return Err(errors::invalid_argument(
            "Invalid value at 'message.raw' (TYPE_BYTES), Base64 decoding failed",
        ));
    };
    Ok(Outgoing { raw, thread_id: message["threadId"].as_str().map(str::to_owned) })
}

/// The message as the request carries it; `envelope` picks the message out of the JSON body
/// (the body itself for send, its `message` for drafts).
fn outgoing(request: &Request, upload: bool, envelope: fn(&Value) -> &Value) -> Result<Outgoing, Response> {
    let content_type = request.header("content-type").unwrap_or_default().to_owned();
    let (media_type, _) = mime::parameters(&content_type);
    if !upload {
        if request.body.len() > JSON_LIMIT {
            return Err(Response::html(
                413,
                "<html><head><title>413 Request Entity Too Large</title></head><body>\
                 <h1>Request Entity Too Large</h1></body></html>"
                    .to_owned(),
            ));
        }
        let Some(body) = request.json() else {
            return Err(errors::invalid_argument("Invalid JSON payload received."));
        };
        return from_json(envelope(&body));
    }
    if request.body.len() > UPLOAD_LIMIT {
        return Err(errors::api(413, "Maximum upload size exceeded", "uploadTooLarge"));
    }
    match request.param("uploadType") {
        Some("media") => {
            if !media_type.starts_with("message/") {
                return Err(errors::bad_request(&format!(
                    "Media type '{media_type}' is not supported. Valid media types: [message/*]"
                )));
            }
            Ok(Outgoing { raw: request.body.clone(), thread_id: None })
        }
        Some("multipart") => {
            // multipart/related: the JSON metadata, then the message.
            let mut wrapped = format!("Content-Type: {content_type}\r\n\r\n").into_bytes();
            wrapped.extend_from_slice(&request.body);
            let related = mime::parse(&wrapped);
            let [metadata, media, ..] = related.parts.as_slice() else {
                return Err(errors::bad_request("Invalid multipart request"));
            };
            let metadata: Value = serde_json::from_slice(&metadata.body).unwrap_or(Value::Null);
            if !media.mime_type.starts_with("message/") {
                return Err(errors::bad_request(&format!(
                    "Media type '{}' is not supported. Valid media types: [message/*]",
                    media.mime_type
                )));
            }
            let thread_id = envelope(&metadata)["threadId"].as_str().map(str::to_owned);
            Ok(Outgoing { raw: media.body.clone(), thread_id })
        }
        _ => {
            Err(errors::bad_request("Upload requests must specify uploadType=media or uploadType=multipart"))
        }
    }
}

/// Gmail's threading rule, given the thread asked for.
fn thread_for(s: &State, part: &Part, asked: Option<&str>) -> Result<Option<String>, Response> {
    let Some(thread_id) = asked else {
        return Ok(None);
    };
    let thread: Vec<&crate::mailbox::Message> =
        s.mailbox.messages.iter().filter(|m| m.thread_id == thread_id).collect();
    if thread.is_empty() {
        return Err(errors::not_found());
    }
    let subject = mime::base_subject(part.header("Subject").unwrap_or_default());
    let references = mime::referenced_ids(part);
    let subject_matches =
        thread.iter().any(|m| mime::base_subject(m.parsed.header("Subject").unwrap_or_default()) == subject);
    let names_a_message = thread
        .iter()
        .filter_map(|m| m.parsed.header("Message-ID"))
        .any(|id| references.iter().any(|r| r.eq_ignore_ascii_case(id)));
    Ok((subject_matches && names_a_message).then(|| thread_id.to_owned()))
}

fn recipients_check(part: &Part) -> Result<(), Response> {
    let mut any = false;
    for header in ["To", "Cc", "Bcc"] {
        let Some(value) = part.header(header).filter(|v| !v.trim().is_empty()) else {
            continue;
        };
        let addresses = mime::addresses(value);
        if addresses.is_empty() || !addresses.iter().all(|a| mime::is_address(a)) {
            return Err(errors::invalid_argument(&format!("Invalid {header} header")));
        }
        any = true;
    }
    if !any {
        return Err(errors::invalid_argument("Recipient address required"));
    }
    Ok(())
}

/// Stores the message with the headers Gmail adds when missing; returns (id, thread id).
fn store(
    s: &mut State,
    raw: &[u8],
    part: &Part,
    thread: Option<String>,
    labels: Vec<String>,
) -> (String, String) {
    let id = s.fresh(16);
    let thread_id = thread.unwrap_or_else(|| id.clone());
    let mut stored = Vec::new();
    if part.header("Message-ID").is_none() {
        stored.extend_from_slice(format!("Message-ID: <CAFake{id}@mail.gmail.com>\r\n").as_bytes());
    }
    let now = jiff::Timestamp::now();
    if part.header("Date").is_none() {
        let date = jiff::fmt::rfc2822::to_string(&now.to_zoned(jiff::tz::TimeZone::UTC)).unwrap_or_default();
        stored.extend_from_slice(format!("Date: {date}\r\n").as_bytes());
    }
    stored.extend_from_slice(raw);
    s.mailbox.store(id.clone(), thread_id.clone(), labels, stored, now.as_millisecond());
    (id, thread_id)
}

/// `POST messages/send`, JSON or upload.
pub(crate) fn send(s: &mut State, request: &Request, upload: bool) -> Response {
    if let Err(refusal) = authorize(s, request, SEND_SCOPES, "SendMessage") {
        return refusal;
    }
    let outgoing = match outgoing(request, upload, |body| body) {
        Ok(outgoing) => outgoing,
        Err(refusal) => return refusal,
    };
    if let Err(problem) = mime::check_outgoing(&outgoing.raw) {
        return errors::invalid_argument(&problem);
    }
    let part = mime::parse(&outgoing.raw);
    if let Err(refusal) = recipients_check(&part) {
        return refusal;
    }
    let thread = match thread_for(s, &part, outgoing.thread_id.as_deref()) {
        Ok(thread) => thread,
        Err(refusal) => return refusal,
    };
    let mut labels = vec!["SENT".to_owned()];
    // Mail to oneself also arrives.
    if crate::query::addressed_to(&part, crate::USER_EMAIL) {
        labels.extend(["INBOX".to_owned(), "UNREAD".to_owned()]);
    }
    let (id, thread_id) = store(s, &outgoing.raw, &part, thread, labels.clone());
    let raw = String::from_utf8_lossy(&outgoing.raw).into_owned();
    s.mailbox.sent.push(Sent { id: id.clone(), thread_id: thread_id.clone(), raw });
    Response::json(200, &json!({ "id": id, "threadId": thread_id, "labelIds": labels }))
}

/// `POST drafts`: `{"message": {"raw", "threadId"?}}`. Drafts need no recipients yet.
pub(crate) fn create_draft(s: &mut State, request: &Request, upload: bool) -> Response {
    if let Err(refusal) = authorize(s, request, DRAFT_SCOPES, "CreateDraft") {
        return refusal;
    }
    let outgoing = match outgoing(request, upload, |body| &body["message"]) {
        Ok(outgoing) => outgoing,
        Err(refusal) => return refusal,
    };
    if let Err(problem) = mime::check_outgoing(&outgoing.raw) {
        return errors::invalid_argument(&problem);
    }
    let part = mime::parse(&outgoing.raw);
    let thread = match thread_for(s, &part, outgoing.thread_id.as_deref()) {
        Ok(thread) => thread,
        Err(refusal) => return refusal,
    };
    let (id, thread_id) = store(s, &outgoing.raw, &part, thread, vec!["DRAFT".to_owned()]);
    let draft_id = format!("r{}", 5_118_000_000_000_000_000u64 + s.serial);
    s.mailbox.drafts.push((draft_id.clone(), id.clone()));
    let raw = String::from_utf8_lossy(&outgoing.raw).into_owned();
    s.mailbox.draft_log.push(Sent { id: id.clone(), thread_id: thread_id.clone(), raw });
    Response::json(
        200,
        &json!({ "id": draft_id, "message": { "id": id, "threadId": thread_id, "labelIds": ["DRAFT"] } }),
    )
}
