#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! Each provider client against a loopback fake that speaks that service's wire format:
//! text, thinking, tool calls, usage, errors before and during the stream, malformed chunks,
//! characters split across network chunks, dropped and stalled connections.

use perch_test_support::poll;

use std::time::Duration;

use futures::StreamExt;
use perch_fake_llm::{Dialect, FakeLlm, FakeModel, Script, Step};
use perch_providers::http::Timeouts;
use perch_providers::{
    Anthropic, ChatMessage, ChatRequest, Gemini, ImageData, Ollama, OpenAi, Provider, ProviderError,
    StopReason, StreamEvent, ToolSpec, Usage,
};
use serde_json::json;

const KEY: &str = "test-key-0123456789";
const DIALECTS: [Dialect; 4] = [Dialect::Ollama, Dialect::OpenAi, Dialect::Anthropic, Dialect::Gemini];

fn timeouts() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(2),
        first_byte: Duration::from_secs(5),
        idle: Duration::from_millis(400),
    }
}

async fn fake(dialect: Dialect) -> FakeLlm {
    let fake = FakeLlm::start(dialect).await.unwrap();
    if dialect != Dialect::Ollama {
        fake.require_key(KEY);
    }
    fake
}

fn client(dialect: Dialect, fake: &FakeLlm, key: &str) -> Box<dyn Provider> {
    let url = fake.url();
    match dialect {
        Dialect::Ollama => Box::new(Ollama::new(&url, timeouts())),
        Dialect::OpenAi => Box::new(OpenAi::new("openai", &url, Some(key.into()), timeouts())),
        Dialect::Anthropic => Box::new(Anthropic::new(&url, key.into(), timeouts())),
        Dialect::Gemini => Box::new(Gemini::new(&url, key.into(), timeouts())),
    }
}

fn model(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Ollama => "qwen3-vl:8b-instruct",
        Dialect::OpenAi => "gpt-4.1",
        Dialect::Anthropic => "claude-sonnet-4-5",
        Dialect::Gemini => "gemini-2.5-flash",
    }
}

fn request(dialect: Dialect) -> ChatRequest {
    ChatRequest {
        model: model(dialect).into(),
        messages: vec![ChatMessage::System("Be brief.".into()), ChatMessage::user("Hello?")],
        tools: Vec::new(),
        think: true,
        max_output_tokens: None,
        context_window: None,
    }
}

/// Every event, and the error that ended the stream if one did.
async fn run(provider: &dyn Provider, request: ChatRequest) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut stream = match provider.stream_chat(request).await {
        Ok(s) => s,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

fn text_of(events: &[StreamEvent]) -> String {
    events.iter().filter_map(|e| if let StreamEvent::Text(t) = e { Some(t.as_str()) } else { None }).collect()
}

fn thinking_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| if let StreamEvent::Thinking(t) = e { Some(t.as_str()) } else { None })
        .collect()
}

#[tokio::test]
async fn every_provider_streams_thinking_text_usage_and_done() {
    for dialect in DIALECTS {
        let fake = fake(dialect).await;
        fake.push(Script {
            steps: vec![
                Step::Thinking { text: "Let me ".into() },
                Step::Thinking { text: "think.".into() },
                Step::Text { text: "Hello ".into() },
                Step::Text { text: "there, ".into() },
                Step::Text { text: "friend.".into() },
                Step::Usage { input: 42, output: 17 },
                Step::Finish { reason: None },
            ],
            token_delay_ms: 0,
        });
        let provider = client(dialect, &fake, KEY);
        let (events, error) = run(&*provider, request(dialect)).await;
        assert!(error.is_none(), "{dialect:?}: {error:?}");
        assert_eq!(thinking_of(&events), "Let me think.", "{dialect:?}");
        assert_eq!(text_of(&events), "Hello there, friend.", "{dialect:?}");
        assert!(
            events.contains(&StreamEvent::Usage(Usage { input_tokens: 42, output_tokens: 17 })),
            "{dialect:?}: {events:?}"
        );
        assert_eq!(events.last(), Some(&StreamEvent::Done(StopReason::EndTurn)), "{dialect:?}");
        let first_thinking = events.iter().position(|e| matches!(e, StreamEvent::Thinking(_))).unwrap();
        let first_text = events.iter().position(|e| matches!(e, StreamEvent::Text(_))).unwrap();
        assert!(first_thinking < first_text, "{dialect:?}: thinking comes first, as it streamed");
    }
}

