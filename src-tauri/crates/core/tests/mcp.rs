// Over 500 lines: one test per promise of the MCP client against real servers, each short.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The MCP manager against real servers: our bundled ones, and third-party ones from npm
//! (`@modelcontextprotocol/server-everything` over stdio and Streamable HTTP,
//! `@modelcontextprotocol/server-filesystem`) and PyPI (`mcp-server-time`), installed by
//! `make deps`. Crashes, hangs and garbage are real processes too.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use perch_core::mcp::{CallError, CallOrigin, McpManager, ServerStatus};
use perch_core::questions::Questions;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

fn npm_bin(name: &str) -> String {
    let path = repo().join("node_modules/.bin").join(name);
    assert!(path.exists(), "{} is missing: run `make deps` (npm install)", path.display());
    path.to_string_lossy().into_owned()
}

fn venv_bin(name: &str) -> String {
    let venv = std::env::var("VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| dirs::home_dir().unwrap().join(".cache/perch/venv"));
    let path = venv.join("bin").join(name);
    assert!(path.exists(), "{} is missing: run `make deps` (the Python venv)", path.display());
    path.to_string_lossy().into_owned()
}

/// A manager whose user file holds `servers` (merged with the bundled demo and filesystem).
fn manager(dir: &Path, servers: Value) -> Arc<McpManager> {
    std::fs::write(dir.join("mcp_servers.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
    McpManager::new(dir, Some(dir.join("logs")), Arc::new(Questions::default()))
}

fn args(v: Value) -> Option<Map<String, Value>> {
    v.as_object().cloned()
}

async fn call(
    m: &Arc<McpManager>,
    server: &str,
    tool: &str,
    a: Value,
) -> Result<perch_core::mcp::ToolOutput, CallError> {
    m.call_tool(server, tool, args(a), &CancellationToken::new(), None).await
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z ")
}

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn bundled_demo_server_starts_lists_and_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(tmp.path(), json!({}));
    m.ensure_connected("demo", WAIT).await.unwrap();
    let view = m.server("demo").unwrap();
    assert_eq!(view.status, ServerStatus::Connected);
    assert!(view.pid.is_some_and(alive));
    assert!(view.server_info.as_deref().unwrap().starts_with("perch-demo"), "{:?}", view.server_info);
    assert_eq!(
        view.protocol_version.as_deref(),
        Some("2026-07-28"),
        "rmcp servers speak the newest protocol"
    );
    let names: Vec<&str> = view.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "divide"]);
    assert!(view.tools.iter().all(|t| t.read_only));

    let sum = call(&m, "demo", "add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!((sum.text.as_str(), sum.is_error), ("5", false));
    let zero = call(&m, "demo", "divide", json!({"a": 1, "b": 0})).await.unwrap();
    assert!(zero.is_error && zero.text.contains("divide by zero"), "{zero:?}");
    let unknown = call(&m, "demo", "multiply", json!({})).await.unwrap_err();
    assert!(matches!(unknown, CallError::UnknownTool { .. }), "{unknown:?}");
    assert!(matches!(call(&m, "nope", "x", json!({})).await, Err(CallError::UnknownServer(_))));

    let pid = view.pid.unwrap();
    m.shutdown().await;
    assert!(!alive(pid), "no server outlives the manager");
    assert_eq!(m.server("demo").unwrap().status, ServerStatus::Stopped);
}

#[tokio::test]
async fn server_everything_over_stdio_reports_progress_and_times_out_and_cancels() {
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(
        tmp.path(),
        json!({ "everything": { "command": npm_bin("mcp-server-everything"), "args": ["stdio"], "timeout": 3 } }),
    );
    m.ensure_connected("everything", WAIT).await.unwrap();
    let view = m.server("everything").unwrap();
    let names: Vec<&str> = view.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"echo") && names.contains(&"trigger-long-running-operation"), "{names:?}");
    assert!(!view.resources.is_empty() && !view.prompts.is_empty(), "resources and prompts are listed");
    assert_eq!(view.protocol_version.as_deref(), Some("2025-11-25"), "an older server gets the fallback");

    let echo = call(&m, "everything", "echo", json!({"message": "hi"})).await.unwrap();
    assert!(echo.text.contains("hi"), "{echo:?}");
    let image = call(&m, "everything", "get-tiny-image", json!({})).await.unwrap();
    assert_eq!(image.images.len(), 1, "images in results are kept apart: {image:?}");

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let long = m
        .call_tool(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 1, "steps": 4})),
            &CancellationToken::new(),
            Some(tx),
        )
        .await
        .unwrap();
    assert!(long.text.contains("completed"), "{long:?}");
    let mut steps = Vec::new();
    while let Ok(p) = rx.try_recv() {
        steps.push(p.progress);
    }
    assert_eq!(steps, [1.0, 2.0, 3.0, 4.0], "progress notifications reach the call");

    // Past the server's 3 s timeout: the call ends with a timeout and the server carries on.
    let slow =
        call(&m, "everything", "trigger-long-running-operation", json!({"duration": 10, "steps": 2})).await;
    assert!(matches!(slow, Err(CallError::Timeout { secs: 3, .. })), "{slow:?}");
    // A stop cancels at once: here as soon as the call is running (its first progress).
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        progress.recv().await;
        stopper.cancel();
    });
    let stopped = m
        .call_tool(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 10, "steps": 10})),
            &cancel,
            Some(tx),
        )
        .await;
    assert_eq!(stopped.unwrap_err(), CallError::Cancelled);
    assert!(
        call(&m, "everything", "echo", json!({"message": "still here"}))
            .await
            .unwrap()
            .text
            .contains("still here")
    );

    let resource = &view.resources[0];
    assert!(!m.read_resource("everything", &resource.uri).await.unwrap().is_empty());
    m.shutdown().await;
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut server = tokio::process::Command::new(npm_bin("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(
        tmp.path(),
        json!({ "web": { "type": "http", "url": format!("http://127.0.0.1:{port}/mcp") } }),
    );
    m.ensure_connected("web", WAIT).await.unwrap();
    let view = m.server("web").unwrap();
    assert!(view.pid.is_none());
    assert!(view.tools.iter().any(|t| t.name == "get-sum"));
    let sum = call(&m, "web", "get-sum", json!({"a": 2, "b": 5})).await.unwrap();
    assert!(sum.text.contains('7'), "{sum:?}");
    m.shutdown().await;
    server.kill().await.unwrap();
}

