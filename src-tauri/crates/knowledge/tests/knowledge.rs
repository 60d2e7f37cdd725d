//! The knowledge index on real folders: what is indexed and what never is (secrets by name and
//! content, ignored, hidden, binary, too large), answers cited with their true lines, changes,
//! deletions and renames seen by a scan and by the watcher, the search tool's answer, and
//! retrieval by meaning with the real all-MiniLM-L6-v2.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use perch_knowledge::tool::{Fixed, KnowledgeServer};
use perch_knowledge::watch::Watcher;
use perch_knowledge::{Knowledge, Retrieval};
use perch_tools::{BuiltinServer, CallOrigin};

const SECRET: &str = "sk-live-4f9a8b7c6d5e4f3a2b1c";

const AUTH_RS: &str = "use std::time::Duration;

/// Tokens expire after an hour.
pub const LIFETIME: Duration = Duration::from_secs(3600);

/// Exchanges the refresh token for a new access token before the old one expires.
pub fn refresh_access_token(client: &Client, refresh: &str) -> Result<Token, AuthError> {
    let response = client.post(\"/oauth/token\").form(&[(\"grant_type\", \"refresh_token\"), (\"refresh_token\", refresh)]).send()?;
    let token: Token = response.json()?;
    Ok(token)
}

/// Parses the server's error body.
pub fn parse_error(body: &str) -> AuthError {
    let value: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    AuthError::Server(value[\"error\"].as_str().unwrap_or(\"unknown\").to_owned())
}
";

const DECISIONS_MD: &str = "# Decisions

## Storage
We keep the history in SQLite, one file per user.

## Retry policy
Failed uploads are attempted again three times, waiting 1, 4 and 16 seconds
between attempts, then the user is told and the draft is kept.

## Releases
A release is cut every second Thursday.
";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("src/auth.rs", AUTH_RS);
    write("docs/decisions.md", DECISIONS_MD);
    write(".env", &format!("API_KEY={SECRET}\n"));
    write("config/deploy.pem", &format!("{SECRET}\n"));
    write(
        "notes/ops.txt",
        &format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n-----END OPENSSH PRIVATE KEY-----\n"),
    );
    write(".gitignore", "generated/\n");
    write("generated/out.rs", &format!("// {SECRET}\n"));
    write(".private/plans.md", &format!("# Plans\n{SECRET}\n"));
    write("node_modules/lib/index.js", &format!("// {SECRET}\n"));
    write("big.txt", &"filler line of text\n".repeat(60_000));
    std::fs::write(root.join("logo.rs"), b"\x89PNG\r\n\x1a\n\0\0\0binary").unwrap();
    dir
}

fn index_all(knowledge: &Knowledge, folder: &Path) -> perch_knowledge::Report {
    knowledge.index(folder, &AtomicBool::new(false), &|_| {}).unwrap()
}

/// Every byte SQLite wrote (the database and its write-ahead log).
fn database_bytes(data: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(data).unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with("knowledge.db") {
            bytes.extend(std::fs::read(entry.path()).unwrap());
        }
    }
    bytes
}

#[test]
fn a_folder_is_indexed_without_its_secrets_and_answers_with_true_lines() {
    let project = project();
    let data = tempfile::tempdir().unwrap();
    let knowledge = Knowledge::open(&data.path().join("knowledge.db")).unwrap();
    let folder = knowledge.add_folder(project.path()).unwrap();
    let report = index_all(&knowledge, &folder.path);

    assert_eq!(report.indexed, 2, "auth.rs and decisions.md: {report:#?}");
    let skipped: Vec<String> = report
        .skipped
        .iter()
        .map(|(p, why)| format!("{}: {why}", p.strip_prefix(&folder.path).unwrap().display()))
        .collect();
    for expected in [
        "config/deploy.pem: its name says it holds a secret",
        "notes/ops.txt: it holds a private key or a credential",
        "big.txt: larger than 1024 KiB",
    ] {
        assert!(skipped.contains(&expected.to_owned()), "{expected} in {skipped:#?}");
    }
    assert!(skipped.iter().any(|s| s.starts_with("logo.rs: ")), "a binary: {skipped:#?}");
    // Hidden files, ignored folders and build folders are never even looked at.
    for never in [".env", "generated", ".private", "node_modules"] {
        assert!(!skipped.iter().any(|s| s.starts_with(never)), "{never}: {skipped:#?}");
    }
    let bytes = database_bytes(data.path());
    assert!(!bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()), "a secret reached the index");

    let found = knowledge.search("where do we refresh the access token", 3).unwrap();
    assert_eq!(found.retrieval, Retrieval::Lexical("the embedding model is not downloaded".into()));
    let best = &found.passages[0];
    assert_eq!(best.path, folder.path.join("src/auth.rs"));
    let lines: Vec<&str> = AUTH_RS.lines().collect();
    assert_eq!(best.text, lines[best.start - 1..best.end].join("\n"), "the cited lines are the passage");
    assert!(best.text.contains("fn refresh_access_token"), "{}", best.text);
    assert_eq!(best.citation(), format!("{}:{}-{}", best.path.display(), best.start, best.end));
    // A passage a search gave is read again by its place (what `#` in the composer sends); a
    // place no passage spans is none.
    let again = knowledge.passage(&best.path, best.start, best.end).unwrap().unwrap();
    assert_eq!((again.text.as_str(), again.place()), (best.text.as_str(), best.citation()));
    assert_eq!(knowledge.passage(&best.path, best.start, best.end + 1).unwrap(), None);

    let retry = knowledge.search("retry policy", 1).unwrap();
    assert_eq!(retry.passages[0].heading, "Decisions > Retry policy");
    assert_eq!((retry.passages[0].start, retry.passages[0].end), (6, 8));
}

