#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! A capture on the shelf rides on the next question: the model's copy (downscaled, the
//! original kept) reaches each provider's fake in that service's own request shape, and the
//! capture leaves the shelf for the conversation's attachments. Keys come from the providers'
//! environment variables, set for a child process of this test binary (a test cannot change its
//! own environment safely), so no keyring is touched.

use std::process::Command;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::{Rgba, RgbaImage};
use perch_core::Engine;
use perch_core::agent::{ImageInput, TurnEvent, TurnKind, TurnRequest, TurnSink, run_turn};
use perch_core::capture::Prepare;
use perch_core::paths::{DataDir, DataDirSource, Resolved};
use perch_core::settings::{BaseUrl, CompatibleServer};
use perch_fake_llm::{Dialect, FakeLlm};
use serde_json::Value;

const INNER: &str = "PERCH_CAPTURE_TURN_INNER";

struct Ignore;
impl TurnSink for Ignore {
    fn send(&self, _: TurnEvent) {}
}

#[test]
fn captures_reach_every_provider_in_its_own_shape() {
    if std::env::var_os(INNER).is_some() {
        return;
    }
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "inner_turns", "--ignored", "--nocapture", "--test-threads=1"])
        .env(INNER, "1")
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("GEMINI_API_KEY", "test-key")
        .env("PERCH_KEY_STORE", "file")
        .env_remove("OLLAMA_HOST")
        .env_remove("OPENAI_BASE_URL")
        .status()
        .unwrap();
    assert!(status.success());
}

/// A screen-like picture larger than the model's limit.
fn picture() -> RgbaImage {
    RgbaImage::from_fn(3000, 2000, |x, y| {
        if (x / 100 + y / 100) % 2 == 0 { Rgba([250, 250, 250, 255]) } else { Rgba([20, 90, 200, 255]) }
    })
}