#[tokio::test]
async fn third_party_filesystem_and_time_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let files = tmp.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("notes.txt"), "hello from perch").unwrap();
    let m = manager(
        tmp.path(),
        json!({
            "files": { "command": npm_bin("mcp-server-filesystem"), "args": [files] },
            "time": { "command": venv_bin("mcp-server-time"), "args": ["--local-timezone", "UTC"] },
        }),
    );
    let (a, b) = tokio::join!(m.ensure_connected("files", WAIT), m.ensure_connected("time", WAIT));
    a.unwrap();
    b.unwrap();
    let read = call(&m, "files", "read_text_file", json!({"path": files.join("notes.txt")})).await.unwrap();
    assert_eq!(read.text.trim(), "hello from perch");
    let outside = call(&m, "files", "read_text_file", json!({"path": "/etc/hostname"})).await.unwrap();
    assert!(outside.is_error, "the server's own confinement shows as a tool error: {outside:?}");
    let now = call(&m, "time", "get_current_time", json!({"timezone": "UTC"})).await.unwrap();
    assert!(now.text.contains("UTC"), "{now:?}");
    let bad = call(&m, "time", "get_current_time", json!({"timezone": "Not/AZone"})).await.unwrap();
    assert!(bad.is_error, "{bad:?}");
    m.shutdown().await;
}

