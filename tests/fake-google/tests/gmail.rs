//! Gmail: the seeded mailbox in Gmail's shapes, search, scopes, labels, and the send parser's
//! rules (recipients, RFC 2822 form, encoded words, threading).

mod common;

use common::*;
use perch_fake_google::{Failure, FakeGoogle, USER_EMAIL};
use serde_json::{Value, json};

const LISBON: &str = "18f3a0c2d4e60001";
const ALTERNATIVE: &str = "18f3a0c2d4e60010";
const INVOICE: &str = "18f3a0c2d4e60011";
const HTML_ONLY: &str = "18f3a0c2d4e60012";
const MUENCHEN: &str = "18f3a0c2d4e60013";
const BIG: &str = "18f3a0c2d4e60014";

async fn ids(fake: &FakeGoogle, token: &str, query: &str) -> Vec<String> {
    let (status, body) = get(fake, token, &format!("/gmail/v1/users/me/messages?{query}")).await;
    assert_eq!(status, 200, "{body}");
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn header<'a>(part: &'a Value, name: &str) -> Option<&'a str> {
    part["headers"].as_array()?.iter().find(|h| h["name"] == name)?["value"].as_str()
}

#[tokio::test]
async fn listing_and_search_follow_gmails_rules() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&[GMAIL_READONLY]);
    let all = ids(&fake, &token, "").await;
    assert!(all.len() >= 10, "{all:?}");
    assert!(
        !all.iter().any(|id| id == "18f3a0c2d4e60030" || id == "18f3a0c2d4e60031"),
        "no spam or trash by default"
    );
    assert_eq!(all[0], ALTERNATIVE, "newest first");
    assert!(ids(&fake, &token, "includeSpamTrash=true").await.len() == all.len() + 2);

    let (_, page) = get(&fake, &token, "/gmail/v1/users/me/messages?maxResults=3").await;
    assert_eq!(page["messages"].as_array().map(Vec::len), Some(3));
    assert_eq!(page["messages"][0]["threadId"], ALTERNATIVE);
    let next = page["nextPageToken"].as_str().expect("more pages");
    let rest = ids(&fake, &token, &format!("maxResults=500&pageToken={next}")).await;
    assert_eq!(rest.len(), all.len() - 3);

    let (_, none) = get(&fake, &token, "/gmail/v1/users/me/messages?q=from:nobody@nowhere.example").await;
    assert_eq!(none, json!({ "resultSizeEstimate": 0 }), "no messages key at all when empty");

    let search = |q: &str| format!("q={}", encode(&[("x", q)]).trim_start_matches("x="));
    assert_eq!(ids(&fake, &token, &search("has:attachment")).await, [INVOICE, BIG]);
    assert_eq!(ids(&fake, &token, &search("label:receipts")).await, [INVOICE]);
    assert_eq!(ids(&fake, &token, &search("from:ana@example.org")).await.len(), 2);
    assert_eq!(
        ids(&fake, &token, &search("subject:\"trip to lisbon\" is:unread")).await,
        ["18f3a0c2d4e60003"]
    );
    assert_eq!(ids(&fake, &token, &search("newer_than:4d is:unread")).await, [ALTERNATIVE, HTML_ONLY]);
    assert_eq!(ids(&fake, &token, &search("invoice")).await, [INVOICE]);
    assert_eq!(ids(&fake, &token, &search("München")).await, [MUENCHEN]);
    assert_eq!(ids(&fake, &token, &search("in:trash")).await, ["18f3a0c2d4e60031"]);
    assert_eq!(ids(&fake, &token, "labelIds=INBOX&labelIds=STARRED").await, [MUENCHEN]);
    let unread_not_promotions = ids(&fake, &token, &search("is:unread -category:promotions")).await;
    assert!(
        !unread_not_promotions.contains(&HTML_ONLY.to_owned())
            && unread_not_promotions.contains(&ALTERNATIVE.to_owned())
    );
}

