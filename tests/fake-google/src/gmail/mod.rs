//! Gmail v1 under `/gmail/v1/users/{userId}/`: messages (list, get, attachments, modify, trash),
//! threads, labels and the profile, in Gmail's JSON shapes, each method behind the scopes Google
//! documents for it. Sending and drafts are in [`crate::compose`].

mod compose;

use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::errors;
use crate::http::{Request, Response};
use crate::mailbox::{Mailbox, Message};
use crate::mime::Part;
use crate::query::Query;
use crate::{State, oauth};

pub(crate) const MAIL: &str = "https://mail.google.com/";
pub(crate) const MODIFY: &str = "https://www.googleapis.com/auth/gmail.modify";
pub(crate) const READONLY: &str = "https://www.googleapis.com/auth/gmail.readonly";
pub(crate) const METADATA: &str = "https://www.googleapis.com/auth/gmail.metadata";
pub(crate) const COMPOSE: &str = "https://www.googleapis.com/auth/gmail.compose";
pub(crate) const SEND: &str = "https://www.googleapis.com/auth/gmail.send";
pub(crate) const LABELS: &str = "https://www.googleapis.com/auth/gmail.labels";

const READ: &[&str] = &[MAIL, MODIFY, READONLY, METADATA];
const READ_CONTENT: &[&str] = &[MAIL, MODIFY, READONLY];
const LIST_LABELS: &[&str] = &[MAIL, MODIFY, READONLY, METADATA, LABELS];
const PROFILE: &[&str] = &[MAIL, MODIFY, COMPOSE, READONLY, METADATA];
const CHANGE: &[&str] = &[MAIL, MODIFY];

const SERVICE: &str = "gmail.googleapis.com";

/// The token's scopes, or the refusal.
pub(crate) fn authorize(
    s: &State,
    request: &Request,
    accepted: &[&str],
    method: &str,
) -> Result<bool, Response> {
    let scopes =
        oauth::check(s, request, accepted, SERVICE, &format!("caribou.api.proto.MailboxService.{method}"))?;
    // Only gmail.metadata among the scopes that read mail: headers and labels, never bodies.
    Ok(!READ_CONTENT.iter().any(|sc| scopes.contains(*sc)))
}

pub(crate) fn route(s: &mut State, request: &Request) -> Response {
    let upload = request.path.starts_with("/upload/");
    let rest = request.path.trim_start_matches("/upload").trim_start_matches("/gmail/v1/users/");
    let segments: Vec<&str> = rest.split('/').collect();
    let Some((user, segments)) = segments.split_first() else {
        return errors::not_found();
    };
    if *user != "me" && !user.eq_ignore_ascii_case(crate::USER_EMAIL) {
        return errors::api(403, &format!("Delegation denied for {}", crate::USER_EMAIL), "forbidden");
    }
    let method = request.method.as_str();
    match (method, segments) {
        ("POST", ["messages", "send"]) => compose::send(s, request, upload),
        ("POST", ["drafts"]) => compose::create_draft(s, request, upload),
        _ if upload => errors::not_found(),
        ("GET", ["profile"]) => profile(s, request),
        ("GET", ["messages"]) => list_messages(s, request),
        ("GET", ["messages", id]) => get_message(s, request, id),
        ("GET", ["messages", id, "attachments", attachment]) => get_attachment(s, request, id, attachment),
        ("POST", ["messages", id, "modify"]) => modify(s, request, id),
        ("POST", ["messages", id, "trash"]) => set_trash(s, request, id, true),
        ("POST", ["messages", id, "untrash"]) => set_trash(s, request, id, false),
        ("GET", ["threads"]) => list_threads(s, request),
        ("GET", ["threads", id]) => get_thread(s, request, id),
        ("GET", ["labels"]) => list_labels(s, request),
        _ => errors::not_found(),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Full,
    Metadata,
    Minimal,
    Raw,
}

fn format(request: &Request, metadata_only: bool) -> Result<Format, Response> {
    let format = match request.param("format").map(str::to_ascii_lowercase).as_deref() {
        None | Some("full") => Format::Full,
        Some("metadata") => Format::Metadata,
        Some("minimal") => Format::Minimal,
        Some("raw") => Format::Raw,
        Some(other) => {
            return Err(errors::invalid_argument(&format!(
                "Invalid value at 'format' (type.googleapis.com/gmail.v1.Format), \"{other}\""
            )));
        }
    };
    if metadata_only && matches!(format, Format::Full | Format::Raw) {
        let name = if format == Format::Full { "FULL" } else { "RAW" };
        return Err(errors::api(403, &format!("Metadata scope doesn't allow format {name}"), "forbidden"));
    }
    Ok(format)
}

/// Gmail's ids are hex; anything else is refused before it is looked up.
fn check_id(id: &str) -> Result<(), Response> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(errors::invalid_argument("Invalid id value"));
    }
    Ok(())
}

