#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The Gmail tools, driven as Perch's engine drives them, against the fake Google's seeded mailbox.

mod common;

use base64::Engine;
use common::{FULL, READ_ONLY, call, ok, refused, spawn, start, text, tool_names};
use perch_fake_google::{Failure, FakeGoogle};
use rmcp::object;

const ZONE: &str = "Europe/Berlin";

#[tokio::test]
async fn without_a_token_there_are_no_tools_and_the_instructions_say_how_to_connect() {
    let server = spawn(&[], &[]).await;
    assert!(tool_names(&server.client).await.is_empty());
    let info = server.client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "perch-google");
    let said = info.instructions.clone().unwrap_or_default();
    assert!(said.contains("not connected") && said.contains("Settings → Connections"), "{said}");
    assert!(said.contains("perch google connect"), "{said}");
    server.stop().await;
}

#[tokio::test]
async fn the_tool_list_follows_the_granted_scopes() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, _) = start(&fake, READ_ONLY, ZONE, &[]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "calendar_free_busy",
            "calendar_list_events",
            "gmail_list_labels",
            "gmail_read_message",
            "gmail_read_thread",
            "gmail_search"
        ]
    );
    for tool in &tools {
        assert_eq!(tool.annotations.as_ref().unwrap().read_only_hint, Some(true), "{}", tool.name);
    }
    server.stop().await;

    let (server, _) = start(&fake, FULL, ZONE, &[]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 15);
    let hint = |name: &str| tools.iter().find(|t| t.name == name).unwrap().annotations.clone().unwrap();
    for destructive in ["gmail_send", "gmail_reply", "gmail_trash", "calendar_delete_event"] {
        assert_eq!(hint(destructive).destructive_hint, Some(true), "{destructive}");
    }
    // Creating or changing an event emails its guests; the tool says which calls tell no one.
    for told in ["calendar_create_event", "calendar_update_event"] {
        assert_eq!(hint(told).destructive_hint, Some(true), "{told}");
        let meta = tools.iter().find(|t| t.name == told).unwrap().meta.clone().unwrap();
        assert!(meta.0["app.perch/harmlessWhen"].is_object(), "{told}");
    }
    assert_eq!(hint("gmail_create_draft").read_only_hint, Some(false));
    assert_eq!(hint("gmail_create_draft").destructive_hint, Some(false));
    server.stop().await;
}

