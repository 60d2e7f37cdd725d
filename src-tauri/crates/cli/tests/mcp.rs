#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! `perch mcp` and `perch ask` with tools, against the bundled servers built beside `perch`
//! (as after `cargo build`), a fake Ollama that asks for tool calls, and a fake Streamable HTTP
//! server on the 2026-07-28 protocol that asks for input (`input_required`).

mod common;

use common::{err, out, perch};

use std::sync::{Arc, Mutex};

use perch_fake_llm::{Dialect, FakeLlm, Script, Step};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[test]
fn mcp_call_works_on_the_bundled_demo_right_after_a_build() {
    let tmp = tempfile::tempdir().unwrap();
    let o = perch(tmp.path(), &[], &["mcp", "call", "demo", "add", r#"{"a":2,"b":3}"#]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).trim(), "5");

    let o = perch(tmp.path(), &[], &["mcp", "call", "demo", "divide", r#"{"a":1,"b":0}"#]);
    assert!(!o.status.success());
    assert!(out(&o).contains("cannot divide by zero"), "{}", out(&o));
    assert!(err(&o).contains("demo:divide reported an error"), "{}", err(&o));

    let o = perch(tmp.path(), &[], &["mcp", "call", "demo", "add", "{not json"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("the arguments are not valid JSON"), "{}", err(&o));

    let o = perch(tmp.path(), &[], &["mcp", "call", "nowhere", "add", "{}"]);
    assert!(err(&o).contains("there is no MCP server named \"nowhere\""), "{}", err(&o));

    let o = perch(tmp.path(), &[], &["mcp", "call", "demo", "add", r#"{"a":2,"b":3}"#, "--json"]);
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!((v["text"].as_str(), v["is_error"].as_bool()), (Some("5"), Some(false)));
}

#[test]
fn mcp_list_and_tools_show_servers_their_status_and_tools() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("mcp_servers.json"),
        json!({ "mcpServers": { "gone": { "command": "perch-no-such-program" }, "bad": { "args": [] } } })
            .to_string(),
    )
    .unwrap();
    let o = perch(tmp.path(), &[], &["mcp", "list", "--json"]);
    assert!(o.status.success(), "{}", err(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    let server = |name: &str| {
        v["servers"].as_array().unwrap().iter().find(|s| s["config"]["name"] == name).unwrap().clone()
    };
    assert_eq!(server("demo")["status"], "connected");
    assert!(server("demo")["pid"].as_u64().is_some());
    assert_eq!(server("demo")["tools"].as_array().unwrap().len(), 2);
    assert_eq!(server("gone")["status"], "error");
    assert!(server("gone")["last_error"].as_str().unwrap().contains("not found on your PATH"));
    assert_eq!(v["problems"][0]["server"], "bad");

    let o = perch(tmp.path(), &[], &["mcp", "tools", "demo"]);
    assert!(o.status.success(), "{}", err(&o));
    let listed = out(&o);
    let lines: Vec<&str> = listed.lines().map(|l| l.split("  ").next().unwrap()).collect();
    assert_eq!(lines, ["demo:add", "demo:divide"]);
    let o = perch(tmp.path(), &[], &["mcp", "list"]);
    assert!(out(&o).contains("demo  connected pid "), "{}", out(&o));
}

#[test]
fn mcp_tools_for_a_server_that_fails_is_an_error_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let crash = tmp.path().join("crash.sh");
    std::fs::write(&crash, "#!/bin/sh\necho 'fatal: no API key in MY_TOKEN' >&2\nexit 3\n").unwrap();
    std::fs::set_permissions(&crash, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        tmp.path().join("mcp_servers.json"),
        json!({ "mcpServers": { "crash": { "command": crash } } }).to_string(),
    )
    .unwrap();
    for json in [false, true] {
        let started = std::time::Instant::now();
        let args: &[&str] =
            if json { &["mcp", "tools", "crash", "--json"] } else { &["mcp", "tools", "crash"] };
        let o = perch(tmp.path(), &[], args);
        assert!(!o.status.success(), "json {json}: {}", out(&o));
        assert!(out(&o).is_empty(), "json {json}: nothing that looks like a (empty) result: {}", out(&o));
        let e = err(&o);
        assert!(e.contains("crash is not connected") && e.contains("fatal: no API key in MY_TOKEN"), "{e}");
        // The first failed start is the answer; the 5 restarts with backoff (15 s) are not waited for.
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "took {:?}", started.elapsed());
    }
    // Every server: the working ones are listed, the failed one is named, and the exit says so.
    let o = perch(tmp.path(), &[], &["mcp", "tools"]);
    assert!(!o.status.success());
    assert!(out(&o).contains("demo:add"), "{}", out(&o));
    assert!(err(&o).contains("crash is not connected"), "{}", err(&o));
}

#[test]
fn mcp_call_names_the_file_and_line_of_a_broken_config() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = "{\n  \"mcpServers\": {\n    \"git\": { \"command\": \"uvx\" \"args\": [\"mcp-server-git\"] }\n  }\n}\n";
    std::fs::write(tmp.path().join("mcp_servers.json"), broken).unwrap();
    let o = perch(tmp.path(), &[], &["mcp", "call", "git", "git_status", "{}"]);
    assert!(!o.status.success());
    let e = err(&o);
    assert!(e.contains("no usable MCP server named \"git\""), "{e}");
    assert!(e.contains("mcp_servers.json, line 3"), "{e}");
}

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn ask_uses_tools_with_command_line_approval_and_declines_without_it() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let env = [("OLLAMA_HOST", fake.url())];
    let script = || Script {
        steps: vec![
            Step::ToolCall { name: "demo__add".into(), arguments: json!({"a": 20, "b": 22}) },
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    };
    fake.push(script());
    fake.push(Script::answer("It is 42."));
    let args = ["ask", "--model", "ollama:qwen3-vl:8b-instruct", "--approve", "demo:*", "What is 20 + 22?"];
    let o = tokio::task::spawn_blocking({
        let (data, env) = (tmp.path().to_owned(), env.clone());
        move || perch(&data, &env, &args)
    })
    .await
    .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).trim(), "It is 42.");
    assert!(err(&o).contains("[tool demo:add] done: 42"), "{}", err(&o));

    // Without --approve and without a terminal to ask on, the call is declined and the model told.
    fake.push(script());
    fake.push(Script::answer("Then I cannot add."));
    let o = tokio::task::spawn_blocking({
        let (data, env) = (tmp.path().to_owned(), env.clone());
        move || perch(&data, &env, &["ask", "--model", "ollama:qwen3-vl:8b-instruct", "Add 20 and 22"])
    })
    .await
    .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let chats = fake.chat_requests();
    let told = chats.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert!(told["content"].as_str().unwrap().contains("Nobody could be asked"), "{told}");
}

/// A stateless (2026-07-28) Streamable HTTP MCP server whose tools answer `input_required`:
/// `confirm` asks for a form once, then answers with what the retry carried; `forever` asks
/// on every round. Returns its URL and every `tools/call` request it received.
async fn input_required_server() -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let (head, body) = read_http_request(&mut socket).await;
                let (status, reply) = if head.starts_with("POST") {
                    let request: Value = serde_json::from_slice(&body).unwrap();
                    match mcp_answer(&request, &seen) {
                        Some(result) => {
                            ("200 OK", json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }))
                        }
                        None => ("202 Accepted", Value::Null),
                    }
                } else {
                    ("405 Method Not Allowed", Value::Null)
                };
                let body = if reply.is_null() { String::new() } else { reply.to_string() };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (url, calls)
}

