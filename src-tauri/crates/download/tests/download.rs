#![allow(clippy::unwrap_used)]
//! Downloads against a loopback HTTP server: checksums, skipping, resuming, stopping, failures.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use perch_download::{
    DownloadError, Fetch, Progress, RemoteFile, fetch, hash_file, missing, part_path, remaining,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Serves files by name (404 otherwise), honours `Range: bytes=N-` with 206 unless `ranges`
/// is off, can drop the connection after `cut_after` body bytes, and records each request's
/// Range header.
#[derive(Clone, Default)]
struct Behaviour {
    ranges: bool,
    cut_after: Option<usize>,
    /// Body bytes sent per chunk, with a pause after each (to stop a download midway).
    slow_chunk: Option<usize>,
}

struct Server {
    base: String,
    hits: Arc<AtomicUsize>,
    ranges_asked: Arc<Mutex<Vec<Option<String>>>>,
    behaviour: Arc<Mutex<Behaviour>>,
}

async fn serve(files: HashMap<String, Vec<u8>>, behaviour: Behaviour) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/models", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let ranges_asked = Arc::new(Mutex::new(Vec::new()));
    let behaviour = Arc::new(Mutex::new(behaviour));
    let (files, counter, asked, how) =
        (Arc::new(files), hits.clone(), ranges_asked.clone(), behaviour.clone());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (files, counter, asked) = (files.clone(), counter.clone(), asked.clone());
            let how = how.lock().unwrap().clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).await.unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let head = String::from_utf8_lossy(&head).to_string();
                let range = head
                    .lines()
                    .find_map(|l| l.to_ascii_lowercase().strip_prefix("range: bytes=").map(str::to_owned))
                    .map(|r| r.trim_end_matches('-').to_owned());
                asked.lock().unwrap().push(range.clone());
                let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
                let name = path.strip_prefix("/models/").unwrap_or_default();
                let Some(bytes) = files.get(name) else {
                    let body = b"Entry not found";
                    let reply = format!(
                        "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = socket.write_all(reply.as_bytes()).await;
                    let _ = socket.write_all(body).await;
                    return;
                };
                let from = range.and_then(|r| r.parse::<usize>().ok()).filter(|_| how.ranges);
                let (status, body, extra) = match from {
                    Some(n) if n >= bytes.len() => (
                        "416 Range Not Satisfiable",
                        Vec::new(),
                        format!("Content-Range: bytes */{}\r\n", bytes.len()),
                    ),
                    Some(n) => (
                        "206 Partial Content",
                        bytes[n..].to_vec(),
                        format!("Content-Range: bytes {n}-{}/{}\r\n", bytes.len() - 1, bytes.len()),
                    ),
                    None => ("200 OK", bytes.clone(), String::new()),
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
                let body = match how.cut_after {
                    Some(n) => &body[..n.min(body.len())],
                    None => &body[..],
                };
                match how.slow_chunk {
                    Some(size) => {
                        for piece in body.chunks(size) {
                            if socket.write_all(piece).await.is_err() {
                                return;
                            }
                            let _ = socket.flush().await;
                            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                        }
                    }
                    None => {
                        let _ = socket.write_all(body).await;
                    }
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    Server { base, hits, ranges_asked, behaviour }
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

const WEIGHTS: &[u8] = b"pretend these are 91 MB of weights, long enough to be cut in the middle";
const TOKENIZER: &[u8] = b"{\"pretend\": \"tokenizer\"}";

/// The files with their real hashes (computed here, so the fixture cannot drift).
async fn files(dir: &std::path::Path) -> Vec<RemoteFile> {
    let mut out = Vec::new();
    for (name, bytes) in [("model.safetensors", WEIGHTS), ("tokenizer.json", TOKENIZER)] {
        let p = dir.join(format!("hash-{name}"));
        std::fs::write(&p, bytes).unwrap();
        let sha256 = hash_file(&p).await.unwrap();
        std::fs::remove_file(&p).unwrap();
        out.push(RemoteFile {
            name: name.into(),
            url: format!("https://example.invalid/{name}").into(),
            sha256: sha256.into(),
            size: bytes.len() as u64,
        });
    }
    out
}

fn served() -> HashMap<String, Vec<u8>> {
    HashMap::from([
        ("model.safetensors".into(), WEIGHTS.to_vec()),
        ("tokenizer.json".into(), TOKENIZER.to_vec()),
    ])
}

fn from(base: &str) -> Fetch<'_> {
    Fetch { base_override: Some(base), cancel: None }
}

#[tokio::test]
async fn downloads_checks_and_then_skips() {
    let scratch = tempfile::tempdir().unwrap();
    let files = files(scratch.path()).await;
    let server = serve(served(), Behaviour { ranges: true, ..Default::default() }).await;
    let dir = scratch.path().join("minilm");
    assert_eq!(missing(&files, &dir).len(), 2);
    assert_eq!(remaining(&files, &dir), (WEIGHTS.len() + TOKENIZER.len()) as u64);

    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    fetch(&client(), &files, &dir, from(&server.base), move |p| log.lock().unwrap().push(p)).await.unwrap();
    assert_eq!(std::fs::read(dir.join("model.safetensors")).unwrap(), WEIGHTS);
    assert_eq!(std::fs::read(dir.join("tokenizer.json")).unwrap(), TOKENIZER);
    assert!(!dir.join("model.safetensors.part").exists());
    assert!(missing(&files, &dir).is_empty());
    assert_eq!(remaining(&files, &dir), 0);
    let seen = seen.lock().unwrap().clone();
    let total = (WEIGHTS.len() + TOKENIZER.len()) as u64;
    assert_eq!(seen.first(), Some(&Progress { done: 0, total }));
    assert_eq!(seen.last(), Some(&Progress { done: total, total }));
    assert!(seen.windows(2).all(|w| w[0].done <= w[1].done), "progress only grows: {seen:?}");
    assert_eq!(server.hits.load(Ordering::SeqCst), 2);

    // Present with the right hash: nothing is fetched again.
    fetch(&client(), &files, &dir, from(&server.base), |_| {}).await.unwrap();
    assert_eq!(server.hits.load(Ordering::SeqCst), 2);

    // A damaged file is fetched again.
    std::fs::write(dir.join("tokenizer.json"), b"damaged").unwrap();
    fetch(&client(), &files, &dir, from(&server.base), |_| {}).await.unwrap();
    assert_eq!(server.hits.load(Ordering::SeqCst), 3);
    assert_eq!(std::fs::read(dir.join("tokenizer.json")).unwrap(), TOKENIZER);
}

#[tokio::test]
async fn an_interrupted_download_resumes_where_it_stopped() {
    let scratch = tempfile::tempdir().unwrap();
    let files = files(scratch.path()).await;
    let dir = scratch.path().join("m");
    let server = serve(served(), Behaviour { ranges: true, cut_after: Some(20), ..Default::default() }).await;

    // The connection drops after 20 bytes: the part is kept for the next attempt.
    let err = fetch(&client(), &files[..1], &dir, from(&server.base), |_| {}).await.unwrap_err();
    assert!(matches!(err, DownloadError::Unreachable { .. }), "{err:?}");
    let part = part_path(&dir, &files[0]);
    assert_eq!(std::fs::read(&part).unwrap(), &WEIGHTS[..20]);
    assert_eq!(remaining(&files[..1], &dir), (WEIGHTS.len() - 20) as u64);

    // The next attempt asks only for the rest and checks the whole file.
    server.behaviour.lock().unwrap().cut_after = None;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    fetch(&client(), &files[..1], &dir, from(&server.base), move |p| log.lock().unwrap().push(p.done))
        .await
        .unwrap();
    assert_eq!(std::fs::read(dir.join("model.safetensors")).unwrap(), WEIGHTS);
    assert_eq!(server.ranges_asked.lock().unwrap().last().cloned().flatten().as_deref(), Some("20"));
    assert!(seen.lock().unwrap().contains(&20), "progress starts from what was kept");
    assert!(!part.exists());
}

#[tokio::test]
async fn a_server_without_ranges_restarts_the_file() {
    let scratch = tempfile::tempdir().unwrap();
    let files = files(scratch.path()).await;
    let dir = scratch.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(part_path(&dir, &files[0]), &WEIGHTS[..10]).unwrap();
    let server = serve(served(), Behaviour::default()).await;
    fetch(&client(), &files[..1], &dir, from(&server.base), |_| {}).await.unwrap();
    assert_eq!(std::fs::read(dir.join("model.safetensors")).unwrap(), WEIGHTS, "200 replaces the part");
}

#[tokio::test]
async fn a_whole_part_is_finished_without_fetching_again() {
    let scratch = tempfile::tempdir().unwrap();
    let files = files(scratch.path()).await;
    let dir = scratch.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(part_path(&dir, &files[0]), WEIGHTS).unwrap();
    let server = serve(served(), Behaviour { ranges: true, ..Default::default() }).await;
    fetch(&client(), &files[..1], &dir, from(&server.base), |_| {}).await.unwrap();
    assert_eq!(std::fs::read(dir.join("model.safetensors")).unwrap(), WEIGHTS);
}

#[tokio::test]
async fn stopping_keeps_the_part_for_later() {
    let scratch = tempfile::tempdir().unwrap();
    let files = files(scratch.path()).await;
    let dir = scratch.path().join("m");
    let server = serve(served(), Behaviour { ranges: true, slow_chunk: Some(8), ..Default::default() }).await;
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let options = Fetch { base_override: Some(&server.base), cancel: Some(&cancel) };
    let err = fetch(&client(), &files[..1], &dir, options, move |p| {
        if p.done >= 16 {
            stopper.cancel();
        }
    })
    .await
    .unwrap_err();
    assert!(matches!(err, DownloadError::Cancelled), "{err:?}");
    let kept = std::fs::read(part_path(&dir, &files[0])).unwrap();
    assert!(kept.len() >= 16 && kept.len() < WEIGHTS.len(), "kept {} bytes", kept.len());
    assert_eq!(kept, &WEIGHTS[..kept.len()]);

    server.behaviour.lock().unwrap().slow_chunk = None;
    fetch(&client(), &files[..1], &dir, from(&server.base), |_| {}).await.unwrap();
    assert_eq!(std::fs::read(dir.join("model.safetensors")).unwrap(), WEIGHTS);
}

#[tokio::test]
async fn a_checksum_mismatch_deletes_the_download() {
    let scratch = tempfile::tempdir().unwrap();
    let mut files = files(scratch.path()).await;
    files[1].sha256 = "0000000000000000000000000000000000000000000000000000000000000000".into();
    let server = serve(served(), Behaviour::default()).await;
    let dir = scratch.path().join("minilm");
    let err = fetch(&client(), &files, &dir, from(&server.base), |_| {}).await.unwrap_err();
    match &err {
        DownloadError::Checksum { file, expected, actual } => {
            assert_eq!(file, "tokenizer.json");
            assert_eq!(expected, &files[1].sha256);
            assert_eq!(actual.len(), 64);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("does not match its checksum"), "{err}");
    assert!(dir.join("model.safetensors").is_file(), "the good file stays");
    assert!(!dir.join("tokenizer.json").exists());
    assert!(!dir.join("tokenizer.json.part").exists());
}

#[tokio::test]
async fn a_file_larger_than_expected_is_stopped_and_deleted() {
    let scratch = tempfile::tempdir().unwrap();
    let mut files = files(scratch.path()).await;
    files[0].size = 10;
    let server = serve(served(), Behaviour::default()).await;
    let dir = scratch.path().join("m");
    let err = fetch(&client(), &files[..1], &dir, from(&server.base), |_| {}).await.unwrap_err();
    assert!(matches!(err, DownloadError::TooLarge { expected: 10, .. }), "{err:?}");
    assert!(!part_path(&dir, &files[0]).exists());
}

#[tokio::test]
async fn http_errors_and_unreachable_servers_are_reported() {
    let scratch = tempfile::tempdir().unwrap();
    let files = files(scratch.path()).await;
    let server = serve(HashMap::new(), Behaviour::default()).await;
    let err = fetch(&client(), &files, scratch.path(), from(&server.base), |_| {}).await.unwrap_err();
    assert!(matches!(err, DownloadError::Http { status: 404, .. }), "{err:?}");
    assert!(err.to_string().contains("model.safetensors") && err.to_string().contains("404"), "{err}");

    // A port held (bound, never listening) for the whole test: connections are refused, and
    // no other process can start listening on it meanwhile.
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let base = format!("http://{}", held.local_addr().unwrap());
    let err = fetch(&client(), &files, scratch.path(), from(&base), |_| {}).await.unwrap_err();
    assert!(matches!(err, DownloadError::Unreachable { .. }), "{err:?}");
    // Said once, with what went wrong underneath (not reqwest's text naming the URL again).
    let text = err.to_string();
    assert_eq!(text.matches(&base).count(), 1, "{text}");
    assert!(text.to_lowercase().contains("refused"), "{text}");
}

#[test]
fn a_name_downloads_once_at_a_time_and_cancel_reaches_it() {
    let downloads = perch_download::Downloads::default();
    let running = downloads.start("tiny.en").unwrap();
    // The same name in another case is the same download: refused, saying so.
    let err = downloads.start(" Tiny.EN").unwrap_err();
    assert!(matches!(&err, DownloadError::AlreadyRunning { name } if name == "Tiny.EN"), "{err:?}");
    assert!(err.to_string().contains("already being downloaded"), "{err}");
    // Another name runs beside it.
    let other = downloads.start("base.en").unwrap();
    assert!(downloads.cancel("TINY.en"));
    assert!(running.token().is_cancelled());
    assert!(!other.token().is_cancelled());
    // Ended (finished, failed or dropped), the name is free again and has nothing to cancel.
    drop(running);
    assert!(!downloads.cancel("tiny.en"));
    let again = downloads.start("tiny.en").unwrap();
    assert!(!again.token().is_cancelled());
}