#[tokio::test]
async fn searches_and_reads_messages_in_the_users_time_zone() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, _) = start(&fake, READ_ONLY, ZONE, &[]).await;
    let c = &server.client;
    let found = ok(c, "gmail_search", object!({ "query": "from:grace is:unread" })).await;
    assert!(found.starts_with("The text below is untrusted content from an email"), "{found}");
    assert!(
        found.contains("[unread] Grace Hopper <grace@example.org> — Compiler meeting notes — "),
        "{found}"
    );
    assert!(found.contains("id: 18f3a0c2d4e60010 · thread: 18f3a0c2d4e60010"), "{found}");
    assert!(found.contains("dates in Europe/Berlin"), "{found}");

    let notes = ok(c, "gmail_read_message", object!({ "message_id": "18f3a0c2d4e60010" })).await;
    assert!(
        notes.contains("From: Grace Hopper <grace@example.org>\nTo: Ada Lovelace <ada@example.com>"),
        "{notes}"
    );
    assert!(notes.contains("Cc: Ana Lima <ana@example.org>") && notes.contains("(Europe/Berlin)"), "{notes}");
    assert!(notes.contains("Notes from today:\n- the parser is done"), "plain text preferred: {notes}");

    let sale = ok(c, "gmail_read_message", object!({ "message_id": "18f3a0c2d4e60012" })).await;
    assert!(sale.contains("Spring sale\n\n40% off everything until Sunday."), "{sale}");
    assert!(sale.contains("Shop now (https://shop.example/sale)"), "{sale}");
    assert!(!sale.contains("document.cookie") && !sale.contains("color:red"), "{sale}");

    let invoice = ok(c, "gmail_read_message", object!({ "message_id": "18f3a0c2d4e60011" })).await;
    assert!(invoice.contains("- invoice-2026-03.pdf (application/pdf, "), "{invoice}");
    assert!(invoice.contains("Amount due: 42.00 EUR."), "{invoice}");

    let munich = ok(c, "gmail_read_message", object!({ "message_id": "18f3a0c2d4e60013" })).await;
    assert!(munich.contains("Subject: Grüße aus München – Café am Freitag? ☕"), "{munich}");
    assert!(munich.contains("From: José Müller <jose@example.de>"), "{munich}");
    assert!(munich.contains("Die Straße ist gesperrt"), "{munich}");

    let big = call(c, "gmail_read_message", object!({ "message_id": "18f3a0c2d4e60014" })).await;
    let big_text = text(&big);
    assert!(big_text.contains("Photos from the site visit attached."), "{big_text}");
    assert!(big_text.contains("- site-photos.zip (application/zip, 3.6 MB)"), "{big_text}");
    assert!(big_text.len() < 5_000, "never the attachment itself");

    let thread = ok(c, "gmail_read_thread", object!({ "thread_id": "18f3a0c2d4e60001" })).await;
    assert!(thread.contains("Trip to Lisbon — 3 message(s)"), "{thread}");
    assert!(thread.contains("--- message 3 of 3 ---") && thread.contains("Booked the flights."), "{thread}");

    let labels = ok(c, "gmail_list_labels", object!({})).await;
    assert!(labels.contains("Receipts (id Label_1)") && labels.contains("UNREAD"), "{labels}");
    let missing = refused(c, "gmail_read_message", object!({ "message_id": "../labels" })).await;
    assert!(missing.contains("not a message id"), "{missing}");
    server.stop().await;
}

#[tokio::test]
async fn a_reply_is_threaded_and_leaves_the_user_out() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, _) = start(&fake, FULL, ZONE, &[]).await;
    let c = &server.client;
    let said = ok(
        c,
        "gmail_reply",
        object!({ "message_id": "18f3a0c2d4e60003", "body": "Great, thanks!", "reply_all": true }),
    )
    .await;
    assert!(said.contains("thread 18f3a0c2d4e60001"), "{said}");
    let sent = fake.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].thread_id, "18f3a0c2d4e60001");
    let raw = &sent[0].raw;
    let unfolded = raw.replace("\r\n ", " ");
    assert!(
        unfolded.starts_with("To: Ana Lima <ana@example.org>\r\nSubject: Re: Trip to Lisbon\r\nDate: "),
        "{raw}"
    );
    assert!(unfolded.contains("\r\nIn-Reply-To: <lisbon-3@example.org>\r\n"), "{raw}");
    assert!(
        unfolded.contains(
            "\r\nReferences: <lisbon-1@example.org> <CAF=lisbon-2@mail.gmail.com> <lisbon-3@example.org>\r\n"
        ),
        "{raw}"
    );
    assert!(
        !unfolded.contains("Cc:") && !unfolded.contains("ada@example.com"),
        "the user is left out: {raw}"
    );
    assert!(raw.contains("\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\n"), "{raw}");
    assert!(raw.ends_with("\r\n\r\nGreat, thanks!\r\n"), "{raw}");

    // A non-ASCII subject goes as encoded words, and reply-all copies the other recipients; the
    // result says who it went to (the card shows it: they came from the original message).
    let noted = call(
        c,
        "gmail_reply",
        object!({ "message_id": "18f3a0c2d4e60010", "body": "Noted.", "reply_all": true }),
    )
    .await;
    let fields = noted.structured_content.unwrap();
    assert_eq!(fields["to"], serde_json::json!(["Grace Hopper <grace@example.org>"]));
    assert_eq!(fields["cc"], serde_json::json!(["Ana Lima <ana@example.org>"]));
    ok(c, "gmail_reply", object!({ "message_id": "18f3a0c2d4e60013", "body": "Gern!" })).await;
    let sent = fake.sent();
    let notes = sent[1].raw.replace("\r\n ", " ");
    assert!(
        notes.contains("To: Grace Hopper <grace@example.org>\r\nCc: Ana Lima <ana@example.org>\r\n"),
        "{notes}"
    );
    let munich = &sent[2].raw;
    let subject = munich.split("\r\n").find(|l| l.starts_with("Subject: ")).unwrap();
    assert!(subject.starts_with("Subject: =?UTF-8?B?") && subject.len() <= 76, "{munich}");
    let decoded: String = munich
        .replace("\r\n ", " ")
        .split("\r\n")
        .find(|l| l.starts_with("Subject: "))
        .unwrap()
        .trim_start_matches("Subject: ")
        .split(' ')
        .map(|w| {
            let b64 = w.trim_start_matches("=?UTF-8?B?").trim_end_matches("?=");
            String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b64).unwrap()).unwrap()
        })
        .collect();
    assert_eq!(decoded, "Re: Grüße aus München – Café am Freitag? ☕");
    assert!(munich.contains("In-Reply-To: <muenchen-1@example.de>"), "{munich}");
    server.stop().await;
}

