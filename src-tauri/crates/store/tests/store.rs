#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The store against real SQLite files: migrations, recovery, refusal, history and search.

use std::path::Path;

use perch_store::{
    HIGHLIGHT_END, HIGHLIGHT_START, Integrity, LATEST_VERSION, MEMORY_MAX_CHARS, MessageStatus, NewMessage,
    Role, Store, StoreError, migrations,
};
use rusqlite::Connection;

async fn open(path: &Path) -> Store {
    Store::open(path, Integrity::Full).await.unwrap().0
}

fn tables(path: &Path) -> Vec<String> {
    let conn = Connection::open(path).unwrap();
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_master WHERE type IN ('table') ORDER BY name").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

/// The app and `perch` commands open one data folder at once; a new database must come out
/// whole from any number of first opens at the same moment.
#[test]
fn processes_opening_a_new_database_at_once_each_migrate_it_once() {
    for _ in 0..5 {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("perch.db");
        let barrier = std::sync::Barrier::new(4);
        std::thread::scope(|scope| {
            let opens: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
                        barrier.wait();
                        runtime
                            .block_on(Store::open(&db, Integrity::Quick))
                            .map(|(_, report)| report.schema_version)
                    })
                })
                .collect();
            for open in opens {
                assert_eq!(open.join().unwrap().unwrap(), LATEST_VERSION);
            }
        });
    }
}

#[tokio::test]
async fn a_fresh_database_gets_every_table_wal_and_foreign_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("perch.db");
    let (store, report) = Store::open(&db, Integrity::Full).await.unwrap();
    assert_eq!(report.schema_version, LATEST_VERSION);
    assert_eq!(report.upgraded_from, 0);
    assert!(report.recovered.is_none());

    let names = tables(&db);
    for table in [
        "attachments",
        "answer_memories",
        "conversations",
        "memories",
        "messages",
        "messages_fts",
        "review_documents",
        "settings",
        "terminal_events",
        "tool_calls",
    ] {
        assert!(names.iter().any(|n| n == table), "missing {table} in {names:?}");
    }
    let (mode, fks): (String, i64) = store
        .call(|c| {
            let mode = c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
            let fks = c.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
            Ok((mode, fks))
        })
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(fks, 1);
}

#[tokio::test]
async fn upgrading_from_every_earlier_version_keeps_data_and_indexes_it() {
    for from in 1..LATEST_VERSION {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("perch.db");
        {
            // A database as version `from` left it, with history in it.
            let mut conn = Connection::open(&db).unwrap();
            migrations::migrate_to(&mut conn, from).unwrap();
            conn.execute_batch(
                "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c-old', 'Old chat', 1, 1);
                 INSERT INTO messages (conversation_id, role, content, created_at)
                     VALUES ('c-old', 'assistant', 'the flux capacitor needs 1.21 gigawatts', 1);",
            )
            .unwrap();
        }
        let (store, report) = Store::open(&db, Integrity::Full).await.unwrap();
        assert_eq!(report.upgraded_from, from);
        assert_eq!(report.schema_version, LATEST_VERSION);
        let hits = store.search("capacitor", 10).await.unwrap();
        assert_eq!(hits.len(), 1, "messages written before the upgrade from {from} are searchable");
        let detail = store.conversation("c-old").await.unwrap();
        assert_eq!(detail.messages[0].alternative_of, None);
        let backup = tmp.path().join(format!("perch.db.v{from}.bak"));
        assert!(backup.exists(), "a copy of the version {from} database is kept before upgrading");
    }
}

#[tokio::test]
async fn a_corrupt_file_is_kept_as_a_backup_and_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("perch.db");
    let garbage = b"this is not a database, just some bytes that happen to be here ".repeat(100);
    std::fs::write(&db, &garbage).unwrap();

    let (store, report) = Store::open(&db, Integrity::Quick).await.unwrap();
    let recovery = report.recovered.expect("the damage is reported");
    assert!(recovery.reason.contains("not a database"), "{}", recovery.reason);
    let name = recovery.backup.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("perch.db.corrupt-"), "{name}");
    assert_eq!(std::fs::read(&recovery.backup).unwrap(), garbage, "the damaged bytes are kept as they were");
    // The new database works.
    let c = store.create_conversation("after recovery", None).await.unwrap();
    assert_eq!(store.list_conversations(10, 0).await.unwrap()[0].id, c.id);
}

