#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! `perch mcp` and `perch ask` with tools, against the bundled servers built beside `perch`
//! (as after `cargo build`) and a fake Ollama that asks for tool calls.

mod common;

use common::{err, out, perch};

use perch_fake_llm::{Dialect, FakeLlm, Script, Step};
use serde_json::{Value, json};

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
