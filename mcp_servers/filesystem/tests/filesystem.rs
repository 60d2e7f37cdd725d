#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The filesystem server driven as an MCP client drives it: spawned over stdio on a temporary
//! root, with the effects checked on disk, and every way out of the root refused.

use std::path::{Path, PathBuf};

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt, object};

type Client = RunningService<RoleClient, ()>;

/// A temporary folder holding `root/` (served) and `outside/`, `outside.txt` (not served).
struct Setup {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("outside/outside-file.txt"), "secret too").unwrap();
    std::fs::write(base.join("outside.txt"), "secret").unwrap();
    Setup { _tmp: tmp, base, root }
}

async fn serve(args: &[&std::ffi::OsStr]) -> Client {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perch-mcp-filesystem")).configure(|c| {
        c.args(args);
    });
    ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap()
}

async fn serve_root(root: &Path) -> Client {
    serve(&["--root".as_ref(), root.as_os_str()]).await
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

async fn call(client: &Client, tool: &str, args: JsonObject) -> CallToolResult {
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.unwrap()
}

/// Calls a tool that must succeed and returns its text.
async fn ok(client: &Client, tool: &str, args: JsonObject) -> String {
    let result = call(client, tool, args).await;
    assert_ne!(result.is_error, Some(true), "{tool}: {}", text(&result));
    text(&result)
}

/// Calls a tool that must fail in-band and returns its message.
async fn refused(client: &Client, tool: &str, args: JsonObject) -> String {
    let result = call(client, tool, args).await;
    assert_eq!(result.is_error, Some(true), "{tool} should have failed: {}", text(&result));
    text(&result)
}

#[tokio::test]
async fn describes_its_tools_and_names_the_root() {
    let s = setup();
    let client = serve_root(&s.root).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "perch-filesystem");
    let root = s.root.display().to_string();
    assert!(info.instructions.as_deref().unwrap().contains(&root));

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["create_folder", "list_directory", "move_file", "read_file", "rename_file", "write_file"]
    );
    let required = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        serde_json::Value::Object((*tool.input_schema).clone())["required"].clone()
    };
    assert_eq!(required("list_directory"), serde_json::json!(["path"]));
    assert_eq!(required("read_file"), serde_json::json!(["path"]));
    assert_eq!(required("write_file"), serde_json::json!(["path", "content"]));
    assert_eq!(required("create_folder"), serde_json::json!(["path"]));
    assert_eq!(required("move_file"), serde_json::json!(["source", "destination"]));
    assert_eq!(required("rename_file"), serde_json::json!(["path", "new_name"]));
    for tool in &tools {
        let description = tool.description.as_deref().unwrap();
        assert!(description.contains(&root) && description.contains("relative"), "{description}");
        let read_only = tool.annotations.as_ref().unwrap().read_only_hint == Some(true);
        assert_eq!(read_only, ["list_directory", "read_file"].contains(&tool.name.as_ref()), "{}", tool.name);
    }
    let write = tools.iter().find(|t| t.name == "write_file").unwrap();
    assert_eq!(write.annotations.as_ref().unwrap().destructive_hint, Some(true));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn writes_reads_lists_creates_moves_and_renames() {
    let s = setup();
    let client = serve_root(&s.root).await;

    let said = refused(&client, "write_file", object!({"path": "notes/a.txt", "content": "hi"})).await;
    assert!(said.contains("notes/a.txt") && said.contains("create_folder"), "{said}");
    assert_eq!(
        ok(&client, "create_folder", object!({"path": "notes/deep/er"})).await,
        "Created folder notes/deep/er."
    );
    assert!(s.root.join("notes/deep/er").is_dir());
    assert!(ok(&client, "create_folder", object!({"path": "notes"})).await.contains("already exists"));

    ok(&client, "write_file", object!({"path": "notes/a.txt", "content": "hello\n"})).await;
    assert_eq!(std::fs::read_to_string(s.root.join("notes/a.txt")).unwrap(), "hello\n");
    assert_eq!(ok(&client, "read_file", object!({"path": "notes/a.txt"})).await, "hello\n");
    let said = ok(&client, "write_file", object!({"path": "notes/a.txt", "content": "bye"})).await;
    assert!(said.starts_with("Overwrote"), "{said}");
    assert_eq!(ok(&client, "read_file", object!({"path": "./notes/a.txt"})).await, "bye");
    let absolute = s.root.join("notes/a.txt");
    assert_eq!(ok(&client, "read_file", object!({"path": absolute.to_str().unwrap()})).await, "bye");

    std::fs::write(s.root.join("b.txt"), "b").unwrap();
    assert_eq!(ok(&client, "list_directory", object!({"path": "."})).await, "[FILE] b.txt\n[DIR] notes");
    assert_eq!(ok(&client, "list_directory", object!({"path": ""})).await, "[FILE] b.txt\n[DIR] notes");
    assert_eq!(ok(&client, "list_directory", object!({"path": "notes"})).await, "[FILE] a.txt\n[DIR] deep");
    assert_eq!(
        ok(&client, "list_directory", object!({"path": "notes/deep/er"})).await,
        "notes/deep/er is empty."
    );
    assert!(refused(&client, "list_directory", object!({"path": "b.txt"})).await.contains("read_file"));
    assert!(refused(&client, "read_file", object!({"path": "notes"})).await.contains("is a folder"));
    assert_eq!(refused(&client, "read_file", object!({"path": "nope.txt"})).await, "nope.txt does not exist");

    // Moves never overwrite, and need the destination's folder.
    let said =
        refused(&client, "move_file", object!({"source": "b.txt", "destination": "notes/a.txt"})).await;
    assert!(said.contains("notes/a.txt already exists"), "{said}");
    assert_eq!(std::fs::read_to_string(s.root.join("notes/a.txt")).unwrap(), "bye");
    refused(&client, "move_file", object!({"source": "b.txt", "destination": "missing/b.txt"})).await;
    refused(&client, "move_file", object!({"source": "gone.txt", "destination": "x.txt"})).await;
    refused(&client, "move_file", object!({"source": "notes", "destination": "notes/deep/notes"})).await;
    ok(&client, "move_file", object!({"source": "b.txt", "destination": "notes/deep/b.txt"})).await;
    assert!(!s.root.join("b.txt").exists());
    assert_eq!(std::fs::read_to_string(s.root.join("notes/deep/b.txt")).unwrap(), "b");
    ok(&client, "move_file", object!({"source": "notes/deep", "destination": "deep"})).await;
    assert!(s.root.join("deep/b.txt").is_file());

    // Renames stay in place.
    assert_eq!(
        ok(&client, "rename_file", object!({"path": "deep/b.txt", "new_name": "c.txt"})).await,
        "Renamed deep/b.txt to c.txt."
    );
    assert!(s.root.join("deep/c.txt").is_file() && !s.root.join("deep/b.txt").exists());
    for bad in ["x/y.txt", "..", "", "../c.txt"] {
        let said = refused(&client, "rename_file", object!({"path": "deep/c.txt", "new_name": bad})).await;
        assert!(said.contains("bare file name"), "{said}");
    }
    std::fs::write(s.root.join("deep/d.txt"), "d").unwrap();
    let said = refused(&client, "rename_file", object!({"path": "deep/c.txt", "new_name": "d.txt"})).await;
    assert!(said.contains("already exists"), "{said}");
    assert_eq!(std::fs::read_to_string(s.root.join("deep/d.txt")).unwrap(), "d");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn refuses_large_binary_and_malformed_requests() {
    let s = setup();
    std::fs::write(s.root.join("big.txt"), vec![b'a'; 5 * 1024 * 1024 + 1]).unwrap();
    std::fs::write(s.root.join("blob.bin"), [0xff, 0xfe, 0x00, 0x80]).unwrap();
    let client = serve_root(&s.root).await;
    let said = refused(&client, "read_file", object!({"path": "big.txt"})).await;
    assert!(said.contains("big.txt") && said.contains("5 MiB"), "{said}");
    let said = refused(&client, "read_file", object!({"path": "blob.bin"})).await;
    assert!(said.contains("blob.bin") && said.contains("not UTF-8"), "{said}");
    let said = refused(&client, "write_file", object!({"path": "x.txt", "content": 5})).await;
    assert!(said.contains("invalid type"), "{said}");
    assert!(!s.root.join("x.txt").exists());
    refused(&client, "read_file", object!({})).await;
    let unknown = client
        .call_tool(CallToolRequestParams::new("delete_file").with_arguments(object!({"path": "big.txt"})))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn nothing_outside_the_root_can_be_reached() {
    let s = setup();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(s.base.join("outside"), s.root.join("escape")).unwrap();
        std::os::unix::fs::symlink(s.base.join("outside/new.txt"), s.root.join("dangling")).unwrap();
    }
    std::fs::create_dir_all(s.root.join("sub")).unwrap();
    std::fs::write(s.root.join("inside.txt"), "in").unwrap();
    let client = serve_root(&s.root).await;
    let root = s.root.display().to_string();
    let outside_file = s.base.join("outside.txt");
    let outside_file = outside_file.to_str().unwrap();

    let attempts: Vec<(&str, JsonObject)> = vec![
        ("read_file", object!({"path": "../outside.txt"})),
        ("read_file", object!({"path": "/etc/passwd"})),
        ("read_file", object!({"path": outside_file})),
        ("read_file", object!({"path": "sub/../../outside.txt"})),
        ("list_directory", object!({"path": ".."})),
        ("write_file", object!({"path": "../written.txt", "content": "x"})),
        ("write_file", object!({"path": "sub/../../written.txt", "content": "x"})),
        ("create_folder", object!({"path": "sub/../../x"})),
        ("create_folder", object!({"path": "../made"})),
        ("move_file", object!({"source": "inside.txt", "destination": "../moved.txt"})),
        ("move_file", object!({"source": "../outside.txt", "destination": "stolen.txt"})),
        ("rename_file", object!({"path": "../outside.txt", "new_name": "renamed.txt"})),
    ];
    for (tool, args) in attempts {
        let shown = format!("{tool} {args:?}");
        let said = refused(&client, tool, args).await;
        assert!(said.contains(&format!("is outside the allowed folder {root}")), "{shown}: {said}");
    }
    #[cfg(unix)]
    {
        let through_links: Vec<(&str, JsonObject)> = vec![
            ("list_directory", object!({"path": "escape"})),
            ("read_file", object!({"path": "escape/outside-file.txt"})),
            ("write_file", object!({"path": "escape/new.txt", "content": "x"})),
            ("create_folder", object!({"path": "escape/made/deeper"})),
            ("move_file", object!({"source": "inside.txt", "destination": "escape/moved.txt"})),
        ];
        for (tool, args) in through_links {
            let shown = format!("{tool} {args:?}");
            let said = refused(&client, tool, args).await;
            assert!(said.contains(&format!("leads outside the allowed folder {root}")), "{shown}: {said}");
        }
        // `escape/..` is read as text, so it means the root, not the outside folder's parent.
        let said = refused(&client, "read_file", object!({"path": "escape/../outside.txt"})).await;
        assert_eq!(said, "escape/../outside.txt does not exist");
        let said = refused(&client, "write_file", object!({"path": "dangling", "content": "x"})).await;
        assert!(said.contains("dangling") && said.contains("symbolic link"), "{said}");
    }

    // Nothing was written, created or moved outside, and the outside file is untouched.
    let mut outside: Vec<String> = std::fs::read_dir(&s.base)
        .unwrap()
        .chain(std::fs::read_dir(s.base.join("outside")).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    outside.sort();
    assert_eq!(outside, ["outside", "outside-file.txt", "outside.txt", "root"]);
    assert_eq!(std::fs::read_to_string(s.base.join("outside.txt")).unwrap(), "secret");
    assert!(s.root.join("inside.txt").is_file());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn takes_the_root_as_a_plain_argument_and_refuses_a_missing_one() {
    let s = setup();
    std::fs::write(s.root.join("here.txt"), "").unwrap();
    let client = serve(&[s.root.as_os_str()]).await;
    assert_eq!(ok(&client, "list_directory", object!({"path": "."})).await, "[FILE] here.txt");
    client.cancel().await.unwrap();

    let status = std::process::Command::new(env!("CARGO_BIN_EXE_perch-mcp-filesystem"))
        .args(["--root", s.base.join("missing").to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!status.status.success());
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(stderr.contains("cannot use") && stderr.contains("missing"), "{stderr}");
}
