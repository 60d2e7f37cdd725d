#![allow(clippy::unwrap_used)]
//! `perch transcribe`, `perch dictate` (from a virtual ALSA microphone) and `perch voice`, run
//! as a user runs them, with the real tiny.en model and speech from espeak-ng.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SENTENCE: &str = "Please take a screenshot of my editor.";

fn test_model() -> String {
    let path = std::env::var_os("PERCH_WHISPER_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/perch/models/ggml-tiny.en.bin")
    });
    assert!(path.is_file(), "{} is missing: run `make deps`", path.display());
    path.display().to_string()
}

fn perch(data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_perch"));
    command.env("PERCH_DATA_DIR", data_dir).env_remove("PERCH_WHISPER_MIRROR");
    command
}

fn run(data_dir: &Path, args: &[&str]) -> Output {
    perch(data_dir).args(args).output().expect("perch runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn speak(path: &Path) {
    let ok = Command::new("espeak-ng").args(["-s", "150", "-w"]).arg(path).arg(SENTENCE).status();
    assert!(ok.is_ok_and(|s| s.success()), "espeak-ng is missing: scripts/setup-system.sh --test");
}

fn words(text: &str) -> String {
    text.to_lowercase().chars().filter(|c| c.is_alphanumeric() || c.is_whitespace()).collect()
}

#[test]
fn transcribe_prints_the_words_of_a_wav_file() {
    let tmp = tempfile::tempdir().unwrap();
    let wav = tmp.path().join("question.wav");
    speak(&wav);
    let model = test_model();
    let out = run(tmp.path(), &["transcribe", wav.to_str().unwrap(), "--model", &model, "--language", "en"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(words(&text(&out.stdout)).trim(), words(SENTENCE));
}

#[test]
fn bad_input_gets_a_clear_message_and_a_failing_status() {
    let tmp = tempfile::tempdir().unwrap();
    let model = test_model();
    let notes = tmp.path().join("notes.wav");
    std::fs::write(&notes, "not audio at all").unwrap();
    let wav = tmp.path().join("question.wav");
    speak(&wav);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["transcribe", notes.to_str().unwrap(), "--model", &model], "not a WAV file"),
        (vec!["transcribe", "/nowhere/missing.wav", "--model", &model], "missing.wav"),
        (vec!["transcribe", wav.to_str().unwrap(), "--model", "huge"], "no whisper model called \"huge\""),
        (vec!["transcribe", wav.to_str().unwrap()], "perch voice models download tiny.en"),
        (vec!["transcribe", wav.to_str().unwrap(), "--model", "/nowhere/model.bin"], "not downloaded"),
        (vec!["transcribe", wav.to_str().unwrap(), "--model", notes.to_str().unwrap()], "cannot be used"),
        (vec!["transcribe", wav.to_str().unwrap(), "--model", &model, "--language", "xx"], "not a language"),
        (vec!["voice", "models", "download", "enormous"], "no whisper model called"),
    ];
    for (args, expected) in cases {
        let out = run(tmp.path(), &args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = text(&out.stderr);
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn models_are_listed_with_their_needs_and_a_download_is_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(tmp.path(), &["voice", "models", "list", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["tiny.en", "tiny", "base.en", "base", "small.en", "small"]);
    assert!(
        list.as_array()
            .unwrap()
            .iter()
            .all(|m| m["state"] == "absent" && m["memory_mb"].as_u64() > Some(200))
    );
    let table = text(&run(tmp.path(), &["voice", "models"]).stdout);
    assert!(table.contains("disk  78 MB") && table.contains("memory ~ 852 MB"), "{table}");

    // A mirror that serves the wrong bytes: the download is refused by its SHA-256.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut request = [0u8; 2048];
        let _ = std::io::Read::read(&mut socket, &mut request);
        let body = vec![b'x'; 1000];
        let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len());
        socket.write_all(head.as_bytes()).unwrap();
        socket.write_all(&body).unwrap();
    });
    let out = perch(tmp.path())
        .args(["voice", "models", "download", "tiny"])
        .env("PERCH_WHISPER_MIRROR", &base)
        .output()
        .unwrap();
    server.join().unwrap();
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("does not match its checksum"), "{}", text(&out.stderr));
    let out = run(tmp.path(), &["voice", "models", "delete", "tiny"]);
    assert!(out.status.success() && text(&out.stdout).contains("Deleted tiny"), "{}", text(&out.stderr));
}