/// Where each service's request carries the image: (media type, base64 data).
fn image_in(dialect: Dialect, body: &Value) -> (String, String) {
    let messages = match dialect {
        Dialect::Gemini => &body["contents"],
        _ => &body["messages"],
    };
    let last = messages.as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap();
    match dialect {
        Dialect::Ollama => ("image/png".into(), last["images"][0].as_str().unwrap().to_owned()),
        Dialect::OpenAi => {
            let url = last["content"].as_array().unwrap().iter().find(|p| p["type"] == "image_url").unwrap()
                ["image_url"]["url"]
                .as_str()
                .unwrap();
            let (head, data) = url.split_once(";base64,").unwrap();
            (head.trim_start_matches("data:").to_owned(), data.to_owned())
        }
        Dialect::Anthropic => {
            let part = last["content"].as_array().unwrap().iter().find(|p| p["type"] == "image").unwrap();
            assert_eq!(part["source"]["type"], "base64");
            (
                part["source"]["media_type"].as_str().unwrap().into(),
                part["source"]["data"].as_str().unwrap().into(),
            )
        }
        Dialect::Gemini => {
            let part = last["parts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p.get("inline_data").is_some() || p.get("inlineData").is_some())
                .unwrap();
            let inline = part.get("inline_data").or_else(|| part.get("inlineData")).unwrap();
            let mime = inline.get("mime_type").or_else(|| inline.get("mimeType")).unwrap();
            (mime.as_str().unwrap().into(), inline["data"].as_str().unwrap().into())
        }
    }
}

#[tokio::test]
#[ignore = "run by captures_reach_every_provider_in_its_own_shape, with the providers' keys set"]
async fn inner_turns() {
    if std::env::var_os(INNER).is_none() {
        return;
    }
    for (dialect, model) in [
        (Dialect::Ollama, "ollama:qwen3-vl:8b-instruct"),
        (Dialect::OpenAi, "fakeopenai:gpt-4.1"),
        (Dialect::Anthropic, "anthropic:claude-sonnet-4-5"),
        (Dialect::Gemini, "gemini:gemini-2.5-flash"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir =
            DataDir::prepare(Resolved { path: tmp.path().join("data"), source: DataDirSource::Env }).unwrap();
        let engine = Engine::start(dir).await.unwrap();
        let fake = FakeLlm::start(dialect).await.unwrap();
        let url = BaseUrl::try_from(fake.url()).unwrap();
        engine
            .settings()
            .update(|s| match dialect {
                Dialect::Ollama => s.providers.ollama_url = url,
                Dialect::OpenAi => s.providers.compatible.push(CompatibleServer {
                    name: "fakeopenai".into(),
                    url,
                    needs_key: false,
                }),
                Dialect::Anthropic => s.providers.anthropic_url = url,
                Dialect::Gemini => s.providers.gemini_url = url,
            })
            .await
            .unwrap();
        let capture = engine
            .captures()
            .shelf()
            .add(&picture(), "Monitor TEST".into(), Prepare { max_edge: 1568, jpeg_quality: 85 })
            .unwrap();
        let model_copy = engine.captures().files(&capture.id).await.unwrap().model;

        let request = TurnRequest {
            conversation_id: None,
            model: model.into(),
            kind: TurnKind::Ask {
                text: "What is on my screen?".into(),
                files: Vec::new(),
                selections: Vec::new(),
                images: vec![ImageInput {
                    name: capture.source.clone(),
                    mime: "image/png".into(),
                    base64: String::new(),
                    capture: Some(capture.id.clone()),
                }],
            },
            run_id: None,
        };
        let answer =
            run_turn(engine.agent(), request, &Ignore).await.unwrap_or_else(|e| panic!("{dialect:?}: {e}"));

        let sent = fake.chat_requests().pop().unwrap();
        let (mime, data) = image_in(dialect, &sent.body);
        assert_eq!(mime, "image/png", "{dialect:?}");
        let bytes = STANDARD.decode(data).unwrap();
        assert_eq!(bytes, model_copy, "{dialect:?}: the model's copy, byte for byte");
        let seen = image::load_from_memory(&bytes).unwrap();
        assert_eq!(
            (seen.width(), seen.height()),
            (1568, 1045),
            "{dialect:?}: downscaled to the longest edge"
        );

        // Off the shelf, into the conversation: the model's copy and the full-size original.
        assert!(engine.captures().pending().is_empty(), "{dialect:?}");
        let attachments = engine.store().attachments(&answer.conversation_id).await.unwrap();
        let kinds: Vec<&str> = attachments.iter().map(|a| a.kind.as_str()).collect();
        assert_eq!(kinds, ["image", "file"], "{dialect:?}");
        let original = std::fs::read(engine.data_dir().attachments_dir().join(&attachments[1].path)).unwrap();
        assert_eq!(image::load_from_memory(&original).unwrap().to_rgba8(), picture(), "{dialect:?}");
        assert_eq!(std::fs::read_dir(engine.data_dir().captures_dir()).unwrap().count(), 0, "{dialect:?}");
    }
}

#[tokio::test]
async fn a_capture_that_is_gone_fails_the_question_before_anything_is_sent() {
    let tmp = tempfile::tempdir().unwrap();
    let dir =
        DataDir::prepare(Resolved { path: tmp.path().join("data"), source: DataDirSource::Env }).unwrap();
    let engine = Engine::start(dir).await.unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let url = BaseUrl::try_from(fake.url()).unwrap();
    engine.settings().update(|s| s.providers.ollama_url = url).await.unwrap();
    let request = TurnRequest {
        conversation_id: None,
        model: "ollama:qwen3-vl:8b-instruct".into(),
        kind: TurnKind::Ask {
            text: "And this?".into(),
            files: Vec::new(),
            selections: Vec::new(),
            images: vec![ImageInput {
                name: "old".into(),
                mime: "image/png".into(),
                base64: String::new(),
                capture: Some("0123456789ab".into()),
            }],
        },
        run_id: None,
    };
    let err = run_turn(engine.agent(), request, &Ignore).await.unwrap_err();
    assert!(err.to_string().contains("there is no capture 0123456789ab"), "{err}");
    assert!(fake.chat_requests().is_empty());
}