#[tokio::test]
async fn messages_come_in_gmails_shapes() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&["https://mail.google.com/"]);

    let (status, m) = get(&fake, &token, &format!("/gmail/v1/users/me/messages/{ALTERNATIVE}")).await;
    assert_eq!(status, 200);
    assert!(m["internalDate"].is_string() && m["historyId"].is_string() && m["sizeEstimate"].is_u64());
    assert!(m["labelIds"].as_array().expect("labels").contains(&json!("UNREAD")));
    assert_eq!(m["payload"]["mimeType"], "multipart/alternative");
    assert_eq!(m["payload"]["partId"], "");
    assert_eq!(m["payload"]["body"]["size"], 0);
    assert_eq!(header(&m["payload"], "Subject"), Some("Compiler meeting notes"));
    let parts = m["payload"]["parts"].as_array().expect("parts");
    assert_eq!((parts[0]["partId"].as_str(), parts[0]["mimeType"].as_str()), (Some("0"), Some("text/plain")));
    assert_eq!(parts[1]["mimeType"], "text/html");
    let text = String::from_utf8(unb64url(parts[0]["body"]["data"].as_str().expect("data"))).expect("utf-8");
    assert!(text.starts_with("Notes from today:"));
    assert_eq!(parts[0]["body"]["size"], text.len());
    assert!(m["snippet"].as_str().expect("snippet").starts_with("Notes from today:"));

    // A PDF attachment: an attachmentId and a size, the bytes from attachments.get.
    let (_, m) = get(&fake, &token, &format!("/gmail/v1/users/me/messages/{INVOICE}")).await;
    let pdf = &m["payload"]["parts"][1];
    assert_eq!(
        (pdf["filename"].as_str(), pdf["mimeType"].as_str()),
        (Some("invoice-2026-03.pdf"), Some("application/pdf"))
    );
    assert!(pdf["body"]["data"].is_null());
    let attachment = pdf["body"]["attachmentId"].as_str().expect("attachmentId");
    let (status, a) =
        get(&fake, &token, &format!("/gmail/v1/users/me/messages/{INVOICE}/attachments/{attachment}")).await;
    assert_eq!(status, 200);
    let bytes = unb64url(a["data"].as_str().expect("data"));
    assert!(bytes.starts_with(b"%PDF-1.4"));
    assert_eq!(pdf["body"]["size"], bytes.len());

    // Non-ASCII: the header decoded, the quoted-printable body decoded before base64url.
    let (_, m) = get(&fake, &token, &format!("/gmail/v1/users/me/messages/{MUENCHEN}")).await;
    assert_eq!(header(&m["payload"], "Subject"), Some("Grüße aus München – Café am Freitag? ☕"));
    assert_eq!(header(&m["payload"], "From"), Some("José Müller <jose@example.de>"));
    let text = unb64url(m["payload"]["parts"][0]["body"]["data"].as_str().expect("data"));
    assert!(
        String::from_utf8(text)
            .expect("utf-8")
            .contains("Grüße aus München! Treffen wir uns am Freitag im Café? ☕")
    );
    let html = unb64url(m["payload"]["parts"][1]["body"]["data"].as_str().expect("data"));
    assert!(String::from_utf8(html).expect("utf-8").contains("<b>Café</b>"));

    // HTML only, with a script and a tracking pixel, delivered as is.
    let (_, m) = get(&fake, &token, &format!("/gmail/v1/users/me/messages/{HTML_ONLY}")).await;
    assert_eq!(m["payload"]["mimeType"], "text/html");
    let html =
        String::from_utf8(unb64url(m["payload"]["body"]["data"].as_str().expect("data"))).expect("utf-8");
    assert!(html.contains("<script>") && html.contains("open.gif"));
    assert!(!m["snippet"].as_str().expect("snippet").contains("document.cookie"));

    let (_, m) = get(&fake, &token, &format!("/gmail/v1/users/me/messages/{BIG}?format=minimal")).await;
    assert!(m["sizeEstimate"].as_u64().expect("size") > 5_000_000);
    assert!(m.get("payload").is_none());

    let (_, m) = get(&fake, &token, &format!("/gmail/v1/users/me/messages/{ALTERNATIVE}?format=metadata&metadataHeaders=Subject&metadataHeaders=From")).await;
    let names: Vec<&str> = m["payload"]["headers"]
        .as_array()
        .expect("headers")
        .iter()
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert_eq!(names, ["From", "Subject"]);
    assert!(m["payload"]["parts"].is_null());

    let (_, m) = get(&fake, &token, &format!("/gmail/v1/users/me/messages/{ALTERNATIVE}?format=raw")).await;
    assert!(
        String::from_utf8(unb64url(m["raw"].as_str().expect("raw")))
            .expect("utf-8")
            .contains("\r\nSubject: Compiler meeting notes\r\n")
    );

    let (status, body) = get(&fake, &token, "/gmail/v1/users/me/messages/ffffffffffffffff").await;
    assert_eq!((status, body["error"]["status"].as_str()), (404, Some("NOT_FOUND")));

    let (_, thread) =
        get(&fake, &token, &format!("/gmail/v1/users/me/threads/{LISBON}?format=metadata")).await;
    let messages = thread["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["labelIds"], json!(["SENT"]));
    assert_eq!(header(&messages[2]["payload"], "Subject"), Some("Re: Trip to Lisbon"));

    let (_, labels) = get(&fake, &token, "/gmail/v1/users/me/labels").await;
    let receipts =
        labels["labels"].as_array().expect("labels").iter().find(|l| l["id"] == "Label_1").expect("Label_1");
    assert_eq!(receipts["name"], "Receipts");
    assert_eq!(receipts["type"], "user");
    assert_eq!(receipts["labelListVisibility"], "labelShow");
}

