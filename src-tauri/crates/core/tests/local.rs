#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! Local models through the engine, with a real model (SmolLM2-135M from PyPI) run by the real
//! `perch-llm` sidecar (built beside the tests: `cargo build -p perch-llm`): the turn, Stop, the
//! context limit, damaged files, memory, a killed sidecar, the idle stop, and downloads from a
//! loopback server.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use perch_core::Engine;
use perch_core::agent::{TurnEvent, TurnKind, TurnRequest, TurnSink, run_turn, thread};
use perch_core::local::{LocalError, LocalSettings, ModelSource, RuntimeState};
use perch_core::paths::{DataDir, DataDirSource, Resolved};
use perch_core::prices;
use perch_core::store::{Message, MessageStatus};
use perch_llm_protocol::test_support::smollm2_gguf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Default, Clone)]
struct Collect(Arc<Mutex<Vec<TurnEvent>>>);

impl TurnSink for Collect {
    fn send(&self, event: TurnEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Collect {
    fn texts(&self) -> usize {
        self.0.lock().unwrap().iter().filter(|e| matches!(e, TurnEvent::Text(_))).count()
    }
}

struct Setup {
    tmp: tempfile::TempDir,
    engine: Engine,
}

/// An engine with the test model added as `local:smollm2` and `local` settings for the test.
async fn setup(change: impl FnOnce(&mut LocalSettings)) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let dir =
        DataDir::prepare(Resolved { path: tmp.path().join("data"), source: DataDirSource::Env }).unwrap();
    let engine = Engine::start(dir).await.unwrap();
    let mut local = LocalSettings { context_length: 1024, max_answer_tokens: 48, ..LocalSettings::default() };
    change(&mut local);
    engine.settings().update(|s| s.local = local).await.unwrap();
    engine.local().add(&smollm2_gguf(), Some("smollm2")).await.unwrap();
    Setup { tmp, engine }
}

fn ask(text: &str) -> TurnRequest {
    TurnRequest {
        conversation_id: None,
        model: "local:smollm2".into(),
        kind: TurnKind::Ask {
            text: text.into(),
            images: Vec::new(),
            files: Vec::new(),
            selections: Vec::new(),
        },
        run_id: Some(format!("run-{}", text.len())),
    }
}

/// Polls `check` every 50 ms for up to `secs`.
async fn eventually<T>(secs: u64, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    for _ in 0..secs * 20 {
        if let Some(v) = check() {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_model_answers_through_the_turn_with_usage_and_no_cost() {
    let s = setup(|_| {}).await;
    let sink = Collect::default();
    let answer = run_turn(s.engine.agent(), ask("What is the capital of France?"), &sink).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete, "{:?}", answer.error);
    assert!(!answer.content.trim().is_empty());
    assert!(sink.texts() >= 2, "streamed in pieces");
    assert!(answer.input_tokens.unwrap() > 20 && answer.output_tokens.unwrap() > 0, "{answer:?}");
    assert!(!answer.content.contains("<|im_"), "no template tokens: {}", answer.content);

    let detail = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    let view = thread::view(&detail, &[], &prices::merged(&[]));
    assert_eq!(view.messages.last().unwrap().cost, Some(0.0), "local answers cost nothing");

    // The model stays loaded between answers: the same process answers the next question.
    let pid = s.engine.local().runtime().status().pid.unwrap();
    let mut follow = ask("And of Italy?");
    follow.conversation_id = Some(answer.conversation_id.clone());
    let second = run_turn(s.engine.agent(), follow, &Collect::default()).await.unwrap();
    assert_eq!(second.status, MessageStatus::Complete);
    assert_eq!(s.engine.local().runtime().status().pid, Some(pid));

    // The models list shows it with its context length and capabilities.
    let settings = s.engine.settings().get().await;
    let listing = s.engine.registry(&settings).list_models(false).await;
    let local = listing.iter().find(|p| p.provider == "local").unwrap();
    assert_eq!(local.models[0].id, "local:smollm2");
    assert_eq!(local.models[0].context_length, Some(1024));
    assert!(!local.models[0].capabilities.tools, "SmolLM2's template takes no tools");
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_keeps_what_arrived_and_the_model_answers_again() {
    let s = setup(|l| l.max_answer_tokens = 300).await;
    let sink = Collect::default();
    let request = ask("Write a long story about a lighthouse keeper and the sea.");
    let run_id = request.run_id.clone().unwrap();
    let engine = s.engine.clone();
    let turn = tokio::spawn({
        let sink = sink.clone();
        async move { run_turn(engine.agent(), request, &sink).await }
    });
    eventually(120, "the answer to start", || (sink.texts() >= 3).then_some(())).await;
    assert!(s.engine.runs().cancel(&run_id));
    let answer: Message = turn.await.unwrap().unwrap();
    assert_eq!(answer.status, MessageStatus::Stopped);
    assert!(!answer.content.is_empty(), "what arrived is saved");
    eventually(30, "the runtime to be ready", || {
        (s.engine.local().runtime().status().state == RuntimeState::Ready).then_some(())
    })
    .await;
    let next = run_turn(s.engine.agent(), ask("Say hello."), &Collect::default()).await.unwrap();
    assert_eq!(next.status, MessageStatus::Complete, "{:?}", next.error);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_longer_than_the_context_is_refused_clearly() {
    let s = setup(|l| l.context_length = 256).await;
    let answer = run_turn(
        s.engine.agent(),
        ask(&"Please read this sentence carefully. ".repeat(80)),
        &Collect::default(),
    )
    .await
    .unwrap();
    assert_eq!(answer.status, MessageStatus::Error);
    let error = answer.error.unwrap();
    assert!(error.contains("longer than local:smollm2 can read"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn damaged_files_and_models_too_large_are_refused_before_loading() {
    let s = setup(|l| l.memory_limit_mb = 100).await;
    let dir = s.tmp.path();
    let bytes = std::fs::read(smollm2_gguf()).unwrap();
    let cut = write(dir, "cut.gguf", &bytes[..bytes.len() / 3]);
    let e = s.engine.local().add(&cut, None).await.unwrap_err();
    assert!(matches!(e, LocalError::BadFile(_)) && e.to_string().contains("cut short"), "{e}");
    let text = write(dir, "notes.gguf", b"these are my notes, not a model");
    let e = s.engine.local().add(&text, None).await.unwrap_err();
    assert!(e.to_string().contains("is not a GGUF model file"), "{e}");
    let mut garbled = bytes.clone();
    garbled[24..32].copy_from_slice(&[0xff; 8]);
    let e = s.engine.local().add(&write(dir, "garbled.gguf", &garbled), None).await.unwrap_err();
    assert!(e.to_string().contains("is damaged"), "{e}");

    // 100 MiB is less than the model needs: refused, and the sidecar never started.
    let answer = run_turn(s.engine.agent(), ask("hi"), &Collect::default()).await.unwrap();
    let error = answer.error.unwrap();
    assert!(error.contains("needs about") && error.contains("the limit set in Settings"), "{error}");
    assert_eq!(s.engine.local().runtime().status().pid, None);

    // A file damaged after it was added: listed with its problem, refused when used.
    s.engine.settings().update(|s| s.local.memory_limit_mb = 0).await.unwrap();
    let copy = write(dir, "copy.gguf", &bytes);
    s.engine.local().add(&copy, Some("copy")).await.unwrap();
    std::fs::write(&copy, &bytes[..bytes.len() - 4096]).unwrap();
    let listed = s.engine.local().get("copy").await.unwrap();
    assert!(listed.problem.unwrap().contains("cut short"));
    let mut request = ask("hi");
    request.model = "local:copy".into();
    let answer = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap();
    assert!(answer.error.unwrap().contains("cut short"));
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_sidecar_killed_mid_answer_is_reported_and_started_again() {
    let s = setup(|l| l.max_answer_tokens = 300).await;
    let sink = Collect::default();
    let engine = s.engine.clone();
    let turn = tokio::spawn({
        let sink = sink.clone();
        async move { run_turn(engine.agent(), ask("Write a long story about a lighthouse keeper."), &sink).await }
    });
    eventually(120, "the answer to start", || (sink.texts() >= 2).then_some(())).await;
    let pid = s.engine.local().runtime().status().pid.unwrap();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL)
        .unwrap();
    let answer = turn.await.unwrap().unwrap();
    assert_eq!(answer.status, MessageStatus::Error);
    assert!(!answer.content.is_empty(), "the partial answer is saved");
    let error = answer.error.unwrap();
    assert!(error.contains("killed by signal 9"), "{error}");

    let status = eventually(120, "the runtime to be started again", || {
        let st = s.engine.local().runtime().status();
        (st.restarts == 1 && st.state == RuntimeState::Ready).then_some(st)
    })
    .await;
    assert_ne!(status.pid, Some(pid));
    assert!(status.message.unwrap().contains("stopped unexpectedly"));
    let next = run_turn(s.engine.agent(), ask("Say hello."), &Collect::default()).await.unwrap();
    assert_eq!(next.status, MessageStatus::Complete, "{:?}", next.error);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_engines_shutdown_ends_the_local_runtime() {
    let s = setup(|_| {}).await;
    run_turn(s.engine.agent(), ask("Say hello."), &Collect::default()).await.unwrap();
    let pid = s.engine.local().runtime().status().pid.unwrap();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    s.engine.shutdown(Duration::from_secs(2)).await;
    assert_eq!(s.engine.local().runtime().status().state, RuntimeState::Stopped);
    eventually(10, "the runtime to be gone", || (!Path::new(&format!("/proc/{pid}")).exists()).then_some(()))
        .await;
}

/// A runtime that dies while loading, every time, is started again three times and then left
/// for the user's next question (which starts the count over). Its program is a script that
/// answers `ready` and dies on the load, as a llama.cpp crash on a bad model would.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_runtime_that_dies_loading_every_time_is_a_crash_loop() {
    use std::os::unix::fs::PermissionsExt;
    let s = setup(|_| {}).await;
    let script = s.tmp.path().join("dies-loading");
    let starts = s.tmp.path().join("starts");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho started >> '{}'\necho '{{\"event\":\"ready\",\"version\":\"t\",\"system_info\":\"\"}}'\nread line\nkill -9 $$\n",
            starts.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let runtime = perch_core::local::Runtime::new(Some(script));
    let model = s.engine.local().list().await.into_iter().find(|m| m.name == "smollm2").unwrap();
    let settings = LocalSettings::default();
    let params = perch_llm_protocol::wire::ChatParams::default();
    let first = runtime.chat(&model, &settings, params.clone()).await.map(|_| ()).unwrap_err();
    assert!(first.to_string().contains("while loading"), "{first}");
    let status = eventually(60, "the restarts to end", || {
        let st = runtime.status();
        (st.state == RuntimeState::Crashed && st.message.as_deref().is_some_and(|m| m.contains("in a row")))
            .then_some(st)
    })
    .await;
    assert_eq!(status.restarts, 3, "{status:?}");
    let count = || std::fs::read_to_string(&starts).unwrap().lines().count();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count(), 4, "the first start and three restarts, then no more");
    // The next question is the user asking: it starts again, and the loop is counted anew.
    assert!(runtime.chat(&model, &settings, params).await.is_err());
    eventually(60, "the second round of restarts", || (runtime.status().restarts == 6).then_some(())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_model_is_unloaded_and_its_memory_freed() {
    let s = setup(|l| l.keep_alive_secs = 1).await;
    run_turn(s.engine.agent(), ask("Say hello."), &Collect::default()).await.unwrap();
    let runtime = s.engine.local().runtime();
    let pid = runtime.status().pid.unwrap();
    let held = runtime.memory().unwrap();
    assert!(held > 50 << 20, "the loaded model takes memory: {held}");
    let status = eventually(30, "the idle stop", || {
        let st = runtime.status();
        (st.state == RuntimeState::Stopped).then_some(st)
    })
    .await;
    assert!(status.message.unwrap().contains("without use"));
    assert_eq!(runtime.memory(), None);
    eventually(10, "the process to be gone", || (!Path::new(&format!("/proc/{pid}")).exists()).then_some(()))
        .await;
    // Used again, it starts again.
    let answer = run_turn(s.engine.agent(), ask("Say hello."), &Collect::default()).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete);
}

/// Serves `bytes` at `/model.gguf`, honouring `Range`; the first request is cut after `cut`
/// bytes. Returns the URL and the Range headers seen.
async fn serve(bytes: Vec<u8>, cut: usize) -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/model.gguf", listener.local_addr().unwrap());
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let seen = ranges.clone();
    let bytes = Arc::new(bytes);
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).await.unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).to_lowercase();
            let from = head
                .lines()
                .find_map(|l| l.strip_prefix("range: bytes="))
                .map(|r| r.trim_end_matches('-').to_owned());
            seen.lock().unwrap().push(from.clone());
            let start = from.and_then(|f| f.parse::<usize>().ok()).unwrap_or(0);
            let (status, range) = if start > 0 {
                (
                    "206 Partial Content",
                    format!("Content-Range: bytes {start}-{}/{}\r\n", bytes.len() - 1, bytes.len()),
                )
            } else {
                ("200 OK", String::new())
            };
            let body = &bytes[start..];
            let head = format!(
                "HTTP/1.1 {status}\r\n{range}Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let end = if std::mem::take(&mut first) { cut.min(body.len()) } else { body.len() };
            let _ = socket.write_all(&body[..end]).await;
            let _ = socket.shutdown().await;
        }
    });
    (url, ranges)
}

#[tokio::test(flavor = "multi_thread")]
async fn downloads_resume_report_progress_and_are_checked() {
    let s = setup(|_| {}).await;
    let bytes = std::fs::read(smollm2_gguf()).unwrap();
    let sha = perch_download::hash_file(&smollm2_gguf()).await.unwrap();
    let (url, ranges) = serve(bytes.clone(), bytes.len() / 2).await;
    let file = perch_download::RemoteFile {
        name: "tiny-chat.gguf".into(),
        url: url.into(),
        sha256: sha.clone().into(),
        size: bytes.len() as u64,
    };
    let local = s.engine.local();
    let mut seen = Vec::new();
    let cut = local.download_file(&file, "tiny", |p| seen.push(p.done)).await.unwrap_err();
    assert!(matches!(cut, LocalError::Download(_)), "{cut}");
    assert!(seen.iter().any(|d| *d > 0), "progress was reported");
    let part = perch_download::part_path(local.dir(), &file);
    assert_eq!(std::fs::metadata(&part).unwrap().len(), bytes.len() as u64 / 2, "what arrived is kept");

    let mut last = 0;
    let model = local.download_file(&file, "tiny", |p| last = p.done).await.unwrap();
    assert_eq!(last, bytes.len() as u64);
    assert_eq!(
        ranges.lock().unwrap().last().unwrap().as_deref(),
        Some((bytes.len() / 2).to_string().as_str()),
        "resumed"
    );
    assert_eq!((model.name.as_str(), model.source), ("tiny-chat", ModelSource::Folder));
    assert!(model.problem.is_none());
    assert!(local.list().await.iter().any(|m| m.name == "tiny-chat"));

    // Bytes that do not match the checksum are refused and not kept.
    let (url, _) = serve(vec![7u8; 4096], usize::MAX).await;
    let wrong = perch_download::RemoteFile {
        name: "wrong.gguf".into(),
        url: url.into(),
        sha256: sha.into(),
        size: 4096,
    };
    let e = local.download_file(&wrong, "wrong", |_| {}).await.unwrap_err();
    assert!(e.to_string().contains("does not match its checksum"), "{e}");
    assert!(
        !local.dir().join("wrong.gguf").exists() && !perch_download::part_path(local.dir(), &wrong).exists()
    );
    // Deleting a downloaded file removes it; deleting an added one leaves the file.
    local.delete("tiny-chat").await.unwrap();
    assert!(!local.dir().join("tiny-chat.gguf").exists());
    assert_eq!(local.delete("smollm2").await.unwrap(), perch_core::local::Deleted::Forgotten);
    assert!(smollm2_gguf().exists());
}
