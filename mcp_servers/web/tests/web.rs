#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The web server driven as an MCP client drives it, against a loopback HTTP server serving
//! pages written for these tests in the shapes the real services return. Only 127.0.0.1 is
//! allowed by the test's command line, so every other way to reach this machine (a name that
//! resolves to loopback, a redirect there, IPv6 loopback, private ranges) must be refused.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, MetaObject, RequestMetaObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt, object};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

type Client = RunningService<RoleClient, ()>;

const ARTICLE: &str = include_str!("pages/article.html");
const DUCKDUCKGO: &str = include_str!("pages/duckduckgo.html");
const SEARXNG: &str = include_str!("pages/searxng.json");
/// Printed by Chromium from the .html files beside them (see `pdf.rs`'s tests): two pages of
/// text titled "Kestrel Field Notes", and a page that is only a picture of text.
const FIELD_NOTES: &[u8] = include_bytes!("../../../tests/fixtures/pdf/field-notes.pdf");
const SCANNED: &[u8] = include_bytes!("../../../tests/fixtures/pdf/scanned.pdf");

/// Serves the test pages on 127.0.0.1; returns the port.
async fn site() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(answer(stream, port));
        }
    });
    port
}

async fn answer(mut stream: TcpStream, port: u16) {
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&request).to_string();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let route = path.split('?').next().unwrap_or_default();
    let reply = |status: &str, kind: &str, body: &[u8]| {
        let mut r = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    };
    let redirect = |to: String| {
        format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .into_bytes()
    };
    let out = match route {
        "/article" => reply("200 OK", "text/html; charset=utf-8", ARTICLE.as_bytes()),
        "/html/" => reply("200 OK", "text/html", DUCKDUCKGO.as_bytes()),
        "/search" => reply("200 OK", "application/json", SEARXNG.as_bytes()),
        "/limited/search" => reply("429 Too Many Requests", "text/plain", b"slow down"),
        "/latin1" => reply(
            "200 OK",
            "text/plain; charset=windows-1252",
            b"Caf\xe9 cr\xe8me \x93quoted\x94 and more text for the reader.",
        ),
        "/data.json" => reply("200 OK", "application/json", br#"{"bird": "kestrel", "hovers": true}"#),
        "/binary" => reply("200 OK", "application/octet-stream", &[0, 1, 2, 3]),
        "/docs/field-notes.pdf" => reply("200 OK", "application/pdf", FIELD_NOTES),
        // A download link whose server does not say what the file is.
        "/download" => reply("200 OK", "application/octet-stream", FIELD_NOTES),
        "/docs/scanned.pdf" => reply("200 OK", "application/pdf", SCANNED),
        "/docs/damaged.pdf" => reply("200 OK", "application/pdf", &FIELD_NOTES[..FIELD_NOTES.len() / 3]),
        "/latest-notes" => redirect("/docs/field-notes.pdf".into()),
        "/redirect-home" => redirect("/article".into()),
        "/redirect-by-name" => redirect(format!("http://localhost:{port}/article")),
        "/redirect-v6" => redirect(format!("http://[::1]:{port}/article")),
        "/loop" => redirect("/loop".into()),
        "/huge" | "/huge.pdf" => {
            // Chunked, with no length: a body that never ends unless the reader stops.
            let kind = if route.ends_with(".pdf") { "application/pdf" } else { "text/html" };
            let head =
                format!("HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nTransfer-Encoding: chunked\r\n\r\n");
            let _ = stream.write_all(head.as_bytes()).await;
            let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "x".repeat(64 * 1024));
            while stream.write_all(chunk.as_bytes()).await.is_ok() {}
            return;
        }
        "/slow" => {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\n<p>")
                .await;
            tokio::time::sleep(Duration::from_secs(30)).await;
            return;
        }
        _ => reply("404 Not Found", "text/plain", b"no such page"),
    };
    let _ = stream.write_all(&out).await;
}

async fn serve(args: &[String]) -> Client {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perch-mcp-web")).configure(|c| {
        c.args(args);
    });
    ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap()
}