#[tokio::test]
async fn requests_carry_the_system_prompt_images_tools_and_the_key() {
    for dialect in DIALECTS {
        let fake = fake(dialect).await;
        let provider = client(dialect, &fake, KEY);
        let mut req = request(dialect);
        req.messages.push(ChatMessage::User {
            text: "What is in this picture?".into(),
            images: vec![ImageData { mime: "image/png".into(), base64: "iVBORw0KGgo=".into() }],
        });
        // A schema as rmcp servers publish it (JSON Schema 2020-12), which Gemini's `parameters`
        // refuses: every provider must send it in a form its service takes.
        req.tools = vec![ToolSpec {
            name: "add".into(),
            description: "Add two numbers".into(),
            input_schema: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": { "a": { "type": "number" }, "b": { "type": ["integer", "null"] } },
                "additionalProperties": false,
            }),
        }];
        let (_, error) = run(&*provider, req).await;
        assert!(error.is_none(), "{dialect:?}: {error:?}");
        let sent = fake.chat_requests().pop().unwrap();
        let body = sent.body.to_string();
        assert!(
            body.contains("Be brief.") && body.contains("iVBORw0KGgo=") && body.contains("Add two numbers"),
            "{dialect:?}: {body}"
        );
        match dialect {
            Dialect::Ollama => assert_eq!(sent.body["think"], true),
            Dialect::OpenAi => {
                assert_eq!(sent.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
                assert_eq!(sent.body["stream_options"]["include_usage"], true);
                assert!(body.contains("data:image/png;base64,iVBORw0KGgo="));
            }
            Dialect::Anthropic => {
                assert_eq!(sent.header("x-api-key"), Some(KEY));
                assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(sent.body["system"], "Be brief.");
                assert_eq!(sent.body["thinking"]["type"], "enabled");
            }
            Dialect::Gemini => {
                assert_eq!(sent.header("x-goog-api-key"), Some(KEY));
                assert_eq!(sent.body["generationConfig"]["thinkingConfig"]["includeThoughts"], true);
                // The schema as published, in the field that takes JSON Schema.
                let declaration = &sent.body["tools"][0]["functionDeclarations"][0];
                assert_eq!(declaration["parametersJsonSchema"]["additionalProperties"], false);
                assert!(declaration.get("parameters").is_none());
            }
        }
    }
}

/// With reasoning off, Ollama is told so (a thinking model left to its default reasons anyway);
/// asking a model that cannot think to think is refused, as Ollama refuses it.
#[tokio::test]
async fn ollama_is_told_when_not_to_think() {
    let fake = fake(Dialect::Ollama).await;
    let provider = client(Dialect::Ollama, &fake, "");
    let mut req = request(Dialect::Ollama);
    req.think = false;
    let (_, error) = run(&*provider, req).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(fake.chat_requests().pop().unwrap().body["think"], false);
    let mut req = request(Dialect::Ollama);
    req.model = "llama3.2:3b".into();
    let (_, error) = run(&*provider, req).await;
    assert!(format!("{error:?}").contains("does not support thinking"), "{error:?}");
}

#[tokio::test]
async fn tool_calls_arrive_whole_with_their_arguments() {
    for dialect in DIALECTS {
        let fake = fake(dialect).await;
        fake.push(Script {
            steps: vec![
                Step::Text { text: "Let me add.".into() },
                Step::ToolCall { name: "add".into(), arguments: json!({ "a": 2, "b": 3 }) },
                Step::ToolCall { name: "divide".into(), arguments: json!({ "a": 1, "b": 0 }) },
                Step::Usage { input: 5, output: 9 },
                Step::Finish { reason: None },
            ],
            token_delay_ms: 0,
        });
        let provider = client(dialect, &fake, KEY);
        let (events, error) = run(&*provider, request(dialect)).await;
        assert!(error.is_none(), "{dialect:?}: {error:?}");
        let calls: Vec<_> = events
            .iter()
            .filter_map(|e| if let StreamEvent::ToolCall(c) = e { Some(c.clone()) } else { None })
            .collect();
        assert_eq!(calls.len(), 2, "{dialect:?}: {events:?}");
        assert_eq!(
            (calls[0].name.as_str(), &calls[0].arguments),
            ("add", &json!({ "a": 2, "b": 3 })),
            "{dialect:?}"
        );
        assert_eq!(calls[1].name, "divide");
        assert_ne!(calls[0].id, calls[1].id);
        assert_eq!(events.last(), Some(&StreamEvent::Done(StopReason::ToolUse)), "{dialect:?}");
    }
}