#[tokio::test]
async fn damage_inside_the_file_is_found_by_the_full_check() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("perch.db");
    {
        let store = open(&db).await;
        let c = store.create_conversation("t", None).await.unwrap();
        for i in 0..400 {
            store
                .add_message(&c.id, NewMessage::text(Role::User, format!("message {i} {}", "x".repeat(200))))
                .await
                .unwrap();
        }
        store.call(|c| Ok(c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?)).await.unwrap();
    }
    // Overwrite a run of pages in the middle of the file, leaving header and schema intact.
    let mut bytes = std::fs::read(&db).unwrap();
    let page = 4096;
    let (start, end) = (page * 4, (page * 12).min(bytes.len()));
    bytes[start..end].fill(0xA5);
    std::fs::write(&db, &bytes).unwrap();

    let (_, report) = Store::open(&db, Integrity::Full).await.unwrap();
    let recovery = report.recovered.expect("page damage is detected by the integrity check");
    assert!(recovery.backup.exists());
}

#[tokio::test]
async fn a_database_from_a_newer_version_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("perch.db");
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE future (x); INSERT INTO future VALUES (42);").unwrap();
        conn.pragma_update(None, "user_version", LATEST_VERSION + 5).unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let err = Store::open(&db, Integrity::Quick).await.unwrap_err();
    assert!(matches!(err, StoreError::TooNew { found, .. } if found == LATEST_VERSION + 5), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("newer Perch") && msg.contains(&db.display().to_string()), "{msg}");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file is not modified");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "no backups or side files either");
}

#[tokio::test]
async fn history_lists_newest_first_and_keeps_token_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(&tmp.path().join("perch.db")).await;
    let first = store.create_conversation("First", Some("ollama:qwen3")).await.unwrap();
    let second = store.create_conversation("Second", None).await.unwrap();
    store.add_message(&second.id, NewMessage::text(Role::User, "hello")).await.unwrap();
    // Times are in milliseconds; keep the two updates apart so the order is defined.
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let mut answer = NewMessage::text(Role::Assistant, "hi there");
    answer.input_tokens = Some(12);
    answer.output_tokens = Some(3);
    answer.thinking = Some("greet back".into());
    store.add_message(&first.id, answer).await.unwrap();

    let list = store.list_conversations(10, 0).await.unwrap();
    assert_eq!(list.iter().map(|c| c.title.as_str()).collect::<Vec<_>>(), ["First", "Second"]);
    assert_eq!((list[0].input_tokens, list[0].output_tokens, list[0].message_count), (12, 3, 1));

    let detail = store.conversation(&first.id[..8]).await.unwrap();
    assert_eq!(detail.conversation.id, first.id, "a unique prefix finds the conversation");
    assert_eq!(detail.messages[0].thinking.as_deref(), Some("greet back"));
    assert_eq!(detail.messages[0].status, MessageStatus::Complete);

    let missing = store.add_message("nope", NewMessage::text(Role::User, "x")).await.unwrap_err();
    assert!(matches!(missing, StoreError::NotFound(_)));
}