fn attachment_id(message_id: &str, part_id: &str) -> String {
    let digest = Sha256::digest(format!("{message_id}/{part_id}").as_bytes());
    format!("ANGjdJ{}", URL_SAFE_NO_PAD.encode(digest))
}

fn headers_json(part: &Part, only: Option<&[String]>) -> Value {
    let wanted = |name: &str| only.is_none_or(|only| only.iter().any(|o| o.eq_ignore_ascii_case(name)));
    Value::Array(
        part.headers
            .iter()
            .filter(|(k, _)| wanted(k))
            .map(|(k, v)| json!({ "name": k, "value": v }))
            .collect(),
    )
}

fn part_json(message_id: &str, part_id: &str, part: &Part) -> Value {
    let body = if !part.parts.is_empty() || part.mime_type.starts_with("multipart/") {
        json!({ "size": 0 })
    } else if part.is_attachment() {
        json!({ "attachmentId": attachment_id(message_id, part_id), "size": part.body.len() })
    } else if part.body.is_empty() {
        json!({ "size": 0 })
    } else {
        json!({ "size": part.body.len(), "data": URL_SAFE.encode(&part.body) })
    };
    let mut json = json!({
        "partId": part_id,
        "mimeType": part.mime_type,
        "filename": part.filename,
        "headers": headers_json(part, None),
        "body": body,
    });
    if !part.parts.is_empty() {
        let prefix = if part_id.is_empty() { String::new() } else { format!("{part_id}.") };
        json["parts"] = part
            .parts
            .iter()
            .enumerate()
            .map(|(i, child)| part_json(message_id, &format!("{prefix}{i}"), child))
            .collect();
    }
    json
}

fn message_json(m: &Message, format: Format, metadata_headers: &[String]) -> Value {
    let mut json = json!({
        "id": m.id,
        "threadId": m.thread_id,
        "labelIds": m.labels,
        "snippet": crate::mime::snippet(&m.parsed),
        "sizeEstimate": m.raw.len(),
        "historyId": m.history_id.to_string(),
        "internalDate": m.internal_date.to_string(),
    });
    match format {
        Format::Minimal => {}
        Format::Raw => json["raw"] = json!(URL_SAFE.encode(&m.raw)),
        Format::Metadata => {
            let only = (!metadata_headers.is_empty()).then_some(metadata_headers);
            json["payload"] =
                json!({ "mimeType": m.parsed.mime_type, "headers": headers_json(&m.parsed, only) });
        }
        Format::Full => json["payload"] = part_json(&m.id, "", &m.parsed),
    }
    json
}

fn metadata_headers(request: &Request) -> Vec<String> {
    let mut names: Vec<String> = request.params("metadataHeaders").into_iter().map(str::to_owned).collect();
    names.extend(request.params("metadataHeaders[]").into_iter().map(str::to_owned));
    names
}

fn profile(s: &mut State, request: &Request) -> Response {
    if let Err(refusal) = authorize(s, request, PROFILE, "GetProfile") {
        return refusal;
    }
    let threads: std::collections::BTreeSet<&str> =
        s.mailbox.messages.iter().map(|m| m.thread_id.as_str()).collect();
    Response::json(
        200,
        &json!({
            "emailAddress": crate::USER_EMAIL,
            "messagesTotal": s.mailbox.messages.len(),
            "threadsTotal": threads.len(),
            "historyId": s.mailbox.history.to_string(),
        }),
    )
}

