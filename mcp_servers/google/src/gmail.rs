//! The Gmail tools' work: requests to Gmail v1 and the answers' text and fields.

use jiff::Zoned;
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::answer::{Answer, Outcome, UNTRUSTED_MAIL, check_id, clip, size, unescape_snippet};
use crate::api::{Api, Google, MESSAGE_LIMIT, Request};
use crate::config::UserZone;
use crate::error::GoogleError;
use crate::mime::address::Mailbox;
use crate::mime::read::{Message, read_body};
use crate::mime::write::{Outgoing, build};
use crate::scopes::need;
use crate::time;

/// Gmail tools over one client, in the user's zone, knowing the user's own address.
pub struct Mail<'a> {
    pub google: &'a Google,
    pub zone: &'a UserZone,
    pub account: Option<&'a str>,
}

/// Headers asked for when only headers are needed (search results, replies).
const LIST_HEADERS: &[&str] = &["From", "Subject", "Date"];
const REPLY_HEADERS: &[&str] = &["From", "Reply-To", "To", "Cc", "Subject", "Message-ID", "References"];
/// Searches fetch each result's headers; this many at once.
const PARALLEL: usize = 8;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct MessageList {
    messages: Vec<MessageRef>,
    result_size_estimate: u64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MessageRef {
    id: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Thread {
    id: String,
    messages: Vec<Message>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Label {
    id: String,
    name: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Labels {
    labels: Vec<Label>,
}

fn parse<T: for<'de> Deserialize<'de>>(value: Value) -> Result<T, GoogleError> {
    crate::answer::from_google(value)
}

impl Mail<'_> {
    pub async fn search(&self, query: &str, max: usize) -> Outcome {
        let path = ["users", "me", "messages"];
        let request = Request::get(Api::Gmail, &path, need::READ_MAIL)
            .query("q", query)
            .query("maxResults", max.to_string());
        let list: MessageList = parse(self.google.call(request).await?)?;
        let mut messages = Vec::with_capacity(list.messages.len());
        for batch in list.messages.chunks(PARALLEL) {
            let mut fetches = Vec::with_capacity(batch.len());
            for m in batch {
                fetches.push(self.headers(&m.id, LIST_HEADERS));
            }
            for fetched in futures::future::join_all(fetches).await {
                messages.push(fetched?);
            }
        }
        if messages.is_empty() {
            return Ok(Answer::new(
                format!("No messages match {query:?}."),
                json!({ "query": query, "messages": [] }),
            ));
        }
        let mut text =
            format!("{UNTRUSTED_MAIL}\n\n{} message(s) for {query:?}, newest first", messages.len());
        if list.result_size_estimate > messages.len() as u64 {
            text.push_str(&format!(
                " (about {} match; ask for more with max_results)",
                list.result_size_estimate
            ));
        }
        text.push_str(&format!("; dates in {}:\n", self.zone.name));
        let mut rows = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            let from = m.header("From").unwrap_or("(no sender)");
            let subject = m.header("Subject").filter(|s| !s.is_empty()).unwrap_or("(no subject)");
            let date = time::show_millis(&m.internal_date, &self.zone.tz).unwrap_or_default();
            let unread = m.has_label("UNREAD");
            let attachment = m.payload.mime_type.eq_ignore_ascii_case("multipart/mixed");
            let marks = [(unread, "[unread] "), (attachment, "[attachment] ")]
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, mark)| *mark)
                .collect::<String>();
            let snippet = unescape_snippet(&m.snippet);
            text.push_str(&format!(
                "\n{}. {marks}{from} — {subject} — {date}\n   {}\n   id: {} · thread: {}\n",
                i + 1,
                clip(&snippet, 160),
                m.id,
                m.thread_id
            ));
            rows.push(json!({
                "id": m.id, "threadId": m.thread_id, "from": from, "subject": subject, "date": date,
                "snippet": snippet, "unread": unread, "hasAttachment": attachment, "labelIds": m.label_ids,
            }));
        }
        Ok(Answer::new(
            text,
            json!({ "query": query, "resultSizeEstimate": list.result_size_estimate, "messages": rows }),
        ))
    }

    async fn headers(&self, id: &str, names: &[&'static str]) -> Result<Message, GoogleError> {
        let id = check_id("message", id)?;
        let path = ["users", "me", "messages", id.as_str()];
        let mut request = Request::get(Api::Gmail, &path, need::READ_MAIL).query("format", "metadata");
        for name in names {
            request = request.query("metadataHeaders", *name);
        }
        parse(self.google.call(request).await?)
    }

    pub async fn read_message(&self, id: &str, max_chars: usize) -> Outcome {
        let id = check_id("message", id)?;
        let path = ["users", "me", "messages", id.as_str()];
        let request =
            Request::get(Api::Gmail, &path, need::READ_MAIL).query("format", "full").limit(MESSAGE_LIMIT);
        let message: Message = parse(self.google.call(request).await?)?;
        let (text, data) = self.render(&message, max_chars, false);
        Ok(Answer::new(format!("{UNTRUSTED_MAIL}\n\n{text}"), data))
    }

    pub async fn read_thread(&self, id: &str, max_chars_each: usize) -> Outcome {
        let id = check_id("thread", id)?;
        let path = ["users", "me", "threads", id.as_str()];
        let request =
            Request::get(Api::Gmail, &path, need::READ_MAIL).query("format", "full").limit(MESSAGE_LIMIT);
        let thread: Thread = parse(self.google.call(request).await?)?;
        let subject = thread.messages.first().and_then(|m| m.header("Subject")).unwrap_or("(no subject)");
        let mut text = format!(
            "{UNTRUSTED_MAIL}\n\nThread {} — {subject} — {} message(s), oldest first:\n",
            thread.id,
            thread.messages.len()
        );
        let mut rows = Vec::new();
        for (i, message) in thread.messages.iter().enumerate() {
            let (rendered, data) = self.render(message, max_chars_each, true);
            text.push_str(&format!("\n--- message {} of {} ---\n{rendered}\n", i + 1, thread.messages.len()));
            rows.push(data);
        }
        Ok(Answer::new(text, json!({ "threadId": thread.id, "messages": rows })))
    }

    /// A message's headers, attachments and text; `compact` leaves out Cc, labels and ids' labels.
    fn render(&self, m: &Message, max_chars: usize, compact: bool) -> (String, Value) {
        let body = read_body(&m.payload, max_chars);
        let date = time::show_millis(&m.internal_date, &self.zone.tz)
            .map(|d| format!("{d} ({})", self.zone.name))
            .or_else(|| m.header("Date").map(str::to_owned))
            .unwrap_or_default();
        let mut text = String::new();
        let mut line = |name: &str, value: &str| {
            if !value.is_empty() {
                text.push_str(&format!("{name}: {value}\n"));
            }
        };
        line("From", m.header("From").unwrap_or_default());
        line("To", m.header("To").unwrap_or_default());
        if !compact {
            line("Cc", m.header("Cc").unwrap_or_default());
        }
        line("Date", &date);
        line("Subject", m.header("Subject").unwrap_or_default());
        if !compact {
            line("Labels", &m.label_ids.join(", "));
        }
        line("Message id", &format!("{} · thread: {}", m.id, m.thread_id));
        if !body.attachments.is_empty() {
            text.push_str("Attachments:\n");
            for a in &body.attachments {
                text.push_str(&format!("- {} ({}, {})\n", a.name, a.mime_type, size(a.size)));
            }
        }
        text.push('\n');
        if body.text.is_empty() {
            text.push_str("(no readable text in this message)");
        } else {
            text.push_str(&body.text);
        }
        if body.cut {
            text.push_str(&format!(
                "\n\n[The message is longer ({} of text): only the first {} characters are shown. Ask again \
                 with a larger max_chars, or open it in Gmail.]",
                size(body.bytes),
                body.text.chars().count()
            ));
        }
        let attachments: Vec<Value> = body
            .attachments
            .iter()
            .map(|a| json!({ "name": a.name, "mimeType": a.mime_type, "size": a.size }))
            .collect();
        let data = json!({
            "id": m.id, "threadId": m.thread_id, "labelIds": m.label_ids,
            "from": m.header("From"), "to": m.header("To"), "cc": m.header("Cc"),
            "subject": m.header("Subject"), "date": date, "body": body.text, "bodyCut": body.cut,
            "bodyFromHtml": body.from_html, "attachments": attachments,
        });
        (text, data)
    }

    pub async fn list_labels(&self) -> Outcome {
        let labels = self.labels().await?;
        let (user, system): (Vec<&Label>, Vec<&Label>) = labels.iter().partition(|l| l.kind == "user");
        let names = |list: &[&Label]| {
            list.iter()
                .map(|l| if l.id == l.name { l.id.clone() } else { format!("{} (id {})", l.name, l.id) })
                .collect::<Vec<_>>()
        };
        let text = format!(
            "Your labels: {}\nSystem labels: {}",
            if user.is_empty() { "none".into() } else { names(&user).join(", ") },
            names(&system).join(", ")
        );
        let rows: Vec<Value> =
            labels.iter().map(|l| json!({ "id": l.id, "name": l.name, "type": l.kind })).collect();
        Ok(Answer::new(text, json!({ "labels": rows })))
    }

    async fn labels(&self) -> Result<Vec<Label>, GoogleError> {
        let path = ["users", "me", "labels"];
        let labels: Labels = parse(self.google.call(Request::get(Api::Gmail, &path, need::LABELS)).await?)?;
        Ok(labels.labels)
    }

    /// The raw message for `outgoing`, dated now in the user's zone, with a fresh Message-ID.
    fn raw(&self, outgoing: &Outgoing) -> Result<String, GoogleError> {
        let domain = self.account.and_then(|a| a.rsplit_once('@')).map_or("perch.invalid", |(_, d)| d);
        let message_id = format!("<{}@{domain}>", uuid::Uuid::new_v4().simple());
        let date = Zoned::now().with_time_zone(self.zone.tz.clone());
        let text = build(outgoing, &date, &message_id)?;
        Ok(base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE, text.as_bytes()))
    }

    pub async fn create_draft(&self, outgoing: &Outgoing) -> Outcome {
        let raw = self.raw(outgoing)?;
        let path = ["users", "me", "drafts"];
        let request = Request::post(Api::Gmail, &path, json!({ "message": { "raw": raw } }), need::DRAFT);
        let draft = self.google.call(request).await?;
        let id = draft["id"].as_str().unwrap_or_default();
        let message_id = draft["message"]["id"].as_str().unwrap_or_default();
        let text = format!(
            "Saved a draft {:?} to {} (draft id {id}); it is in Drafts, not sent.",
            outgoing.subject,
            recipients(outgoing)
        );
        let mut data = json!({ "draftId": id, "messageId": message_id, "subject": outgoing.subject });
        add_recipients(&mut data, outgoing);
        Ok(Answer::new(text, data))
    }

    pub async fn send(&self, outgoing: &Outgoing, thread_id: Option<&str>) -> Outcome {
        if outgoing.to.is_empty() && outgoing.cc.is_empty() && outgoing.bcc.is_empty() {
            return Err(GoogleError::invalid(
                "the message has no recipients: give at least one address in `to`",
            ));
        }
        let mut body = json!({ "raw": self.raw(outgoing)? });
        if let Some(thread) = thread_id {
            body["threadId"] = json!(thread);
        }
        let path = ["users", "me", "messages", "send"];
        let sent = self.google.call(Request::post(Api::Gmail, &path, body, need::SEND)).await?;
        let id = sent["id"].as_str().unwrap_or_default();
        let thread = sent["threadId"].as_str().unwrap_or_default();
        let text = format!(
            "Sent {:?} to {} (message id {id}, thread {thread}).",
            outgoing.subject,
            recipients(outgoing)
        );
        let mut data = json!({ "id": id, "threadId": thread, "subject": outgoing.subject });
        add_recipients(&mut data, outgoing);
        Ok(Answer::new(text, data))
    }

    /// Answers `message_id` in its thread: To is its Reply-To (else From; for the user's own
    /// message, its To), reply-all adds its other recipients but never the user.
    pub async fn reply(&self, message_id: &str, body: &str, reply_all: bool) -> Outcome {
        let original = self.headers(message_id, REPLY_HEADERS).await?;
        let list = |name: &str| original.header(name).map(Mailbox::parse_list).unwrap_or_default();
        let me = |m: &Mailbox| self.account.is_some_and(|a| m.is(a));
        let from = list("From");
        let mut to = if from.iter().any(me) { list("To") } else { list("Reply-To") };
        if to.is_empty() {
            to = from.clone();
        }
        let mut cc = Vec::new();
        if reply_all {
            for m in list("To").into_iter().chain(list("Cc")).chain(from) {
                if !me(&m) && !to.iter().chain(&cc).any(|t: &Mailbox| t.is(&m.address)) {
                    cc.push(m);
                }
            }
        }
        if to.len() > 1 {
            to.retain(|m| !me(m));
        }
        if to.is_empty() {
            return Err(GoogleError::invalid("the message has no sender address to reply to"));
        }
        let subject = original.header("Subject").unwrap_or_default();
        let subject = if subject.to_ascii_lowercase().starts_with("re:") {
            subject.to_owned()
        } else {
            format!("Re: {subject}")
        };
        let parent = original.header("Message-ID").filter(|id| !id.is_empty()).map(str::to_owned);
        let mut references = message_ids(original.header("References").unwrap_or_default());
        references.extend(parent.clone());
        let outgoing = Outgoing {
            to,
            cc,
            subject,
            body: body.to_owned(),
            in_reply_to: parent,
            references,
            ..Outgoing::default()
        };
        self.send(&outgoing, Some(&original.thread_id)).await
    }

    pub async fn modify_labels(&self, message_id: &str, add: &[String], remove: &[String]) -> Outcome {
        if add.is_empty() && remove.is_empty() {
            return Err(GoogleError::invalid("say which labels to add or remove"));
        }
        let id = check_id("message", message_id)?;
        let labels = self.labels().await?;
        let resolve = |wanted: &[String]| -> Result<Vec<String>, GoogleError> {
            wanted.iter().map(|w| find_label(&labels, w)).collect()
        };
        let body = json!({ "addLabelIds": resolve(add)?, "removeLabelIds": resolve(remove)? });
        let path = ["users", "me", "messages", id.as_str(), "modify"];
        let request = Request::post(Api::Gmail, &path, body, need::MODIFY).repeatable();
        let message: Message = parse(self.google.call(request).await?)?;
        let name_of =
            |id: &String| labels.iter().find(|l| &l.id == id).map_or_else(|| id.clone(), |l| l.name.clone());
        let now: Vec<String> = message.label_ids.iter().map(name_of).collect();
        let text = format!(
            "Message {id} now has the labels: {}.",
            if now.is_empty() { "none".into() } else { now.join(", ") }
        );
        Ok(Answer::new(text, json!({ "id": id, "labelIds": message.label_ids, "labels": now })))
    }

    pub async fn trash(&self, message_id: &str) -> Outcome {
        let id = check_id("message", message_id)?;
        let path = ["users", "me", "messages", id.as_str(), "trash"];
        let request = Request::get(Api::Gmail, &path, need::MODIFY).method(Method::POST);
        let message: Message = parse(self.google.call(request).await?)?;
        let text = format!("Moved message {id} to the trash; it can be restored from Trash for 30 days.");
        Ok(Answer::new(text, json!({ "id": id, "labelIds": message.label_ids })))
    }
}

