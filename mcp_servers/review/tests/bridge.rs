#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The bridge driven as an MCP client drives it: spawned over stdio, tools listed and called,
//! with Perch's review socket served for real by the engine.
#![cfg(unix)]

use std::path::Path;
use std::sync::Arc;

use perch_core::review::ReviewService;
use perch_core::review::server::{self, ServerConfig};
use perch_core::store::{Integrity, Store};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt, object};

async fn bridge(socket: &Path, home: &Path) -> RunningService<RoleClient, ()> {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perch-mcp-review")).configure(|c| {
        c.args(["--timeout", "2"])
            .env("PERCH_IPC_PATH", socket)
            .env("XDG_RUNTIME_DIR", home.join("runtime"))
            .env("PERCH_DATA_DIR", home.join("data"));
    });
    ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap()
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn tools_present_reviews_and_read_the_selection() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(&tmp.path().join("perch.db"), Integrity::Quick).await.unwrap();
    let service = Arc::new(ReviewService::new(store));
    let socket = tmp.path().join("sock/review.sock");
    let running = server::start(ServerConfig::new(socket.clone()), service.clone()).await.unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/auth.rs"), "fn login() {}\n").unwrap();

    let client = bridge(&socket, tmp.path()).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "perch-review");

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["get_selection", "present_review"]);
    let present = tools.iter().find(|t| t.name == "present_review").unwrap();
    let description = present.description.as_deref().unwrap();
    assert!(description.contains("[`src/auth.rs:45`][]"), "the description teaches the reference format");
    let schema = serde_json::Value::Object((*present.input_schema).clone());
    assert_eq!(schema["required"], serde_json::json!(["content", "baseUri"]));
    let modes = serde_json::to_string(&schema).unwrap();
    assert!(modes.contains("update-section") && modes.contains("append"), "{modes}");

    let result = client
        .call_tool(CallToolRequestParams::new("present_review").with_arguments(object!({
            "content": "# Login\n\nChecked [`src/auth.rs:1`][] and [`src/missing.rs:4`][].",
            "baseUri": repo.to_str().unwrap(),
        })))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    let said = text(&result);
    assert!(said.contains("shown in Perch") && said.contains("src/missing.rs:4"), "{said}");
    assert!(service.latest().await.unwrap().unwrap().content.starts_with("# Login"));

    let result = client
        .call_tool(CallToolRequestParams::new("present_review").with_arguments(object!({
            "content": "fine", "baseUri": repo.to_str().unwrap(), "mode": "update-section"
        })))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("needs \"section\""), "{}", text(&result));

    let result = client.call_tool(CallToolRequestParams::new("get_selection")).await.unwrap();
    assert_eq!(text(&result), "Nothing is selected in Perch.");
    service.set_selection(Some("fn login()".into()));
    let result = client.call_tool(CallToolRequestParams::new("get_selection")).await.unwrap();
    assert_eq!(text(&result), "fn login()");

    // Perch goes away: the tool says so plainly.
    running.stop().await;
    let result = client.call_tool(CallToolRequestParams::new("get_selection")).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(text(&result), "Perch is not running, or its review socket is turned off");
    client.cancel().await.unwrap();
}
