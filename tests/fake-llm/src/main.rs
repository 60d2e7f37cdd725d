//! `perch-fake-llm DIALECT [--port N] [--delay-ms N] [--key KEY]`: serves a fake model service
//! on loopback for end-to-end tests and benchmarks. Prints `listening http://...` when ready;
//! scripts can be queued over HTTP with `POST /__fake/script`.

use perch_fake_llm::{Dialect, FakeLlm};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: perch-fake-llm ollama|openai|anthropic|gemini [--port N] [--delay-ms N] [--key KEY]";
    let Some(dialect) = args.first().and_then(|d| d.parse::<Dialect>().ok()) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let flag = |name: &str| args.windows(2).find(|w| w[0] == name).map(|w| w[1].clone());
    let port = flag("--port").unwrap_or_else(|| "0".into());
    let fake = match FakeLlm::start_on(dialect, &format!("127.0.0.1:{port}")).await {
        Ok(fake) => fake,
        Err(e) => {
            eprintln!("perch-fake-llm: cannot listen: {e}");
            std::process::exit(1);
        }
    };
    if let Some(ms) = flag("--delay-ms").and_then(|v| v.parse().ok()) {
        fake.set_default_delay(ms);
    }
    if let Some(key) = flag("--key") {
        fake.require_key(&key);
    }
    println!("listening {}", fake.url());
    let _ = tokio::signal::ctrl_c().await;
}