#[tokio::test]
async fn scopes_are_checked_per_method() {
    let fake = FakeGoogle::start().await.expect("start");
    let calendar_only = fake.mint_access_token(&[CALENDAR]);
    let response = client()
        .get(format!("{}/gmail/v1/users/me/messages", fake.base_url()))
        .bearer_auth(&calendar_only)
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 403);
    assert!(response.headers().get("www-authenticate").is_some());
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["error"]["message"], "Request had insufficient authentication scopes.");
    assert_eq!(body["error"]["errors"][0]["reason"], "insufficientPermissions");
    assert_eq!(body["error"]["status"], "PERMISSION_DENIED");
    assert_eq!(body["error"]["details"][0]["reason"], "ACCESS_TOKEN_SCOPE_INSUFFICIENT");

    let metadata = fake.mint_access_token(&[GMAIL_METADATA]);
    let path = format!("/gmail/v1/users/me/messages/{ALTERNATIVE}");
    assert_eq!(get(&fake, &metadata, &path).await.0, 403, "metadata scope: no FULL format");
    assert_eq!(get(&fake, &metadata, &format!("{path}?format=metadata")).await.0, 200);
    assert_eq!(
        get(&fake, &metadata, "/gmail/v1/users/me/messages?q=invoice").await.0,
        403,
        "metadata scope: no q"
    );
    assert_eq!(get(&fake, &metadata, "/gmail/v1/users/me/messages").await.0, 200);

    let readonly = fake.mint_access_token(&[GMAIL_READONLY]);
    let (status, _) = send_json(
        &fake,
        "POST",
        &readonly,
        &format!("{path}/modify"),
        &json!({ "removeLabelIds": ["UNREAD"] }),
    )
    .await;
    assert_eq!(status, 403, "readonly cannot modify");
    let send_only = fake.mint_access_token(&[GMAIL_SEND]);
    assert_eq!(get(&fake, &send_only, &path).await.0, 403, "gmail.send cannot read");

    let response = client().get(format!("{}{path}", fake.base_url())).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(get(&fake, "ya29.made-up", &path).await.0, 401);
}

#[tokio::test]
async fn labels_change_and_trash_hides() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&[GMAIL_MODIFY]);
    let path = format!("/gmail/v1/users/me/messages/{ALTERNATIVE}");
    let (status, body) = send_json(
        &fake,
        "POST",
        &token,
        &format!("{path}/modify"),
        &json!({ "addLabelIds": ["STARRED", "Label_2"], "removeLabelIds": ["UNREAD"] }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], ALTERNATIVE);
    let labels = fake.message_labels(ALTERNATIVE).expect("labels");
    assert!(labels.contains(&"STARRED".to_owned()) && labels.contains(&"Label_2".to_owned()));
    assert!(!labels.contains(&"UNREAD".to_owned()));
    let (status, body) =
        send_json(&fake, "POST", &token, &format!("{path}/modify"), &json!({ "addLabelIds": ["Label_99"] }))
            .await;
    assert_eq!((status, body["error"]["message"].as_str()), (400, Some("Invalid label: Label_99")));

    let (status, _) = send_json(&fake, "POST", &token, &format!("{path}/trash"), &json!({})).await;
    assert_eq!(status, 200);
    assert!(fake.message_labels(ALTERNATIVE).expect("labels").contains(&"TRASH".to_owned()));
    assert!(!ids(&fake, &token, "").await.contains(&ALTERNATIVE.to_owned()));
}