/// The messages a list request selects, newest first.
fn select<'a>(
    mailbox: &'a Mailbox,
    request: &Request,
    metadata_only: bool,
) -> Result<Vec<&'a Message>, Response> {
    let q = request.param("q").filter(|q| !q.trim().is_empty());
    if metadata_only && q.is_some() {
        return Err(errors::api(403, "Metadata scope does not support 'q' parameter", "forbidden"));
    }
    let query = Query::parse(q.unwrap_or_default());
    let label_ids = {
        let mut ids = request.params("labelIds");
        ids.extend(request.params("labelIds[]"));
        ids
    };
    if let Some(unknown) = label_ids.iter().find(|id| !mailbox.label_exists(id)) {
        return Err(errors::invalid_argument(&format!("Invalid label: {unknown}")));
    }
    let spam_trash = request.flag("includeSpamTrash")
        || query.names_spam_or_trash()
        || label_ids.iter().any(|l| *l == "SPAM" || *l == "TRASH");
    let now = jiff::Timestamp::now().as_millisecond();
    let mut selected: Vec<&Message> = mailbox
        .messages
        .iter()
        .filter(|m| spam_trash || !m.labels.iter().any(|l| l == "SPAM" || l == "TRASH"))
        .filter(|m| label_ids.iter().all(|id| m.labels.iter().any(|l| l == id)))
        .filter(|m| query.matches(mailbox, m, now))
        .collect();
    selected.sort_by_key(|m| std::cmp::Reverse(m.internal_date));
    Ok(selected)
}

/// `maxResults` (default 100, at most 500) and the page a `pageToken` points at.
fn page(request: &Request, total: usize) -> Result<(usize, usize), Response> {
    let max = match request.param("maxResults") {
        None => 100,
        Some(v) => {
            v.parse::<usize>().map_err(|_| errors::invalid_argument("Invalid maxResults"))?.clamp(1, 500)
        }
    };
    let start = match request.param("pageToken") {
        None | Some("") => 0,
        Some(token) => token.parse::<usize>().map_err(|_| errors::invalid_argument("Invalid pageToken"))?,
    };
    Ok((start.min(total), max))
}

fn list_messages(s: &mut State, request: &Request) -> Response {
    let metadata_only = match authorize(s, request, READ, "ListMessages") {
        Ok(m) => m,
        Err(refusal) => return refusal,
    };
    let selected = match select(&s.mailbox, request, metadata_only) {
        Ok(selected) => selected,
        Err(refusal) => return refusal,
    };
    let (start, max) = match page(request, selected.len()) {
        Ok(page) => page,
        Err(refusal) => return refusal,
    };
    let end = (start + max).min(selected.len());
    let mut body = json!({ "resultSizeEstimate": selected.len() });
    // Gmail leaves the key out entirely when nothing matches.
    if end > start {
        body["messages"] =
            selected[start..end].iter().map(|m| json!({ "id": m.id, "threadId": m.thread_id })).collect();
    }
    if end < selected.len() {
        body["nextPageToken"] = json!(format!("{end:020}"));
    }
    Response::json(200, &body)
}

fn list_threads(s: &mut State, request: &Request) -> Response {
    let metadata_only = match authorize(s, request, READ, "ListThreads") {
        Ok(m) => m,
        Err(refusal) => return refusal,
    };
    let selected = match select(&s.mailbox, request, metadata_only) {
        Ok(selected) => selected,
        Err(refusal) => return refusal,
    };
    let mut threads: Vec<&Message> = Vec::new();
    for m in selected {
        if !threads.iter().any(|t| t.thread_id == m.thread_id) {
            threads.push(m);
        }
    }
    let (start, max) = match page(request, threads.len()) {
        Ok(page) => page,
        Err(refusal) => return refusal,
    };
    let end = (start + max).min(threads.len());
    let mut body = json!({ "resultSizeEstimate": threads.len() });
    if end > start {
        body["threads"] = threads[start..end]
            .iter()
            .map(|m| {
                json!({
                    "id": m.thread_id,
                    "snippet": crate::mime::snippet(&m.parsed),
                    "historyId": m.history_id.to_string(),
                })
            })
            .collect();
    }
    if end < threads.len() {
        body["nextPageToken"] = json!(format!("{end:020}"));
    }
    Response::json(200, &body)
}

fn get_message(s: &mut State, request: &Request, id: &str) -> Response {
    let metadata_only = match authorize(s, request, READ, "GetMessage") {
        Ok(m) => m,
        Err(refusal) => return refusal,
    };
    let format = match check_id(id).and_then(|()| format(request, metadata_only)) {
        Ok(format) => format,
        Err(refusal) => return refusal,
    };
    match s.mailbox.find(id) {
        Some(m) => Response::json(200, &message_json(m, format, &metadata_headers(request))),
        None => errors::not_found(),
    }
}