#[test]
fn dictate_records_from_a_virtual_microphone_until_enter() {
    let tmp = tempfile::tempdir().unwrap();
    let wav = tmp.path().join("speech.wav");
    speak(&wav);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/voice/virtual-microphone.sh");
    let made = Command::new(script).arg(&wav).arg(tmp.path().join("alsa")).output().unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    let config = text(&made.stdout).trim().to_owned();

    let devices =
        perch(tmp.path()).args(["voice", "devices"]).env("ALSA_CONFIG_PATH", &config).output().unwrap();
    let listed = text(&devices.stdout);
    assert!(listed.contains("Perch test microphone  (48000 Hz, 2 channel(s))"), "{listed}");

    let saved = tmp.path().join("recording.wav");
    let model = test_model();
    let mut child = perch(tmp.path())
        .args([
            "dictate",
            "--device",
            "Perch test microphone",
            "--model",
            &model,
            "--save",
            saved.to_str().unwrap(),
        ])
        .env("ALSA_CONFIG_PATH", &config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The recording runs until Enter; the sentence lasts under three seconds.
    std::thread::sleep(std::time::Duration::from_secs(4));
    child.stdin.take().unwrap().write_all(b"\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("Listening on \"Perch test microphone\" (48000 Hz, 2 channel(s)"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(words(&text(&out.stdout)).trim(), words(SENTENCE));
    let (recorded, info) = perch_core::voice::wav::read_wav(&saved).unwrap();
    assert_eq!(info.sample_rate, 16_000);
    assert!(recorded.len() > 16_000 * 2, "the whole sentence was recorded");
}

#[test]
fn a_reader_that_goes_away_ends_the_listing_quietly() {
    // `perch voice devices | head -0`: the pipe's reading end is closed before perch writes.
    let tmp = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out =
        perch(tmp.path()).args(["voice", "devices"]).stdout(writer).stderr(Stdio::piped()).output().unwrap();
    let said = text(&out.stderr);
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(out.status.code(), Some(141), "as a shell reports a closed pipe: {said}");
    // Nothing was recorded as a crash, so the next command opens with no crash notice.
    let crashes = tmp.path().join("crashes");
    let reports = std::fs::read_dir(&crashes).map(|d| d.count()).unwrap_or(0);
    assert_eq!(reports, 0, "a crash report was written in {}", crashes.display());
    let next = run(tmp.path(), &["voice", "devices"]);
    assert!(
        next.status.success() && !text(&next.stderr).contains("unexpected error"),
        "{}",
        text(&next.stderr)
    );
}

/// `perch say --out` in the natural voice (PyPI's Piper voice, through ONNX Runtime), heard back
/// by `perch transcribe`; espeak-ng when no natural voice is there; bad input refused.
#[test]
fn say_writes_speech_that_transcribe_hears() {
    let tmp = tempfile::tempdir().unwrap();
    let voice = std::env::var("PERCH_PIPER_TEST_VOICE").unwrap_or_default();
    assert!(Path::new(&voice).is_file(), "PERCH_PIPER_TEST_VOICE is missing: run the tests through make");
    let model = test_model();
    for (chosen, note) in [(voice.as_str(), None), ("auto", Some("Speaking with espeak-ng"))] {
        let wav = tmp.path().join("said.wav");
        let said = run(tmp.path(), &["say", "--voice", chosen, "--out", wav.to_str().unwrap(), SENTENCE]);
        assert!(said.status.success(), "{}", text(&said.stderr));
        // A fresh data folder has no natural voice downloaded: "auto" says why espeak-ng speaks.
        assert_eq!(
            text(&said.stderr).contains("Speaking with espeak-ng"),
            note.is_some(),
            "{}",
            text(&said.stderr)
        );
        let heard =
            run(tmp.path(), &["transcribe", wav.to_str().unwrap(), "--model", &model, "--language", "en"]);
        assert!(heard.status.success(), "{}", text(&heard.stderr));
        let heard = words(&text(&heard.stdout));
        if note.is_some() {
            // espeak-ng says a text the same way every time: every word is heard.
            assert_eq!(heard.trim(), words(SENTENCE), "in the voice {chosen}");
        } else {
            // A Piper voice draws noise as it speaks (VITS), so the audio differs run to run and
            // whisper tiny may mishear a small word ("the" for "a") or split a compound ("screen
            // shot"): counted in letters, at most about one in seven.
            let ler = perch_core::voice::text::letter_error_rate(SENTENCE, &heard);
            assert!(ler <= 0.15, "in the voice {chosen} whisper heard {heard:?} (letter error rate {ler})");
        }
    }
    let nothing = run(tmp.path(), &["say", "--out", "/tmp/x.wav", "   "]);
    assert!(!nothing.status.success());
    assert!(text(&nothing.stderr).contains("nothing to say"), "{}", text(&nothing.stderr));
    let listed = run(tmp.path(), &["voices", "list", "--json"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    assert!(text(&listed.stdout).contains("\"en_US-lessac-medium\""));
}