fn reply(subject: &str, in_reply_to: Option<&str>) -> String {
    let mut raw = format!("From: {USER_EMAIL}\r\nTo: Ana Lima <ana@example.org>\r\nSubject: {subject}\r\n");
    if let Some(id) = in_reply_to {
        raw.push_str(&format!("In-Reply-To: {id}\r\nReferences: <lisbon-1@example.org> {id}\r\n"));
    }
    raw.push_str("Content-Type: text/plain; charset=UTF-8\r\n\r\nSee you there.\r\n");
    raw
}

async fn send(fake: &FakeGoogle, token: &str, raw: &str, thread: Option<&str>) -> (u16, Value) {
    let mut body = json!({ "raw": b64url(raw) });
    if let Some(thread) = thread {
        body["threadId"] = json!(thread);
    }
    send_json(fake, "POST", token, "/gmail/v1/users/me/messages/send", &body).await
}

#[tokio::test]
async fn send_threads_only_by_gmails_rule() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&[GMAIL_SEND]);
    let (status, body) =
        send(&fake, &token, &reply("Re: Trip to Lisbon", Some("<lisbon-3@example.org>")), Some(LISBON)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!((body["threadId"].as_str(), body["labelIds"].clone()), (Some(LISBON), json!(["SENT"])));
    let sent = fake.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].thread_id, LISBON);
    assert!(sent[0].raw.starts_with("From: ada@example.com\r\n"));

    let (_, other_subject) =
        send(&fake, &token, &reply("Hotels", Some("<lisbon-3@example.org>")), Some(LISBON)).await;
    assert_ne!(other_subject["threadId"], LISBON, "a different subject starts a new thread");
    let (_, no_reference) = send(&fake, &token, &reply("Re: Trip to Lisbon", None), Some(LISBON)).await;
    assert_ne!(no_reference["threadId"], LISBON, "no In-Reply-To/References: a new thread");
    let (_, no_thread) =
        send(&fake, &token, &reply("Re: Trip to Lisbon", Some("<lisbon-3@example.org>")), None).await;
    assert_ne!(no_thread["threadId"], LISBON, "no threadId: a new thread");
    let (status, _) = send(
        &fake,
        &token,
        &reply("Re: Trip to Lisbon", Some("<lisbon-3@example.org>")),
        Some("abcdef0123456789"),
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn send_checks_the_message() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&["https://mail.google.com/"]);
    let (status, body) =
        send(&fake, &token, "From: ada@example.com\r\nSubject: hi\r\n\r\nno one\r\n", None).await;
    assert_eq!((status, body["error"]["message"].as_str()), (400, Some("Recipient address required")));
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    let (status, body) = send(&fake, &token, "To: not an address\r\nSubject: hi\r\n\r\nx\r\n", None).await;
    assert_eq!((status, body["error"]["message"].as_str()), (400, Some("Invalid To header")));
    let (status, _) = send(&fake, &token, "To: ana@example.org\nSubject: hi\n\nbare LF\n", None).await;
    assert_eq!(status, 400, "lines end in CRLF");
    let (status, _) = send(&fake, &token, "To: ana@example.org\r\nSubject: Grüße\r\n\r\nx\r\n", None).await;
    assert_eq!(status, 400, "8-bit header text must be an encoded word");
    let (status, body) =
        send_json(&fake, "POST", &token, "/gmail/v1/users/me/messages/send", &json!({})).await;
    assert_eq!(status, 400);
    assert!(body["error"]["message"].as_str().expect("message").contains("'raw' RFC822 payload"));

    // An encoded-word subject, decoded when read back.
    let raw = "To: ana@example.org\r\nSubject: =?UTF-8?B?R3LDvMOfZSBhdXMgTcO8bmNoZW4=?=\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nBis bald, Café?\r\n";
    let (status, body) = send(&fake, &token, raw, None).await;
    assert_eq!(status, 200, "{body}");
    let id = body["id"].as_str().expect("id");
    let (_, m) = get(&fake, &token, &format!("/gmail/v1/users/me/messages/{id}")).await;
    assert_eq!(header(&m["payload"], "Subject"), Some("Grüße aus München"));
    assert!(header(&m["payload"], "Message-ID").is_some(), "Gmail adds a Message-ID");
    assert_eq!(fake.sent()[0].raw, raw);
    assert_eq!(m["labelIds"], json!(["SENT"]));

    // The upload endpoint takes the message as is.
    let response = client()
        .post(format!("{}/upload/gmail/v1/users/me/messages/send?uploadType=media", fake.base_url()))
        .bearer_auth(&token)
        .header("Content-Type", "message/rfc822")
        .body("To: ana@example.org\r\nSubject: upload\r\n\r\nhello\r\n")
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 200);
    let response = client()
        .post(format!("{}/upload/gmail/v1/users/me/messages/send?uploadType=media", fake.base_url()))
        .bearer_auth(&token)
        .header("Content-Type", "text/plain")
        .body("To: ana@example.org\r\n\r\nhello\r\n")
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 400);
    assert_eq!(fake.sent().len(), 2);
}