fn get_attachment(s: &mut State, request: &Request, id: &str, attachment: &str) -> Response {
    if let Err(refusal) = authorize(s, request, READ_CONTENT, "GetAttachment").and(check_id(id)) {
        return refusal;
    }
    let Some(m) = s.mailbox.find(id) else {
        return errors::not_found();
    };
    let found = m.parsed.walk().into_iter().find(|(part_id, _)| attachment_id(&m.id, part_id) == attachment);
    match found {
        Some((_, part)) => Response::json(
            200,
            &json!({ "attachmentId": attachment, "size": part.body.len(), "data": URL_SAFE.encode(&part.body) }),
        ),
        None => errors::invalid_argument("Invalid attachment token"),
    }
}

fn labels_of(request: &Request, key: &str) -> Vec<String> {
    request
        .json()
        .and_then(|b| b[key].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn modify(s: &mut State, request: &Request, id: &str) -> Response {
    if let Err(refusal) = authorize(s, request, CHANGE, "ModifyMessage").and(check_id(id)) {
        return refusal;
    }
    let (add, remove) = (labels_of(request, "addLabelIds"), labels_of(request, "removeLabelIds"));
    if let Some(unknown) = add.iter().chain(&remove).find(|l| !s.mailbox.label_exists(l)) {
        return errors::invalid_argument(&format!("Invalid label: {unknown}"));
    }
    let history = s.mailbox.next_history();
    let Some(m) = s.mailbox.find_mut(id) else {
        return errors::not_found();
    };
    m.labels.retain(|l| !remove.contains(l));
    for label in add {
        if !m.labels.contains(&label) {
            m.labels.push(label);
        }
    }
    m.history_id = history;
    Response::json(200, &json!({ "id": m.id, "threadId": m.thread_id, "labelIds": m.labels }))
}

fn set_trash(s: &mut State, request: &Request, id: &str, trash: bool) -> Response {
    let method = if trash { "TrashMessage" } else { "UntrashMessage" };
    if let Err(refusal) = authorize(s, request, CHANGE, method).and(check_id(id)) {
        return refusal;
    }
    let history = s.mailbox.next_history();
    let Some(m) = s.mailbox.find_mut(id) else {
        return errors::not_found();
    };
    m.labels.retain(|l| l != "TRASH");
    if trash {
        m.labels.push("TRASH".to_owned());
    }
    m.history_id = history;
    Response::json(200, &json!({ "id": m.id, "threadId": m.thread_id, "labelIds": m.labels }))
}

fn get_thread(s: &mut State, request: &Request, id: &str) -> Response {
    let metadata_only = match authorize(s, request, READ, "GetThread") {
        Ok(m) => m,
        Err(refusal) => return refusal,
    };
    let format = match check_id(id).and_then(|()| format(request, metadata_only)) {
        Ok(format) => format,
        Err(refusal) => return refusal,
    };
    let mut messages: Vec<&Message> = s.mailbox.messages.iter().filter(|m| m.thread_id == id).collect();
    if messages.is_empty() {
        return errors::not_found();
    }
    messages.sort_by_key(|m| m.internal_date);
    let headers = metadata_headers(request);
    let history = messages.iter().map(|m| m.history_id).max().unwrap_or_default();
    Response::json(
        200,
        &json!({
            "id": id,
            "historyId": history.to_string(),
            "messages": messages.iter().map(|m| message_json(m, format, &headers)).collect::<Vec<_>>(),
        }),
    )
}

fn list_labels(s: &mut State, request: &Request) -> Response {
    if let Err(refusal) = authorize(s, request, LIST_LABELS, "ListLabels") {
        return refusal;
    }
    let shown = ["INBOX", "SENT", "DRAFT", "SPAM", "TRASH", "STARRED", "IMPORTANT", "CHAT"];
    let labels: Vec<Value> = s
        .mailbox
        .labels
        .iter()
        .map(|l| {
            let mut json =
                json!({ "id": l.id, "name": l.name, "type": if l.user { "user" } else { "system" } });
            if l.user {
                json["messageListVisibility"] = json!("show");
                json["labelListVisibility"] = json!("labelShow");
            } else if shown.contains(&l.id) {
                json["messageListVisibility"] = json!("hide");
                json["labelListVisibility"] = json!("labelShow");
            }
            json
        })
        .collect();
    Response::json(200, &json!({ "labels": labels }))
}