#[test]
fn changes_deletions_and_renames_are_seen_by_the_next_scan() {
    let project = project();
    let data = tempfile::tempdir().unwrap();
    let knowledge = Knowledge::open(&data.path().join("knowledge.db")).unwrap();
    let folder = knowledge.add_folder(project.path()).unwrap().path;
    index_all(&knowledge, &folder);

    let again = index_all(&knowledge, &folder);
    assert_eq!((again.indexed, again.unchanged), (0, 2), "nothing changed, nothing read");

    std::fs::write(folder.join("docs/decisions.md"), DECISIONS_MD.replace("second Thursday", "first Monday"))
        .unwrap();
    std::fs::rename(folder.join("src/auth.rs"), folder.join("src/session.rs")).unwrap();
    let report = index_all(&knowledge, &folder);
    assert_eq!((report.indexed, report.removed), (2, 1), "{report:#?}");
    let found = knowledge.search("release monday", 1).unwrap();
    assert!(found.passages[0].text.contains("first Monday"));
    assert!(knowledge.search("thursday", 5).unwrap().passages.is_empty(), "the old text is gone");
    let token = knowledge.search("refresh token", 1).unwrap();
    assert_eq!(token.passages[0].path, folder.join("src/session.rs"));

    // A file that turns into a secret leaves the index.
    std::fs::write(
        folder.join("docs/decisions.md"),
        format!("{DECISIONS_MD}\naws_secret_access_key = {SECRET}\n"),
    )
    .unwrap();
    index_all(&knowledge, &folder);
    assert!(
        knowledge
            .search("retry policy", 5)
            .unwrap()
            .passages
            .iter()
            .all(|p| !p.path.ends_with("decisions.md"))
    );

    knowledge.remove_folder(&folder).unwrap();
    assert_eq!(knowledge.counts().unwrap(), (0, 0));
    assert!(knowledge.search("refresh token", 5).unwrap().passages.is_empty());
}

#[test]
fn credential_stores_cannot_be_added() {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    let ssh = home.join(".ssh");
    if !ssh.is_dir() {
        std::fs::create_dir_all(&ssh).unwrap();
    }
    let data = tempfile::tempdir().unwrap();
    let knowledge = Knowledge::open(&data.path().join("knowledge.db")).unwrap();
    let refused = knowledge.add_folder(&ssh).unwrap_err().to_string();
    assert!(refused.contains("credential store (~/.ssh)"), "{refused}");
    assert!(knowledge.folders().unwrap().is_empty());
}