#[tokio::test]
async fn a_killed_server_is_restarted_and_the_call_in_flight_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(
        tmp.path(),
        json!({ "everything": { "command": npm_bin("mcp-server-everything"), "args": ["stdio"] } }),
    );
    m.ensure_connected("everything", WAIT).await.unwrap();
    let pid = m.server("everything").unwrap().pid.unwrap();
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let calling = {
        let m = m.clone();
        tokio::spawn(async move {
            let arguments = args(json!({"duration": 20, "steps": 20}));
            m.call_tool(
                "everything",
                "trigger-long-running-operation",
                arguments,
                &CancellationToken::new(),
                Some(tx),
            )
            .await
        })
    };
    // The call is in flight once the server reports progress on it.
    progress.recv().await.expect("the call reports progress");
    // kill -9 on the server's process group (npx/node and anything it started).
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid.try_into().unwrap()), nix::sys::signal::SIGKILL)
        .unwrap();
    let result = calling.await.unwrap();
    assert!(matches!(result, Err(CallError::Closed { .. })), "{result:?}");

    let mut restarted = None;
    for _ in 0..300 {
        let v = m.server("everything").unwrap();
        if v.status == ServerStatus::Connected && v.pid.is_some_and(|p| p != pid) {
            restarted = Some(v);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let v = restarted.expect("the server came back");
    assert_eq!(v.restarts, 1, "{v:?} {:?}", m.logs("everything"));
    assert!(v.last_error.is_none());
    assert!(m.logs("everything").unwrap().iter().any(|l| l.contains("exited unexpectedly")));
    m.shutdown().await;
}

#[tokio::test]
async fn garbage_on_stdout_is_skipped_and_a_server_that_never_answers_fails_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = repo_target_bin("perch-mcp-demo");
    let noisy = tmp.path().join("noisy.sh");
    std::fs::write(
        &noisy,
        format!("#!/bin/sh\necho 'Starting the server...'\necho 'garbage ][ line'\nexec {demo}\n"),
    )
    .unwrap();
    let mute = tmp.path().join("mute.sh");
    std::fs::write(
        &mute,
        "#!/bin/sh\necho 'I am not an MCP server' >&2\nwhile true; do echo garbage; sleep 0.2; done\n",
    )
    .unwrap();
    for f in [&noisy, &mute] {
        std::fs::set_permissions(f, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let m = manager(
        tmp.path(),
        json!({
            "noisy": { "command": noisy },
            "mute": { "command": mute, "timeout": 2 },
            "missing": { "command": "perch-no-such-launcher" },
        }),
    );
    m.ensure_connected("noisy", WAIT).await.unwrap();
    let r = call(&m, "noisy", "add", json!({"a": 1, "b": 1})).await;
    assert!(r.is_ok(), "{r:?} {:?} {:?}", m.server("noisy"), m.logs("noisy"));
    assert_eq!(r.unwrap().text, "2");

    let err = m.ensure_connected("missing", WAIT).await.unwrap_err().to_string();
    assert!(err.contains("perch-no-such-launcher was not found on your PATH"), "{err}");
    assert_eq!(m.server("missing").unwrap().status, ServerStatus::Error, "a missing program is not retried");

    m.start("mute").unwrap();
    let mut seen = None;
    for _ in 0..100 {
        let v = m.server("mute").unwrap();
        if v.last_error.is_some() {
            seen = Some(v);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let v = seen.expect("the handshake timed out");
    let error = v.last_error.unwrap();
    assert!(error.contains("did not complete the MCP handshake within 2 s"), "{error}");
    assert!(error.contains("I am not an MCP server"), "its stderr explains: {error}");
    assert!(matches!(v.status, ServerStatus::Disconnected | ServerStatus::Starting), "{:?}", v.status);
    m.shutdown().await;
    assert_eq!(m.server("mute").unwrap().status, ServerStatus::Stopped);
}

fn repo_target_bin(name: &str) -> String {
    // Test binaries live in target/<profile>/deps; the workspace's binaries one level up.
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(path.exists(), "{} is missing: build it with `cargo build -p {name}`", path.display());
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn the_dashboard_edits_the_users_file_and_reloads() {
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(tmp.path(), json!({}));
    let names = m
        .import(r#"{"mcpServers": {"echo": {"command": "perch-mcp-demo", "autoStart": false}}}"#)
        .await
        .unwrap();
    assert_eq!(names, ["echo"]);
    assert!(m.list().iter().any(|s| s.config.name == "echo" && s.status == ServerStatus::Stopped));
    m.remove("echo").await.unwrap();
    assert!(!m.list().iter().any(|s| s.config.name == "echo"));
    m.remove("demo").await.unwrap();
    let demo = m.server("demo").unwrap();
    assert!(!demo.config.enabled, "a bundled server is turned off, not deleted");
    assert!(
        m.import("{\"x\": {\"args\": []}}").await.unwrap_err().to_string().contains("needs a \"command\"")
    );
}

#[tokio::test]
async fn a_server_that_will_not_stop_is_killed_at_shutdown() {
    let tmp = tempfile::tempdir().unwrap();
    let stubborn = tmp.path().join("stubborn.sh");
    // Serves MCP until stdin closes, then lingers, ignoring SIGTERM.
    let script = format!("#!/bin/sh\ntrap '' TERM\n{}\nsleep 300\n", repo_target_bin("perch-mcp-demo"));
    std::fs::write(&stubborn, script).unwrap();
    std::fs::set_permissions(&stubborn, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let m = manager(tmp.path(), json!({ "stubborn": { "command": stubborn } }));
    m.ensure_connected("stubborn", WAIT).await.unwrap();
    let pid = m.server("stubborn").unwrap().pid.unwrap();
    m.shutdown().await;
    // Its whole group was killed when shutdown returned (the shell and its sleep); the kernel
    // may take a moment to finish them off.
    let in_group = |pgid: u32| {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|p| alive(*p))
            .any(|p| {
                let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
                let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
                fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
            })
    };
    let mut group_left = true;
    for _ in 0..50 {
        group_left = in_group(pid);
        if !group_left {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "the server was killed");
    assert!(!group_left, "nothing it started is left");
}

/// A Brave Search stand-in: answers with Brave's JSON only when the request carries `token`
/// in `X-Subscription-Token` (401 otherwise, as the service does); returns its address and the
/// requests it received.
async fn brave_stand_in(token: &'static str) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/res/v1/web/search", listener.local_addr().unwrap());
    let received = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = received.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
            log.lock().unwrap().push(request.clone());
            let authorised = request.contains(&format!("x-subscription-token: {token}"));
            let (status, body) = if authorised {
                (
                    "200 OK",
                    r#"{"type":"search","web":{"results":[{"title":"Kestrel","url":"https://birds.example.org/kestrel","description":"A small falcon"}]}}"#,
                )
            } else {
                (
                    "401 Unauthorized",
                    r#"{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}"#,
                )
            };
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        }
    });
    (url, received)
}

fn environ(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', "\n"))
        .unwrap()
}

/// The debug builds' stand-in address for the keyed search services (`mcp_servers/web`).
const SEARCH_STAND_IN: &str = "PERCH_WEB_SEARCH_TEST_ENDPOINT";

/// `servers` under a manager whose secret hook is the engine's over a key store holding "brave".
fn manager_with_brave_key(dir: &Path, servers: Value) -> Arc<McpManager> {
    let m = manager(dir, servers);
    let keys = Arc::new(perch_core::keys::Keys::in_file(dir));
    keys.set("brave", &perch_core::keys::Secret::new("brv-stored-key")).unwrap();
    let google = perch_core::google::Connection::new(keys.clone());
    m.set_secret_env(perch_core::mcp::secrets::from_keys(keys, google));
    m
}

#[tokio::test]
async fn a_stored_search_key_reaches_perchs_own_web_server_and_no_entry_of_ones_own() {
    let (service, _) = brave_stand_in("brv-stored-key").await;
    let (elsewhere, received) = brave_stand_in("brv-stored-key").await;
    let tmp = tempfile::tempdir().unwrap();
    let m = manager_with_brave_key(
        tmp.path(),
        json!({
            "web": { "args": ["--backend", "brave"], "env": { SEARCH_STAND_IN: service } },
            // An entry of one's own (as a link adds one) running Perch's program.
            "search": { "command": "perch-mcp-web", "args": ["--backend", "brave"],
                        "env": { SEARCH_STAND_IN: elsewhere } },
        }),
    );
    for name in ["web", "search", "demo"] {
        m.ensure_connected(name, WAIT).await.unwrap();
    }
    // The entry of one's own has no key: its search says which key is missing.
    let search = environ(m.server("search").unwrap().pid.unwrap());
    assert!(!search.contains("brv-stored-key"), "an entry of one's own got the key");
    let refused = call(&m, "search", "search_web", json!({ "query": "kestrel" })).await.unwrap();
    assert!(refused.is_error && refused.text.contains("BRAVE_API_KEY"), "{refused:?}");
    // Control: Perch's own entry has the key and searches with it.
    let web = environ(m.server("web").unwrap().pid.unwrap());
    assert!(web.contains("BRAVE_API_KEY=brv-stored-key"));
    assert!(!web.contains("TAVILY_API_KEY"), "only the keys that are stored");
    let found = call(&m, "web", "search_web", json!({ "query": "kestrel" })).await.unwrap();
    assert!(!found.is_error && found.text.contains("Kestrel"), "{found:?}");
    let demo = environ(m.server("demo").unwrap().pid.unwrap());
    assert!(!demo.contains("brv-stored-key"), "no other server sees the key");
    m.shutdown().await;
    assert!(!received.lock().unwrap().iter().any(|r| r.contains("brv-stored-key")));
}

#[tokio::test]
async fn perchs_own_web_server_sends_the_key_to_no_address_given_in_its_arguments() {
    // Where the attempt points: it records whether the key arrived.
    let (elsewhere, received) = brave_stand_in("brv-stored-key").await;
    // Perch's own entry, given an address (as a link replacing it would give one), does not
    // start: the key would go there.
    let tmp = tempfile::tempdir().unwrap();
    let m = manager_with_brave_key(
        tmp.path(),
        json!({ "web": { "args": ["--backend", "brave", "--endpoint", elsewhere] } }),
    );
    if m.ensure_connected("web", WAIT).await.is_ok() {
        let _ = call(&m, "web", "search_web", json!({ "query": "kestrel" })).await;
    }
    m.shutdown().await;
    let arrived = received.lock().unwrap().iter().any(|r| r.contains("brv-stored-key"));
    assert!(!arrived, "the key reached an address given with the server's arguments");
}

/// Serves one long plain-text page on loopback; returns its URL.
async fn long_page() -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let body: String = (1..=400).map(|i| format!("Paragraph {i} of the long report.\n\n")).collect();
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request).await;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
        }
    });
    format!("http://127.0.0.1:{port}/report.txt")
}

