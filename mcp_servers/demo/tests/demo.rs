#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The demo server driven as an MCP client drives it: spawned over stdio, tools listed and called.

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt, object};

async fn demo() -> RunningService<RoleClient, ()> {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perch-mcp-demo"));
    ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap()
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: JsonObject) -> CallToolResult {
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.unwrap()
}

#[tokio::test]
async fn lists_its_tools_with_schemas() {
    let client = demo().await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "perch-demo");
    assert_eq!(info.server_info.as_ref().unwrap().version, env!("CARGO_PKG_VERSION"));

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["add", "divide"]);
    for tool in &tools {
        let schema = serde_json::Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["required"], serde_json::json!(["a", "b"]), "{}", tool.name);
        assert_eq!(schema["properties"]["a"]["type"], "number", "{}", tool.name);
        assert_eq!(tool.annotations.as_ref().unwrap().read_only_hint, Some(true), "{}", tool.name);
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn adds_and_divides() {
    let client = demo().await;
    let sum = call(&client, "add", object!({"a": 2, "b": 3})).await;
    assert_ne!(sum.is_error, Some(true));
    assert_eq!(text(&sum), "5");
    assert_eq!(text(&call(&client, "add", object!({"a": 0.25, "b": -1})).await), "-0.75");
    let quotient = call(&client, "divide", object!({"a": 7, "b": 2})).await;
    assert_ne!(quotient.is_error, Some(true));
    assert_eq!(text(&quotient), "3.5");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mistakes_are_tool_errors_the_model_can_read() {
    let client = demo().await;
    let result = call(&client, "divide", object!({"a": 1, "b": 0})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(text(&result), "cannot divide by zero");

    let result = call(&client, "add", object!({"a": "two", "b": 3})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("invalid type"), "{}", text(&result));

    let result = call(&client, "add", object!({"a": 2})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("missing field `b`"), "{}", text(&result));

    let unknown = client
        .call_tool(CallToolRequestParams::new("multiply").with_arguments(object!({"a": 2, "b": 3})))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");
    // The session survives the protocol error.
    assert_eq!(text(&call(&client, "add", object!({"a": 1, "b": 1})).await), "2");
    client.cancel().await.unwrap();
}