#[tokio::test]
async fn a_character_split_across_network_chunks_arrives_whole() {
    for dialect in DIALECTS {
        let fake = fake(dialect).await;
        fake.push(Script {
            steps: vec![
                Step::SplitNext,
                Step::Text { text: "héllo wörld — ✓ 日本".into() },
                Step::Finish { reason: None },
            ],
            token_delay_ms: 0,
        });
        let (events, error) = run(&*client(dialect, &fake, KEY), request(dialect)).await;
        assert!(error.is_none(), "{dialect:?}: {error:?}");
        assert_eq!(text_of(&events), "héllo wörld — ✓ 日本", "{dialect:?}");
    }
}

#[tokio::test]
async fn http_errors_become_errors_a_person_can_act_on() {
    for dialect in DIALECTS {
        let fake = fake(dialect).await;
        // A wrong key.
        let (_, error) = run(&*client(dialect, &fake, "wrong"), request(dialect)).await;
        if dialect != Dialect::Ollama {
            let error = error.unwrap();
            assert!(matches!(error, ProviderError::Auth { .. }), "{dialect:?}: {error:?}");
            assert!(error.to_string().contains("was rejected"), "{error}");
        }
        let provider = client(dialect, &fake, KEY);
        // Rate limited, with the delay the service asks for.
        fake.push(Script {
            steps: vec![Step::HttpError {
                status: 429,
                body: "Slow down".into(),
                retry_after: Some("7".into()),
            }],
            token_delay_ms: 0,
        });
        let error = run(&*provider, request(dialect)).await.1.unwrap();
        assert_eq!(
            error,
            ProviderError::RateLimited {
                provider: error_provider(&error),
                retry_after: Some(Duration::from_secs(7))
            },
            "{dialect:?}"
        );
        assert!(error.to_string().contains("try again in 7 s"));
        // A server error.
        fake.push(Script {
            steps: vec![Step::HttpError { status: 500, body: "boom".into(), retry_after: None }],
            token_delay_ms: 0,
        });
        let error = run(&*provider, request(dialect)).await.1.unwrap();
        assert!(matches!(error, ProviderError::Server { status: 500, .. }), "{dialect:?}: {error:?}");
        // A model that does not exist.
        let mut req = request(dialect);
        req.model = "no-such-model".into();
        let error = run(&*provider, req).await.1.unwrap();
        assert!(matches!(error, ProviderError::ModelNotFound { .. }), "{dialect:?}: {error:?}");
        if dialect == Dialect::Ollama {
            let text = error.to_string();
            assert!(text.contains("installed: qwen3-vl:8b-instruct, llama3.2:3b"), "{text}");
        }
    }
}

fn error_provider(e: &ProviderError) -> String {
    match e {
        ProviderError::RateLimited { provider, .. } => provider.clone(),
        _ => String::new(),
    }
}

#[tokio::test]
async fn a_stream_that_breaks_keeps_what_arrived_and_says_why() {
    let breakers = [
        (Step::StreamError { message: "model crashed".into() }, "model crashed"),
        (Step::Raw { data: "{this is not json\n\ndata: {not json either}\n\n".into() }, "malformed"),
        (Step::Disconnect, "closed before the answer was complete"),
    ];
    for dialect in DIALECTS {
        for (breaker, expected) in breakers.clone() {
            let fake = fake(dialect).await;
            fake.push(Script {
                steps: vec![
                    Step::Text { text: "Partial ".into() },
                    Step::Text { text: "answer".into() },
                    breaker.clone(),
                ],
                token_delay_ms: 0,
            });
            let (events, error) = run(&*client(dialect, &fake, KEY), request(dialect)).await;
            assert_eq!(text_of(&events), "Partial answer", "{dialect:?} {breaker:?}");
            let error = error.unwrap_or_else(|| panic!("{dialect:?} {breaker:?}: no error"));
            assert!(matches!(error, ProviderError::Stream { .. }), "{dialect:?} {breaker:?}: {error:?}");
            assert!(error.to_string().contains(expected), "{dialect:?} {breaker:?}: {error}");
        }
    }
}

#[tokio::test]
async fn a_stalled_stream_is_cut_after_the_idle_timeout() {
    for dialect in DIALECTS {
        let fake = fake(dialect).await;
        fake.push(Script {
            steps: vec![Step::Text { text: "Started ".into() }, Step::Stall],
            token_delay_ms: 0,
        });
        let (events, error) = run(&*client(dialect, &fake, KEY), request(dialect)).await;
        assert_eq!(text_of(&events), "Started ");
        // The stream ends with the idle timeout's own error, not a hang or a generic failure.
        assert!(matches!(error, Some(ProviderError::Stalled { .. })), "{dialect:?}: {error:?}");
    }
}