/// Waits for `done` to hold, polling; fails after a minute (a deadline, not a timing claim).
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(60), "{what} never happened");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_watcher_indexes_new_changed_deleted_and_moved_files_and_leaves_ignored_ones() {
    let project = project();
    let data = tempfile::tempdir().unwrap();
    let knowledge = Arc::new(Knowledge::open(&data.path().join("knowledge.db")).unwrap());
    let folder = knowledge.add_folder(project.path()).unwrap().path;
    let report = index_all(&knowledge, &folder);
    let watcher = Watcher::start(knowledge.clone(), |_| {}).unwrap();
    watcher.watch(report.dirs);
    let hits = |q: &str| knowledge.search(q, 5).unwrap().passages;

    std::fs::write(folder.join("docs/glossary.md"), "# Glossary\nA perchling is a small widget.\n").unwrap();
    eventually("a new file indexed", || hits("perchling").len() == 1);

    std::fs::write(folder.join("docs/glossary.md"), "# Glossary\nA fledgling is a new widget.\n").unwrap();
    eventually("a changed file indexed again", || {
        hits("perchling").is_empty() && hits("fledgling").len() == 1
    });

    // A new folder, then a file in it: both seen (the folder is watched as it appears).
    std::fs::create_dir_all(folder.join("guides/setup")).unwrap();
    std::fs::write(folder.join("guides/setup/linux.md"), "# Linux\nInstall with apt.\n").unwrap();
    eventually("a file in a new folder indexed", || hits("apt install linux").len() == 1);
    std::fs::write(folder.join("guides/setup/mac.md"), "# Mac\nInstall with brew.\n").unwrap();
    eventually("a later file in the new folder indexed", || hits("brew").len() == 1);

    // A folder moved: its files under their new names, none under the old.
    std::fs::rename(folder.join("guides"), folder.join("manuals")).unwrap();
    eventually("a moved folder's files under their new path", || {
        let found = hits("brew");
        found.len() == 1 && found[0].path == folder.join("manuals/setup/mac.md")
    });

    std::fs::remove_file(folder.join("docs/glossary.md")).unwrap();
    eventually("a deleted file forgotten", || hits("fledgling").is_empty());

    // Ignored and hidden places stay out, whatever is written there.
    std::fs::write(folder.join("generated/new.rs"), "// zanzibar\n").unwrap();
    std::fs::write(folder.join(".private/more.md"), "zanzibar\n").unwrap();
    std::fs::write(folder.join("docs/marker.md"), "# Marker\nquokka\n").unwrap();
    eventually("the marker written after them", || hits("quokka").len() == 1);
    assert!(hits("zanzibar").is_empty(), "an ignored or hidden file was indexed");
    drop(watcher);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tool_answers_with_citations_and_is_offered_only_with_a_folder() {
    let project = project();
    let data = tempfile::tempdir().unwrap();
    let knowledge = Arc::new(Knowledge::open(&data.path().join("knowledge.db")).unwrap());
    let server = KnowledgeServer::new(Arc::new(Fixed(knowledge.clone())));
    assert!(server.tools().is_empty(), "no folder, no tool");
    let folder = knowledge.add_folder(project.path()).unwrap().path;
    index_all(&knowledge, &folder);
    let tools = server.tools();
    assert_eq!(tools.len(), 1);
    assert!(tools[0].read_only && tools[0].description.contains(&folder.display().to_string()));

    let origin = CallOrigin::default();
    let cancel = Default::default();
    let arguments = serde_json::json!({ "query": "how many times are uploads retried", "limit": 2 });
    let out = server.call(&origin, "search_knowledge", &arguments, &cancel, None).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    let cite = format!("[`{}:6-8`][] (Decisions > Retry policy)", folder.join("docs/decisions.md").display());
    assert!(out.text.contains(&cite), "{}", out.text);
    assert!(out.text.contains("Matched by words only"), "{}", out.text);
    let passages = out.structured.unwrap()["passages"].as_array().unwrap().clone();
    assert!(passages.len() <= 2 && passages[0]["start"] == 6);

    let empty = serde_json::json!({ "query": "  " });
    let out = server.call(&origin, "search_knowledge", &empty, &cancel, None).await.unwrap();
    assert!(out.is_error && out.text.contains("needs a query"));
}

/// all-MiniLM-L6-v2 from the test venv (the PyPI package `make deps` installs), or
/// `PERCH_MINILM_DIR`.
fn minilm() -> perch_retrieval::MiniLm {
    perch_retrieval::MiniLm::load(&perch_retrieval::test_support::minilm_dir()).unwrap()
}

#[test]
fn meaning_finds_what_words_miss() {
    let project = project();
    let data = tempfile::tempdir().unwrap();
    let knowledge = Knowledge::open(&data.path().join("knowledge.db")).unwrap();
    let folder = knowledge.add_folder(project.path()).unwrap().path;
    index_all(&knowledge, &folder);
    // No word in common with the retry section (nor with any passage): words alone find nothing.
    let question = "what happens when sending a document does not work";
    let lexical = knowledge.search(question, 3).unwrap();
    assert!(lexical.passages.is_empty(), "{lexical:#?}");

    knowledge.set_embedder(Some(Arc::new(minilm()))).unwrap();
    // Index runs store words; the passages' meaning follows in its own pass.
    let (_, passages) = knowledge.counts().unwrap();
    let progress = std::sync::Mutex::new(Vec::new());
    let embedded =
        knowledge.embed_pending(&AtomicBool::new(false), &|p| progress.lock().unwrap().push(p.done)).unwrap();
    assert_eq!(embedded, passages);
    assert_eq!(progress.lock().unwrap().last(), Some(&passages));
    assert_eq!(knowledge.embed_pending(&AtomicBool::new(false), &|_| {}).unwrap(), 0, "nothing left");
    let hybrid = knowledge.search(question, 3).unwrap();
    assert_eq!(hybrid.retrieval, Retrieval::Hybrid);
    assert_eq!(hybrid.passages[0].heading, "Decisions > Retry policy", "{hybrid:#?}");
}

/// Real PDFs (printed by Chromium: compressed streams, subset fonts with ToUnicode maps): the one
/// with text is indexed page by page and cited by page, the scanned one is skipped and says why.
#[tokio::test]
async fn pdfs_are_indexed_by_page_and_cited_by_page() {
    let project = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/fixtures/pdf");
    std::fs::copy(fixtures.join("field-notes.pdf"), project.path().join("field-notes.pdf")).unwrap();
    std::fs::copy(fixtures.join("scanned.pdf"), project.path().join("scanned.pdf")).unwrap();
    let data = tempfile::tempdir().unwrap();
    let knowledge = Arc::new(Knowledge::open(&data.path().join("knowledge.db")).unwrap());
    let folder = knowledge.add_folder(project.path()).unwrap().path;
    let report = index_all(&knowledge, &folder);
    assert_eq!(report.indexed, 1, "{report:#?}");
    assert_eq!(
        report.skipped,
        [(folder.join("scanned.pdf"), "this PDF has no text layer; it may be scanned images".to_owned())]
    );

    let found = knowledge.search("what do kestrels eat in winter", 1).unwrap();
    let best = &found.passages[0];
    assert_eq!(best.path, folder.join("field-notes.pdf"));
    assert_eq!((best.start, best.end, best.heading.as_str()), (2, 2, "page 2"));
    assert!(best.text.contains("Voles are the main prey in winter."), "{}", best.text);
    assert_eq!(best.place(), format!("{}, page 2", folder.join("field-notes.pdf").display()));

    let server = KnowledgeServer::new(Arc::new(Fixed(knowledge.clone())));
    let arguments = serde_json::json!({ "query": "voles in winter", "limit": 1 });
    let out = server
        .call(&CallOrigin::default(), "search_knowledge", &arguments, &Default::default(), None)
        .await
        .unwrap();
    let place = format!("`{}`, page 2", folder.join("field-notes.pdf").display());
    assert!(out.text.starts_with("(Matched by words only") && out.text.contains(&place), "{}", out.text);
    assert!(!out.text.contains("[`"), "a PDF's page is not a line to open the editor at: {}", out.text);
    assert_eq!(out.structured.unwrap()["passages"][0]["pdf"], true);
}
