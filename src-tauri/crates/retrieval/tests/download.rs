#![allow(clippy::unwrap_used)]
//! Model downloads against a loopback HTTP server: checksums, skipping, failures.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use perch_retrieval::RetrievalError;
use perch_retrieval::download::{MINILM_FILES, ModelFile, fetch, missing};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Serves `files` by name (404 otherwise) and counts the requests.
struct Server {
    base: String,
    hits: Arc<AtomicUsize>,
}

async fn serve(files: HashMap<String, Vec<u8>>) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/models", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let (files, counter) = (Arc::new(files), hits.clone());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (files, counter) = (files.clone(), counter.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).await.unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let head = String::from_utf8_lossy(&head);
                let path = head.split(' ').nth(1).unwrap_or_default();
                let name = path.strip_prefix("/models/").unwrap_or_default();
                let (status, body) = match files.get(name) {
                    Some(bytes) => ("200 OK", bytes.clone()),
                    None => ("404 Not Found", b"Entry not found".to_vec()),
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
                let _ = socket.write_all(&body).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    Server { base, hits }
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

const WEIGHTS: &[u8] = b"pretend these are 91 MB of weights";
const TOKENIZER: &[u8] = b"{\"pretend\": \"tokenizer\"}";

fn files() -> Vec<ModelFile> {
    vec![
        ModelFile {
            name: "model.safetensors",
            url: "https://example.invalid/model.safetensors",
            sha256: "",
            size: WEIGHTS.len() as u64,
        },
        ModelFile {
            name: "tokenizer.json",
            url: "https://example.invalid/tokenizer.json",
            sha256: "",
            size: TOKENIZER.len() as u64,
        },
    ]
}

/// The files with their real hashes (computed here, so the fixture cannot drift).
async fn real_files(dir: &std::path::Path) -> Vec<ModelFile> {
    let mut out = files();
    for (file, bytes) in out.iter_mut().zip([WEIGHTS, TOKENIZER]) {
        let p = dir.join(format!("hash-{}", file.name));
        std::fs::write(&p, bytes).unwrap();
        let hash = perch_retrieval::download::hash_file(&p).await.unwrap();
        std::fs::remove_file(&p).unwrap();
        file.sha256 = Box::leak(hash.into_boxed_str());
    }
    out
}

fn served() -> HashMap<String, Vec<u8>> {
    HashMap::from([
        ("model.safetensors".into(), WEIGHTS.to_vec()),
        ("tokenizer.json".into(), TOKENIZER.to_vec()),
    ])
}

#[tokio::test]
async fn downloads_checks_and_then_skips() {
    let scratch = tempfile::tempdir().unwrap();
    let files = real_files(scratch.path()).await;
    let server = serve(served()).await;
    let dir = scratch.path().join("minilm");
    assert_eq!(missing(&files, &dir).len(), 2);

    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    fetch(&client(), &files, &dir, Some(&server.base), move |done, total| {
        log.lock().unwrap().push((done, total))
    })
    .await
    .unwrap();
    assert_eq!(std::fs::read(dir.join("model.safetensors")).unwrap(), WEIGHTS);
    assert_eq!(std::fs::read(dir.join("tokenizer.json")).unwrap(), TOKENIZER);
    assert!(!dir.join("model.safetensors.part").exists());
    assert!(missing(&files, &dir).is_empty());
    let seen = seen.lock().unwrap().clone();
    let total = (WEIGHTS.len() + TOKENIZER.len()) as u64;
    assert_eq!(seen.first(), Some(&(0, total)));
    assert_eq!(seen.last(), Some(&(total, total)));
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "progress only grows: {seen:?}");
    assert_eq!(server.hits.load(Ordering::SeqCst), 2);

    // Present with the right hash: nothing is fetched again.
    fetch(&client(), &files, &dir, Some(&server.base), |_, _| {}).await.unwrap();
    assert_eq!(server.hits.load(Ordering::SeqCst), 2);

    // A damaged file is fetched again.
    std::fs::write(dir.join("tokenizer.json"), b"damaged").unwrap();
    fetch(&client(), &files, &dir, Some(&server.base), |_, _| {}).await.unwrap();
    assert_eq!(server.hits.load(Ordering::SeqCst), 3);
    assert_eq!(std::fs::read(dir.join("tokenizer.json")).unwrap(), TOKENIZER);
}

#[tokio::test]
async fn a_checksum_mismatch_deletes_the_download() {
    let scratch = tempfile::tempdir().unwrap();
    let mut files = real_files(scratch.path()).await;
    files[1].sha256 = "0000000000000000000000000000000000000000000000000000000000000000";
    let server = serve(served()).await;
    let dir = scratch.path().join("minilm");
    let err = fetch(&client(), &files, &dir, Some(&server.base), |_, _| {}).await.unwrap_err();
    match &err {
        RetrievalError::Checksum { file, expected, actual } => {
            assert_eq!(file, "tokenizer.json");
            assert_eq!(expected, files[1].sha256);
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
async fn http_errors_and_unreachable_servers_are_reported() {
    let scratch = tempfile::tempdir().unwrap();
    let files = real_files(scratch.path()).await;
    let server = serve(HashMap::new()).await;
    let err = fetch(&client(), &files, scratch.path(), Some(&server.base), |_, _| {}).await.unwrap_err();
    assert!(matches!(err, RetrievalError::Http { status: 404, .. }), "{err:?}");
    assert!(err.to_string().contains("model.safetensors") && err.to_string().contains("404"), "{err}");

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = fetch(&client(), &files, scratch.path(), Some(&format!("http://127.0.0.1:{port}")), |_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, RetrievalError::Unreachable { .. }), "{err:?}");
}

#[test]
fn the_minilm_files_are_huggingface_s() {
    assert_eq!(MINILM_FILES.len(), 2);
    for f in MINILM_FILES {
        assert!(
            f.url.starts_with("https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/")
        );
        assert!(f.url.ends_with(f.name));
        assert_eq!(f.sha256.len(), 64);
    }
}