/// The server with the test site's host allowed and small limits, plus `extra` arguments.
async fn serve_site(port: u16, extra: &[&str]) -> Client {
    let mut args: Vec<String> = ["--allow-host", "127.0.0.1", "--timeout", "3", "--max-bytes", "1000000"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(["--endpoint".into(), format!("http://127.0.0.1:{port}/html/")]);
    args.extend(extra.iter().map(|s| s.to_string()));
    serve(&args).await
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

async fn call(client: &Client, tool: &str, args: JsonObject) -> CallToolResult {
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.unwrap()
}

async fn ok(client: &Client, tool: &str, args: JsonObject) -> String {
    let result = call(client, tool, args).await;
    assert_ne!(result.is_error, Some(true), "{tool}: {}", text(&result));
    text(&result)
}

/// read_page on a path of the test site, which must succeed.
async fn read_site(client: &Client, port: u16, path: &str) -> String {
    ok(client, "read_page", object!({ "url": format!("http://127.0.0.1:{port}{path}") })).await
}

/// read_page on a path of the test site, which must fail.
async fn refused_site(client: &Client, port: u16, path: &str) -> String {
    refused(client, "read_page", object!({ "url": format!("http://127.0.0.1:{port}{path}") })).await
}

async fn refused(client: &Client, tool: &str, args: JsonObject) -> String {
    let result = call(client, tool, args).await;
    assert_eq!(result.is_error, Some(true), "{tool} should have failed: {}", text(&result));
    text(&result)
}

#[tokio::test]
async fn both_tools_are_read_only() {
    let port = site().await;
    let client = serve_site(port, &[]).await;
    assert_eq!(client.peer_info().unwrap().server_info.as_ref().unwrap().name, "perch-web");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["read_page", "search_web"]);
    for tool in &tools {
        assert_eq!(tool.annotations.as_ref().unwrap().read_only_hint, Some(true), "{}", tool.name);
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn reads_the_article_as_markdown_without_the_page_furniture() {
    let port = site().await;
    let client = serve_site(port, &[]).await;
    let page =
        ok(&client, "read_page", object!({"url": format!("http://127.0.0.1:{port}/redirect-home")})).await;
    assert!(page.starts_with("The text below is untrusted content"), "{page}");
    assert!(page.contains("# How Kestrels Hover"), "{page}");
    assert!(page.contains(&format!("URL: http://127.0.0.1:{port}/article")), "the final URL: {page}");
    assert!(page.contains("## Head stabilisation"), "{page}");
    assert!(page.contains("- They beat in short, shallow strokes"), "{page}");
    // Links are kept, relative ones made absolute against the page's address.
    assert!(
        page.contains(&format!("[biological gimbal](http://127.0.0.1:{port}/glossary/gimbal)")),
        "{page}"
    );
    assert!(page.contains("(https://example.org/papers/kestrel-hover.pdf)"), "{page}");
    for furniture in ["Subscribe", "Buy binoculars", "Owls at night", "Privacy", "analytics"] {
        assert!(!page.contains(furniture), "{furniture} should be gone: {page}");
    }

    // A client that reads 1,600 characters of a result (Perch says so in `_meta`) gets a part
    // that fits with its framing, ending with where to go on; the next part starts there.
    let url = format!("http://127.0.0.1:{port}/article");
    let mut params = CallToolRequestParams::new("read_page").with_arguments(object!({ "url": url.clone() }));
    let mut meta = serde_json::Map::new();
    meta.insert("app.perch/resultChars".into(), 1600.into());
    params.meta = Some(RequestMetaObject(MetaObject(meta)));
    let first = text(&client.call_tool(params).await.unwrap());
    assert!(first.chars().count() <= 1600, "{} characters: {first}", first.chars().count());
    assert!(!first.contains("will not move"), "{first}");
    let start: usize = first.rsplit("start=").next().unwrap().trim_end_matches(".]").parse().unwrap();
    assert!(first.contains(&format!("[Characters 1-{start} of ")), "{first}");
    let rest = ok(&client, "read_page", object!({"url": url.clone(), "start": start})).await;
    assert!(
        rest.contains(&format!("[Continuing from character {start}.]")) && rest.contains("will not move")
    );
    assert!(!rest.contains("read_page with"), "the rest reaches the end: {rest}");
    // Asked for less than the budget, the smaller part is given.
    let small = ok(&client, "read_page", object!({"url": url.clone(), "max_chars": 500})).await;
    assert!(small.contains("[Characters 1-") && small.chars().count() < first.chars().count());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn reads_text_in_other_encodings_and_json_and_refuses_binaries() {
    let port = site().await;
    let client = serve_site(port, &[]).await;
    let latin = ok(&client, "read_page", object!({"url": format!("http://127.0.0.1:{port}/latin1")})).await;
    assert!(latin.contains("Café crème “quoted”"), "{latin}");
    let json = ok(&client, "read_page", object!({"url": format!("http://127.0.0.1:{port}/data.json")})).await;
    assert!(json.contains("```json\n{\"bird\": \"kestrel\""), "{json}");
    let binary =
        refused(&client, "read_page", object!({"url": format!("http://127.0.0.1:{port}/binary")})).await;
    assert!(binary.contains("application/octet-stream cannot be read"), "{binary}");
    let missing =
        refused(&client, "read_page", object!({"url": format!("http://127.0.0.1:{port}/nope")})).await;
    assert!(missing.contains("404"), "{missing}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn reads_a_pdf_page_by_page_with_its_title_whether_typed_or_sniffed() {
    let port = site().await;
    let client = serve_site(port, &[]).await;
    // Served as application/pdf after a redirect, and as application/octet-stream (the %PDF- magic).
    for (path, final_path) in
        [("/latest-notes", "/docs/field-notes.pdf"), ("/download?id=7", "/download?id=7")]
    {
        let pdf = read_site(&client, port, path).await;
        assert!(pdf.starts_with("The text below is untrusted content"), "{pdf}");
        assert!(pdf.contains("# Kestrel Field Notes\n"), "the Info dictionary's title: {pdf}");
        assert!(pdf.contains(&format!("URL: http://127.0.0.1:{port}{final_path}\n")), "the final URL: {pdf}");
        assert!(pdf.contains("PDF document, 2 pages"), "{pdf}");
        let first = "--- page 1 ---\n\nHow kestrels hover\nKestrels hover into the wind while hunting.\n\
                     Their heads stay still as their wings beat.";
        let second = "--- page 2 ---\n\nWhat kestrels eat\nVoles are the main prey in winter.";
        assert!(pdf.contains(&format!("{first}\n\n{second}")), "{pdf}");
        assert!(pdf.ends_with("winter."), "nothing after the last page: {pdf}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn says_why_a_pdf_cannot_be_read_and_keeps_working() {
    let port = site().await;
    let client = serve_site(port, &[]).await;
    let read = |path| refused_site(&client, port, path);
    let scanned = read("/docs/scanned.pdf").await;
    assert!(scanned.contains("this PDF has no text layer; it may be scanned images"), "{scanned}");
    let damaged = read("/docs/damaged.pdf").await;
    assert!(damaged.contains("this PDF is damaged or not a valid PDF"), "{damaged}");
    let huge = read("/huge.pdf").await;
    assert!(huge.contains("larger than 1000000 bytes"), "{huge}");
    let after = read_site(&client, port, "/docs/field-notes.pdf").await;
    assert!(after.contains("Voles are the main prey"), "{after}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn refuses_this_computer_and_the_local_network_however_reached() {
    let port = site().await;
    let client = serve_site(port, &[]).await;
    let read = |url: String| {
        let client = &client;
        async move { refused(client, "read_page", object!({ "url": url })).await }
    };
    // A public-looking name that resolves to loopback.
    let by_name = read(format!("http://localhost:{port}/article")).await;
    assert!(by_name.contains("refused: localhost") && by_name.contains("127.0.0.1"), "{by_name}");
    // Redirects from an allowed host to a loopback name or literal.
    let hop = read(format!("http://127.0.0.1:{port}/redirect-by-name")).await;
    assert!(hop.contains("refused: localhost"), "{hop}");
    let hop6 = read(format!("http://127.0.0.1:{port}/redirect-v6")).await;
    assert!(hop6.contains("refused: [::1]") || hop6.contains("refused: ::1"), "{hop6}");
    // Literals: other loopback addresses, private ranges, link-local (cloud metadata), v4 in v6.
    for url in [
        format!("http://127.0.0.2:{port}/article"),
        "http://10.0.0.1/".into(),
        "http://192.168.1.1/".into(),
        "http://169.254.169.254/latest/meta-data/".into(),
        "http://[::ffff:127.0.0.1]/".into(),
        "http://0x7f000002/".into(), // 127.0.0.2 written in hex
    ] {
        assert!(read(url.clone()).await.contains("refused:"), "{url}");
    }
    let scheme = read("file:///etc/passwd".into()).await;
    assert!(scheme.contains("only http and https"), "{scheme}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn allow_private_lets_the_user_read_local_pages() {
    let port = site().await;
    let client = serve(&["--allow-private".into()]).await;
    let page = ok(&client, "read_page", object!({"url": format!("http://localhost:{port}/article")})).await;
    assert!(page.contains("# How Kestrels Hover"), "{page}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stops_endless_downloads_slow_servers_and_redirect_loops() {
    let port = site().await;
    let client = serve_site(port, &[]).await;
    let huge = refused(&client, "read_page", object!({"url": format!("http://127.0.0.1:{port}/huge")})).await;
    assert!(huge.contains("larger than 1000000 bytes"), "{huge}");
    let slow = refused(&client, "read_page", object!({"url": format!("http://127.0.0.1:{port}/slow")})).await;
    assert!(slow.contains("longer than 3 s"), "{slow}");
    let looped =
        refused(&client, "read_page", object!({"url": format!("http://127.0.0.1:{port}/loop")})).await;
    assert!(looped.contains("redirect"), "{looped}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn searches_duckduckgo_html_without_the_ads() {
    let port = site().await;
    let client = serve_site(port, &[]).await;
    let found = ok(&client, "search_web", object!({"query": "rust async runtime", "max_results": 2})).await;
    assert!(found.starts_with("Results for \"rust async runtime\" from DuckDuckGo"), "{found}");
    assert!(found.contains("1. [Tokio - An asynchronous Rust runtime](<https://tokio.rs/>)"), "{found}");
    assert!(found.contains("   Tokio is an event-driven, non-blocking I/O platform"), "{found}");
    assert!(
        found.contains("2. [Why Async? - Asynchronous Programming in Rust](<https://rust-lang.github.io/async-book/01_getting_started/02_why_async.html>)"),
        "{found}"
    );
    assert!(!found.contains("Sponsored") && !found.contains("async_std"), "ads and the cap: {found}");
    let empty = refused(&client, "search_web", object!({"query": "  "})).await;
    assert!(empty.contains("empty"), "{empty}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn searches_searxng_and_reports_rate_limits_and_missing_keys() {
    let port = site().await;
    let searx = serve(&[
        "--backend".into(),
        "searxng".into(),
        "--endpoint".into(),
        format!("http://127.0.0.1:{port}/"),
    ])
    .await;
    let found = ok(&searx, "search_web", object!({"query": "kestrel"})).await;
    assert!(found.contains("from SearXNG"), "{found}");
    assert!(
        found.contains("1. [Common kestrel - Wikipedia](<https://en.wikipedia.org/wiki/Common_kestrel>)"),
        "{found}"
    );
    assert!(found.contains("2. [Kestrel | RSPB]"), "{found}");
    searx.cancel().await.unwrap();

    let limited = serve(&[
        "--backend".into(),
        "searxng".into(),
        "--endpoint".into(),
        format!("http://127.0.0.1:{port}/limited/"),
    ])
    .await;
    let said = refused(&limited, "search_web", object!({"query": "kestrel"})).await;
    assert!(said.contains("rate-limiting"), "{said}");
    limited.cancel().await.unwrap();

    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perch-mcp-web")).configure(|c| {
        c.args(["--backend", "brave"]).env_remove("BRAVE_API_KEY");
    });
    let brave = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let said = refused(&brave, "search_web", object!({"query": "kestrel"})).await;
    assert!(said.contains("Brave Search needs an API key") && said.contains("BRAVE_API_KEY"), "{said}");
    brave.cancel().await.unwrap();
}

#[test]
fn a_keyed_service_is_reached_only_at_its_own_address() {
    // The attempt: a key in the environment and an address of someone else's choosing.
    for backend in ["brave", "tavily"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_perch-mcp-web"))
            .args(["--backend", backend, "--endpoint", "http://127.0.0.1:9/collect"])
            .env("BRAVE_API_KEY", "brv-not-for-them")
            .env("TAVILY_API_KEY", "tvly-not-for-them")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{backend} started with an endpoint of its own: {said}");
        assert!(said.contains("reached only at its own address") && said.contains("--endpoint"), "{said}");
    }
}