/// Who a message went to, for the card (a reply's recipients come from the original message,
/// so the user sees them here).
fn add_recipients(data: &mut Value, outgoing: &Outgoing) {
    let names = |list: &[Mailbox]| list.iter().map(ToString::to_string).collect::<Vec<_>>();
    data["to"] = json!(names(&outgoing.to));
    data["cc"] = json!(names(&outgoing.cc));
    data["bcc"] = json!(names(&outgoing.bcc));
}

fn recipients(outgoing: &Outgoing) -> String {
    let all: Vec<String> =
        outgoing.to.iter().chain(&outgoing.cc).chain(&outgoing.bcc).map(ToString::to_string).collect();
    if all.is_empty() { "no one yet".into() } else { all.join(", ") }
}

/// A label by id, or by name ignoring case.
fn find_label(labels: &[Label], wanted: &str) -> Result<String, GoogleError> {
    let wanted = wanted.trim();
    labels
        .iter()
        .find(|l| l.id == wanted)
        .or_else(|| labels.iter().find(|l| l.name.eq_ignore_ascii_case(wanted)))
        .map(|l| l.id.clone())
        .ok_or_else(|| {
            let names: Vec<&str> = labels.iter().map(|l| l.name.as_str()).collect();
            GoogleError::invalid(format!(
                "there is no label {wanted:?}; the labels are: {}",
                names.join(", ")
            ))
        })
}

/// The `<id>` tokens of a References header, however they are spaced (RFC 5322 allows none
/// between them, and folded headers bring line breaks).
fn message_ids(header: &str) -> Vec<String> {
    header
        .split('<')
        .skip(1)
        .filter_map(|part| part.split_once('>').map(|(id, _)| id.trim()))
        .filter(|id| !id.is_empty())
        .map(|id| format!("<{id}>"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_read_however_they_are_spaced() {
        assert_eq!(message_ids("<a@b><c@d>\r\n <e@f>  junk"), ["<a@b>", "<c@d>", "<e@f>"]);
        assert!(message_ids("").is_empty());
    }
}