#[tokio::test]
async fn drafts_need_compose_and_no_recipients() {
    let fake = FakeGoogle::start().await.expect("start");
    let send_only = fake.mint_access_token(&[GMAIL_SEND]);
    let draft = json!({ "message": { "raw": b64url("Subject: later\r\n\r\nthoughts\r\n") } });
    assert_eq!(send_json(&fake, "POST", &send_only, "/gmail/v1/users/me/drafts", &draft).await.0, 403);
    let token = fake.mint_access_token(&["https://www.googleapis.com/auth/gmail.compose"]);
    let (status, body) = send_json(&fake, "POST", &token, "/gmail/v1/users/me/drafts", &draft).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["id"].as_str().expect("id").starts_with('r'));
    assert_eq!(body["message"]["labelIds"], json!(["DRAFT"]));
    let drafts = fake.drafts();
    assert_eq!(drafts.len(), 1);
    assert_eq!(fake.message_labels(&drafts[0].id), Some(vec!["DRAFT".to_owned()]));
}

#[tokio::test]
async fn misbehaviour_on_demand() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&[GMAIL_READONLY]);
    fake.fail_next("/gmail/v1/users/me/messages", 1, Failure::RateLimited { retry_after_secs: 7 });
    fake.fail_next("/gmail/v1/users/me/labels", 1, Failure::ServerError);
    let response = client()
        .get(format!("{}/gmail/v1/users/me/messages", fake.base_url()))
        .bearer_auth(&token)
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers().get("retry-after").and_then(|h| h.to_str().ok()), Some("7"));
    let body: Value = response.json().await.expect("json");
    assert_eq!(
        (body["error"]["status"].as_str(), body["error"]["errors"][0]["reason"].as_str()),
        (Some("RESOURCE_EXHAUSTED"), Some("rateLimitExceeded"))
    );
    assert_eq!(get(&fake, &token, "/gmail/v1/users/me/messages").await.0, 200, "only the next one");
    let (status, body) = get(&fake, &token, "/gmail/v1/users/me/labels").await;
    assert_eq!((status, body["error"]["errors"][0]["reason"].as_str()), (500, Some("backendError")));

    fake.fail_next("/gmail/", 1, Failure::Malformed);
    let response = client()
        .get(format!("{}/gmail/v1/users/me/labels", fake.base_url()))
        .bearer_auth(&token)
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 200);
    assert!(serde_json::from_slice::<Value>(&response.bytes().await.expect("body")).is_err());

    fake.fail_next("/gmail/", 1, Failure::Stall);
    let stalled = client()
        .get(format!("{}/gmail/v1/users/me/labels", fake.base_url()))
        .bearer_auth(&token)
        .timeout(std::time::Duration::from_millis(300))
        .send()
        .await;
    assert!(stalled.is_err_and(|e| e.is_timeout()));

    let recorded = fake.api_requests();
    assert_eq!(recorded.len(), 5);
    assert_eq!(recorded[0].authorization.as_deref(), Some(format!("Bearer {token}").as_str()));
    assert_eq!(recorded[0].path_and_query, "/gmail/v1/users/me/messages");
}