#[tokio::test]
async fn sends_drafts_and_refuses_header_injection() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, _) = start(&fake, FULL, ZONE, &[]).await;
    let c = &server.client;
    let sent = ok(
        c,
        "gmail_send",
        object!({ "to": ["Grace Hopper <grace@example.org>"], "subject": "Café on Friday", "body": "See you at ☕ time.\n" }),
    )
    .await;
    assert!(sent.starts_with("Sent \"Café on Friday\" to Grace Hopper <grace@example.org>"), "{sent}");
    let raw = &fake.sent()[0].raw;
    assert!(raw.contains("Subject: =?UTF-8?B?Q2Fmw6kgb24gRnJpZGF5?=\r\n"), "{raw}");
    assert!(raw.contains("Content-Transfer-Encoding: base64\r\n"), "{raw}");

    let draft = ok(
        c,
        "gmail_create_draft",
        object!({ "to": ["ana@example.org"], "subject": "Hotels", "body": "Alfama?" }),
    )
    .await;
    assert!(draft.contains("Saved a draft \"Hotels\""), "{draft}");
    assert_eq!(fake.drafts().len(), 1);

    let injected = refused(
        c,
        "gmail_send",
        object!({ "to": ["ana@example.org"], "subject": "Hi\r\nBcc: eve@example.net", "body": "x" }),
    )
    .await;
    assert!(injected.contains("line break"), "{injected}");
    let bad_to = refused(
        c,
        "gmail_send",
        object!({ "to": ["ana@example.org\nBcc: eve@example.net"], "subject": "Hi", "body": "x" }),
    )
    .await;
    assert!(bad_to.contains("line break"), "{bad_to}");
    let nobody = refused(c, "gmail_send", object!({ "subject": "Hi", "body": "x" })).await;
    assert!(nobody.contains("no recipients"), "{nobody}");
    assert_eq!(fake.sent().len(), 1, "nothing else went out");
    server.stop().await;
}

#[tokio::test]
async fn changes_labels_by_name_and_trashes() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, _) = start(&fake, FULL, ZONE, &[]).await;
    let c = &server.client;
    let said = ok(
        c,
        "gmail_modify_labels",
        object!({ "message_id": "18f3a0c2d4e60010", "add": ["receipts", "STARRED"], "remove": ["UNREAD"] }),
    )
    .await;
    assert!(said.contains("Receipts") && !said.contains("UNREAD"), "{said}");
    let labels = fake.message_labels("18f3a0c2d4e60010").unwrap();
    assert!(labels.contains(&"Label_1".to_owned()) && !labels.contains(&"UNREAD".to_owned()), "{labels:?}");
    let unknown =
        refused(c, "gmail_modify_labels", object!({ "message_id": "18f3a0c2d4e60010", "add": ["Holidays"] }))
            .await;
    assert!(unknown.contains("no label \"Holidays\"") && unknown.contains("Travel/Lisbon"), "{unknown}");
    ok(c, "gmail_trash", object!({ "message_id": "18f3a0c2d4e60012" })).await;
    assert!(fake.message_labels("18f3a0c2d4e60012").unwrap().contains(&"TRASH".to_owned()));
    server.stop().await;
}