/// The request line and headers, and the body (by Content-Length).
async fn read_http_request(socket: &mut tokio::net::TcpStream) -> (String, Vec<u8>) {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let end = loop {
        let n = socket.read(&mut buf).await.unwrap();
        assert!(n > 0, "the request ended before its headers");
        data.extend_from_slice(&buf[..n]);
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..end]).into_owned();
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap())
        })
        .unwrap_or(0usize);
    while data.len() < end + length {
        let n = socket.read(&mut buf).await.unwrap();
        assert!(n > 0, "the request ended before its body");
        data.extend_from_slice(&buf[..n]);
    }
    (head, data[end..end + length].to_vec())
}

/// The fake's result for one JSON-RPC message (`None` for a notification).
fn mcp_answer(request: &Value, calls: &Mutex<Vec<Value>>) -> Option<Value> {
    request.get("id")?;
    let complete = |mut v: Value| {
        v["resultType"] = json!("complete");
        v
    };
    let form = json!({
        "method": "elicitation/create",
        "params": {
            "message": "Go ahead?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "confirmed": { "type": "boolean" },
                    "reason": { "type": "string", "default": "none given" }
                }
            }
        }
    });
    Some(match request["method"].as_str().unwrap() {
        "server/discover" => complete(json!({
            "ttlMs": 0,
            "cacheScope": "private",
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "asks-for-input", "version": "1.0.0" }
        })),
        "tools/list" => {
            let tools: Vec<Value> = ["confirm", "forever"]
                .iter()
                .map(|name| json!({ "name": name, "inputSchema": { "type": "object", "properties": {} } }))
                .collect();
            complete(json!({ "ttlMs": 0, "cacheScope": "private", "tools": tools }))
        }
        "tools/call" => {
            calls.lock().unwrap().push(request.clone());
            let params = &request["params"];
            if params["name"] == "confirm" && params.get("inputResponses").is_some() {
                let text = json!({ "answers": params["inputResponses"], "state": params["requestState"] });
                complete(json!({ "content": [{ "type": "text", "text": text.to_string() }] }))
            } else {
                json!({
                    "resultType": "input_required",
                    "inputRequests": { "go": form },
                    "requestState": "opaque \"state\" 1"
                })
            }
        }
        _ => complete(json!({})),
    })
}

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn mcp_call_answers_input_required_from_answers_and_retries_with_the_servers_state() {
    let (url, calls) = input_required_server().await;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("mcp_servers.json"),
        json!({ "mcpServers": { "asks": { "type": "http", "url": url } } }).to_string(),
    )
    .unwrap();
    let run = |args: Vec<&'static str>| {
        let data = tmp.path().to_owned();
        tokio::task::spawn_blocking(move || perch(&data, &[], &args))
    };

    // The form gets the fields it asks for (not `unasked`), its default fills the rest, and the
    // call goes again under a new id with the server's state exactly as it came.
    let args = vec!["mcp", "call", "asks", "confirm", "{}", "--answers", r#"{"confirmed":true,"unasked":1}"#];
    let o = run(args).await.unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let told: Value = serde_json::from_str(out(&o).trim()).unwrap();
    assert_eq!(
        told,
        json!({
            "answers": { "go": { "action": "accept", "content": { "confirmed": true, "reason": "none given" } } },
            "state": "opaque \"state\" 1"
        })
    );
    let sent = std::mem::take(&mut *calls.lock().unwrap());
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_ne!(sent[0]["id"], sent[1]["id"], "the retry is a new request");
    assert!(
        sent[0]["params"].get("requestState").is_none() && sent[0]["params"].get("inputResponses").is_none()
    );

    // Nobody to answer (no --answers, no terminal): the server hears the question was not answered.
    let o = run(vec!["mcp", "call", "asks", "confirm", "{}"]).await.unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let told: Value = serde_json::from_str(out(&o).trim()).unwrap();
    assert_eq!(told["answers"], json!({ "go": { "action": "cancel" } }));
    calls.lock().unwrap().clear();

    // A server that never stops asking is given up on after a bounded number of rounds.
    let o = run(vec!["mcp", "call", "asks", "forever", "{}", "--answers", "{}"]).await.unwrap();
    assert!(!o.status.success());
    assert!(err(&o).contains("still asked for input after 10 rounds"), "{}", err(&o));
    assert_eq!(calls.lock().unwrap().len(), 10);

    let o = run(vec!["mcp", "call", "asks", "confirm", "{}", "--answers", "[1]"]).await.unwrap();
    assert!(err(&o).contains("the answers must be a JSON object"), "{}", err(&o));
}
