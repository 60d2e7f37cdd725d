#![allow(clippy::unwrap_used)] // a benchmark binary: any failure should stop it loudly
//! read_page's extraction (readability + Markdown) on a 1 MB article page, side by side with
//! the seed's stack, Python trafilatura, on the same HTML in the same run. Both sides time only
//! extraction of an HTML string already in memory (no fetch, no process start-up).
//! Run with `make bench` (or `PERCH_BENCH_PYTHON=… cargo bench -p perch-mcp-web --bench extract`).

use std::time::Instant;

const ROUNDS: usize = 15;

/// A news-style page of about 1 MB: site furniture (menus, sidebars, comments, scripts) around
/// an article of headed sections with paragraphs, links, lists and code.
fn page() -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>The Long Read | Field Notes</title>\
         <script>var tracking = {id: 42};</script><style>body{font-family:serif}</style></head><body>\
         <header><nav class=\"menu\">",
    );
    for i in 0..200 {
        html.push_str(&format!("<a href=\"/section/{i}\">Section {i}</a> "));
    }
    html.push_str("</nav></header><div class=\"layout\"><aside class=\"sidebar\"><ul>");
    for i in 0..300 {
        html.push_str(&format!("<li><a href=\"/popular/{i}\">Popular story number {i}</a></li>"));
    }
    html.push_str("</ul></aside><main><article><h1>The Long Read</h1><p class=\"byline\">By A. Writer</p>");
    let mut section = 0;
    while html.len() < 1_000_000 {
        section += 1;
        html.push_str(&format!("<h2>Part {section}: on migration and memory</h2>"));
        for p in 0..6 {
            html.push_str(&format!(
                "<p>Paragraph {p} of part {section}. Birds that migrate at night navigate by the stars, \
                 by the Earth's magnetic field and by smell; young birds on their first journey follow \
                 an inherited bearing, and <a href=\"/notes/{section}-{p}\">experiments with displaced \
                 flocks</a> show that adults correct for the displacement while juveniles do not. \
                 The difference is <em>experience</em>: a map learned on the way, not a compass alone.</p>"
            ));
        }
        html.push_str("<ul><li>Stars</li><li>Magnetic field</li><li>Landmarks</li></ul>");
        html.push_str("<pre><code>heading = inherited_bearing + correction(map)</code></pre>");
    }
    html.push_str("</article><section class=\"comments\">");
    for i in 0..200 {
        html.push_str(&format!("<div class=\"comment\"><p>Comment {i}: great read!</p></div>"));
    }
    html.push_str("</section></main></div><footer><p>&copy; Field Notes</p></footer></body></html>");
    html
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

const PYTHON: &str = r#"
import sys, time, trafilatura
html = open(sys.argv[1], encoding="utf-8").read()
rounds = int(sys.argv[2])
times = []
out = ""
for _ in range(rounds):
    t = time.perf_counter()
    out = trafilatura.extract(html, url="https://notes.example/long-read", output_format="markdown", include_links=True)
    times.append((time.perf_counter() - t) * 1000)
times.sort()
print(f"{times[len(times)//2]:.1f} {len(out or '')}")
"#;

fn main() {
    let html = page();
    let url = "https://notes.example/long-read";
    let mut times = Vec::new();
    let mut chars = 0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let article = perch_mcp_web::extract::article(&html, url).unwrap();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        chars = article.markdown.chars().count();
    }
    println!("read_page extraction, a {:.2} MB article page, median of {ROUNDS}:", html.len() as f64 / 1e6);
    println!("  perch-mcp-web (dom_smoothie, Markdown)  {:8.1} ms  {chars} chars out", median(times));

    let Ok(python) = std::env::var("PERCH_BENCH_PYTHON") else {
        println!("  trafilatura: skipped (set PERCH_BENCH_PYTHON to a Python with trafilatura)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.html");
    std::fs::write(&file, &html).unwrap();
    let out = std::process::Command::new(python)
        .args(["-c", PYTHON, file.to_str().unwrap(), &ROUNDS.to_string()])
        .output()
        .unwrap();
    if !out.status.success() {
        println!("  trafilatura: failed: {}", String::from_utf8_lossy(&out.stderr).trim());
        return;
    }
    let said = String::from_utf8_lossy(&out.stdout);
    let mut parts = said.split_whitespace();
    let (ms, chars) = (parts.next().unwrap_or("?"), parts.next().unwrap_or("?"));
    println!("  trafilatura 2.3.1 (Python, markdown)     {ms:>8} ms  {chars} chars out");
}