/// The bundled web server hears how much of a result the model reads (`_meta` on the call)
/// and returns a part that fits, ending with where to continue, so the agent never has to cut
/// a page and lose that note.
#[tokio::test]
async fn a_long_page_comes_in_parts_that_fit_what_the_model_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let web = json!({ "web": { "command": repo_target_bin("perch-mcp-web"), "args": ["--allow-host", "127.0.0.1"] } });
    let m = manager(tmp.path(), web);
    m.ensure_connected("web", WAIT).await.unwrap();
    let url = long_page().await;
    let read = |origin: CallOrigin, a: Value| {
        let m = m.clone();
        async move {
            m.call_tool_from(&origin, "web", "read_page", args(a), &CancellationToken::new(), None).await
        }
    };
    let budget = CallOrigin { result_chars: Some(3_000), ..CallOrigin::default() };
    let first = read(budget.clone(), json!({ "url": url })).await.unwrap().text;
    assert!(first.chars().count() <= 3_000, "{} characters", first.chars().count());
    assert!(first.contains("Paragraph 1 of") && !first.contains("Paragraph 400 of"), "{first}");
    let start: usize = first.rsplit("start=").next().unwrap().trim_end_matches(".]").parse().unwrap();
    // The next part begins where that one ended.
    let next = read(budget, json!({ "url": url, "start": start })).await.unwrap().text;
    assert!(next.contains(&format!("[Continuing from character {start}.]")), "{next}");
    let first_last = first.lines().rfind(|l| l.starts_with("Paragraph")).unwrap();
    let n: usize = first_last.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(next.contains(&format!("Paragraph {} of", n + 1)), "no paragraph lost between parts: {next}");
    // A client that says nothing gets the server's default part, larger than that budget.
    let plain = read(CallOrigin::default(), json!({ "url": url })).await.unwrap().text;
    assert!(plain.chars().count() > 3_000);
    m.shutdown().await;
}