#[tokio::test]
async fn rename_and_delete_cascade_to_messages_and_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(&tmp.path().join("perch.db")).await;
    let c = store.create_conversation("draft", None).await.unwrap();
    store.add_message(&c.id, NewMessage::text(Role::User, "zebra crossing")).await.unwrap();
    store.rename_conversation(&c.id, "  Zebras  ").await.unwrap();
    assert_eq!(store.conversation(&c.id).await.unwrap().conversation.title, "Zebras");
    assert!(store.rename_conversation(&c.id, "   ").await.is_err());

    store.delete_conversation(&c.id).await.unwrap();
    assert!(store.search("zebra", 10).await.unwrap().is_empty());
    let orphans: i64 =
        store.call(|c| Ok(c.query_row("SELECT count(*) FROM messages", [], |r| r.get(0))?)).await.unwrap();
    assert_eq!(orphans, 0);
    assert!(matches!(store.delete_conversation(&c.id).await, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn search_matches_word_beginnings_newest_first_and_marks_them() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(&tmp.path().join("perch.db")).await;
    let c = store.create_conversation("Rust questions", None).await.unwrap();
    store.add_message(&c.id, NewMessage::text(Role::User, "How do I read a file in Rust?")).await.unwrap();
    store
        .add_message(
            &c.id,
            NewMessage::text(Role::Assistant, "Use std::fs::read_to_string; it returns the whole file."),
        )
        .await
        .unwrap();
    let other = store.create_conversation("Cooking", None).await.unwrap();
    store
        .add_message(&other.id, NewMessage::text(Role::User, "Reading recipes about risotto"))
        .await
        .unwrap();

    let hits = store.search("returns", 10).await.unwrap();
    let both = store.search("file", 10).await.unwrap();
    assert!(both[0].message_id > both[1].message_id, "newest first");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].role, Role::Assistant);
    assert!(
        hits[0].snippet.contains(&format!("{HIGHLIGHT_START}returns{HIGHLIGHT_END}")),
        "{:?}",
        hits[0].snippet
    );

    // Every word is a prefix: "read" finds "read", "read_to_string" and "Reading"; "riso" finds "risotto";
    // partly typed words are not stemmed into something else ("retur" still finds "returns").
    assert_eq!(store.search("read", 10).await.unwrap().len(), 3);
    assert_eq!(store.search("retur whol", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("riso", 10).await.unwrap()[0].conversation_id, other.id);
    // Every word must match.
    assert_eq!(store.search("file risotto", 10).await.unwrap().len(), 0);
    // FTS5 syntax in user input is treated as plain words, never an error.
    for hostile in ["\"unbalanced", "a OR", "NEAR(", "*", "col:umn", ")(", "-"] {
        assert!(store.search(hostile, 10).await.is_ok(), "{hostile}");
    }
    assert!(store.search("   ", 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn memories_are_kept_edited_forgotten_and_answers_keep_what_they_were_given() {
    let tmp = tempfile::tempdir().unwrap();
    let store = open(&tmp.path().join("perch.db")).await;
    let c = store.create_conversation("tabs", None).await.unwrap();
    let answer = store.add_message(&c.id, NewMessage::text(Role::Assistant, "ok")).await.unwrap();

    let tabs = store.add_memory("  The user\nindents with tabs ", Some(&c.id)).await.unwrap();
    assert_eq!(tabs.text, "The user indents with tabs", "one line, trimmed");
    assert_eq!(tabs.conversation_id.as_deref(), Some(c.id.as_str()));
    let again = store.add_memory("The user indents with tabs", None).await.unwrap();
    assert_eq!(again.id, tabs.id, "the same text is one memory");
    let mine = store.add_memory("Project Kestrel ships on Fridays", None).await.unwrap();
    assert_eq!(mine.conversation_id, None);
    assert!(matches!(store.add_memory(" \n ", None).await, Err(StoreError::Invalid(_))));
    let long = "x".repeat(MEMORY_MAX_CHARS + 1);
    assert!(matches!(store.add_memory(&long, None).await, Err(StoreError::Invalid(_))));
    let texts: Vec<String> = store.memories().await.unwrap().into_iter().map(|m| m.text).collect();
    assert_eq!(texts, ["Project Kestrel ships on Fridays", "The user indents with tabs"], "newest first");

    store.set_answer_memories(answer.id, &[tabs.clone(), mine.clone()]).await.unwrap();
    let edited = store.edit_memory(tabs.id, "The user indents with four spaces").await.unwrap();
    assert_eq!(edited.text, "The user indents with four spaces");
    assert!(matches!(store.edit_memory(9999, "x").await, Err(StoreError::NotFound(_))));
    store.forget_memory(mine.id).await.unwrap();
    assert!(matches!(store.forget_memory(mine.id).await, Err(StoreError::NotFound(_))));

    // The answer shows what it was given then, whatever became of the memories since.
    let used = store.conversation(&c.id).await.unwrap().memories_used;
    let seen: Vec<(Option<i64>, &str)> = used.iter().map(|u| (u.memory_id, u.text.as_str())).collect();
    assert_eq!(
        seen,
        [(Some(tabs.id), "The user indents with tabs"), (None, "Project Kestrel ships on Fridays")]
    );

    // Deleting the conversation leaves the memory, without its conversation.
    store.delete_conversation(&c.id).await.unwrap();
    let left = store.memories().await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].conversation_id, None);
}