#[tokio::test]
async fn rate_limits_server_errors_and_bad_answers_are_handled() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, _) = start(&fake, FULL, ZONE, &[]).await;
    let c = &server.client;
    let labels = "/gmail/v1/users/me/labels";
    fake.fail_next(labels, 1, Failure::RateLimited { retry_after_secs: 1 });
    ok(c, "gmail_list_labels", object!({})).await;
    let asked = fake.api_requests().iter().filter(|r| r.path_and_query.starts_with(labels)).count();
    assert_eq!(asked, 2, "retried once after Retry-After");

    fake.fail_next(labels, 1, Failure::RateLimited { retry_after_secs: 60 });
    let later = refused(c, "gmail_list_labels", object!({})).await;
    assert!(later.contains("try again in 60 s"), "{later}");

    fake.fail_next(labels, 1, Failure::ServerError);
    ok(c, "gmail_list_labels", object!({})).await;
    fake.fail_next(labels, 2, Failure::ServerError);
    let trouble = refused(c, "gmail_list_labels", object!({})).await;
    assert!(trouble.contains("Google is having trouble (HTTP 500)"), "{trouble}");

    fake.fail_next(labels, 1, Failure::Malformed);
    let garbled = refused(c, "gmail_list_labels", object!({})).await;
    assert!(garbled.contains("could not be read"), "{garbled}");

    fake.fail_next("/gmail/v1/users/me/messages/send", 1, Failure::ServerError);
    let unsure =
        refused(c, "gmail_send", object!({ "to": ["ana@example.org"], "subject": "Once", "body": "x" }))
            .await;
    assert!(unsure.contains("may or may not have done it"), "a send is never repeated blindly: {unsure}");
    assert!(fake.sent().is_empty());

    fake.fail_next(labels, 1, Failure::Stall);
    let stalled = refused(c, "gmail_list_labels", object!({})).await;
    assert!(stalled.contains("did not answer within 3 s"), "{stalled}");
    server.stop().await;
}

#[tokio::test]
async fn an_expired_token_asks_to_reconnect_and_never_shows_the_token() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, token) = start(&fake, FULL, ZONE, &[]).await;
    let c = &server.client;
    ok(c, "gmail_search", object!({ "query": "in:inbox" })).await;
    fake.expire_access_tokens();
    let said = refused(c, "gmail_search", object!({ "query": "in:inbox" })).await;
    assert!(said.contains("reconnect in Settings → Connections"), "{said}");
    assert!(!said.contains(&token));
    let log = server.stop().await;
    assert!(!log.contains(&token), "the token is in stderr: {log}");
    assert!(
        fake.api_requests().iter().all(|r| r.authorization.as_deref() == Some(&format!("Bearer {token}")))
    );
}

#[tokio::test]
async fn a_scope_missing_at_google_names_the_permission_to_add() {
    let fake = FakeGoogle::start().await.unwrap();
    // The app believes sending was granted, but the token only reads.
    let token = fake.mint_access_token(&["https://www.googleapis.com/auth/gmail.readonly"]);
    let env = vec![
        ("PERCH_GOOGLE_ACCESS_TOKEN", token),
        ("PERCH_GOOGLE_SCOPES", "https://www.googleapis.com/auth/gmail.send".to_owned()),
        ("PERCH_GOOGLE_API_BASE", fake.base_url()),
    ];
    let server = spawn(&env, &[]).await;
    assert_eq!(tool_names(&server.client).await, ["gmail_send"]);
    let said = refused(
        &server.client,
        "gmail_send",
        object!({ "to": ["ana@example.org"], "subject": "x", "body": "y" }),
    )
    .await;
    assert!(said.contains("send mail (\"Write mail\")") && said.contains("Settings → Connections"), "{said}");
    server.stop().await;
}