#[tokio::test]
async fn models_are_listed_with_capabilities_and_context_length() {
    for dialect in DIALECTS {
        let fake = fake(dialect).await;
        let models = client(dialect, &fake, KEY).list_models().await.unwrap();
        let first = &models[0];
        assert_eq!(first.name, model(dialect), "{dialect:?}");
        assert!(first.id.ends_with(model(dialect)) && first.id.contains(':'));
        assert!(first.capabilities.tools, "{dialect:?}");
        if dialect != Dialect::OpenAi {
            assert!(first.capabilities.thinking, "{dialect:?}");
        }
        if dialect == Dialect::Ollama {
            assert!(first.capabilities.vision);
            // Trained for 32k, run at the default cap (Ollama's window is Perch's to set).
            assert_eq!(first.context_length, Some(16_384));
            assert!(!models[1].capabilities.vision, "llama3.2:3b has no vision");
        }
    }
}

#[tokio::test]
async fn ollama_model_names_are_read_as_ollama_reads_them() {
    let fake = fake(Dialect::Ollama).await;
    fake.set_models(vec![
        FakeModel::new("llama3.2:latest", &["completion", "tools"], 131_072),
        FakeModel::new("jmorgan/mistral:7b", &["completion"], 32_768),
    ]);
    // A cap above every model's training, so the trained length shows which model was asked.
    let ollama: Box<dyn Provider> = Box::new(Ollama::new(&fake.url(), timeouts()).with_context_cap(1 << 20));
    // A missing tag is `latest`; case, the default namespace and the registry do not matter.
    for name in [
        "llama3.2",
        "llama3.2:latest",
        "Llama3.2",
        "library/llama3.2",
        "registry.ollama.ai/library/llama3.2:latest",
    ] {
        let info = ollama.model_info(name).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(info.name, "llama3.2:latest", "{name}");
        assert_eq!(
            info.context_length,
            Some(131_072),
            "{name}: /api/show was asked about the installed model"
        );
        assert!(info.capabilities.tools, "{name}");
    }
    assert_eq!(ollama.model_info("JMorgan/Mistral:7B").await.unwrap().name, "jmorgan/mistral:7b");
    // A model that truly is missing: another tag, or the same name in another namespace.
    for name in ["llama3.2:1b", "mistral:7b"] {
        let error = ollama.model_info(name).await.unwrap_err();
        assert!(matches!(error, ProviderError::ModelNotFound { .. }), "{name}: {error:?}");
        let text = error.to_string();
        assert!(text.contains(name) && text.contains("llama3.2:latest, jmorgan/mistral:7b"), "{text}");
    }
    // The chat goes out with the name as written, which Ollama resolves the same way.
    let mut req = request(Dialect::Ollama);
    req.model = "llama3.2".into();
    req.think = false; // it cannot think, and Ollama refuses to make it
    let (events, error) = run(&*ollama, req).await;
    assert!(error.is_none(), "{error:?}");
    assert!(!text_of(&events).is_empty());
    assert_eq!(fake.chat_requests().pop().unwrap().body["model"], "llama3.2");
}

#[tokio::test]
async fn ollama_not_running_is_said_quickly_with_what_to_do() {
    let (_held, port) = poll::refusing_port();
    let ollama = Ollama::new(&format!("http://127.0.0.1:{port}"), Timeouts::default());
    // Within 2 s: a refused connection fails at once, and one that never answers is given up
    // at the connect timeout.
    assert!(Timeouts::default().connect <= Duration::from_secs(2));
    let error = run(&ollama, request(Dialect::Ollama)).await.1.unwrap();
    assert!(matches!(error, ProviderError::Unreachable { .. }));
    let text = error.to_string();
    assert!(text.contains("ollama serve") && text.contains("OLLAMA_HOST"), "{text}");
    assert!(matches!(ollama.list_models().await, Err(ProviderError::Unreachable { .. })));
}

#[tokio::test]
async fn complete_collects_the_same_stream() {
    let fake = fake(Dialect::Ollama).await;
    fake.push(Script::answer("one two three"));
    let done = client(Dialect::Ollama, &fake, KEY).complete(request(Dialect::Ollama)).await.unwrap();
    assert_eq!(done.text, "one two three");
    assert_eq!(done.stop, Some(StopReason::EndTurn));
}
