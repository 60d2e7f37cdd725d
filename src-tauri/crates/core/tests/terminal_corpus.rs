#![allow(clippy::unwrap_used)]
//! The blocklist against a corpus of dangerous command lines in many disguises: each must be
//! blocked or asked about, never allowed, under the most permissive settings (ask level off,
//! remembered, in a session). Then each goes through the real tool server, where it must be
//! refused without anything starting; had one slipped through, it would have run under the
//! sandbox in a temporary folder, with `~` a stand-in home there.
#![cfg(target_os = "linux")]

mod support;

use std::path::Path;

use perch_core::mcp::CallOrigin;
use perch_core::terminal::policy::{Context, assess, decide};
use perch_core::terminal::{AskLevel, TerminalUpdate};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn corpus() -> Vec<String> {
    include_str!("data/dangerous_commands.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace("\\n", "\n").replace("\\0", "\0"))
        .collect()
}

const HARMLESS: &[&str] = &[
    "ls -la",
    "cargo test -p perch-core",
    "rm -rf build",
    "rm -rf ./target/debug",
    "rm -rf /tmp/perch-scratch",
    "git status && git diff --stat",
    "cat README.md | grep -n Perch",
    "cd src && ls",
    "echo $HOME",
    "chmod +x script.sh",
    "cat ~/.bashrc",
    "export RUST_LOG=debug",
    "find . -name '*.rs' -delete",
    "python3 -m pytest -q",
    "echo 'rm -rf /'",
    "grep -r 'sudo rm' docs",
    "sudo apt-get install -y ripgrep",
];

#[test]
fn every_dangerous_line_is_blocked_or_asked_and_harmless_ones_are_not() {
    let root = tempfile::tempdir().unwrap();
    let (work, home) = (root.path().join("work"), root.path().join("home"));
    let permissive = Context { ask_level: AskLevel::Off, remembered: true, session: true, sandboxed: true };
    let lines = corpus();
    assert!(lines.len() >= 150, "the corpus has {} lines", lines.len());
    let mut allowed = Vec::new();
    let (mut blocked, mut asked) = (0, 0);
    for line in &lines {
        match decide(&assess(line, &work, &home), permissive).word() {
            "blocked" => blocked += 1,
            "ask" => {
                asked += 1;
                if std::env::var_os("PERCH_SHOW_ASKED").is_some() {
                    eprintln!("asked: {line}");
                }
            }
            _ => allowed.push(line.clone()),
        }
    }
    assert!(allowed.is_empty(), "these dangerous lines were allowed:\n{}", allowed.join("\n"));
    eprintln!("{} lines: {blocked} blocked, {asked} asked", lines.len());
    for line in HARMLESS {
        let decision = decide(&assess(line, &work, &home), permissive);
        assert_eq!(decision.word(), "allowed", "{line}: {decision:?}");
    }
}

#[tokio::test]
async fn none_of_them_starts_through_the_tool_server() {
    let root = tempfile::tempdir().unwrap();
    let engine = support::engine(root.path()).await;
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("canary"), "alive").unwrap();
    engine
        .settings()
        .update(|s| {
            s.terminal.ask_level = AskLevel::Off;
            s.terminal.working_folder = work.display().to_string();
        })
        .await
        .unwrap();
    let mut updates = engine.terminal().subscribe();
    let cancel = CancellationToken::new();
    for line in corpus() {
        let args = json!({ "command": line }).as_object().cloned();
        let out = engine
            .mcp()
            .call_tool_from(&CallOrigin::default(), "terminal", "run_command", args, &cancel, None)
            .await
            .unwrap();
        assert!(out.is_error, "{line:?} was not refused: {}", out.text);
    }
    while let Ok(update) = updates.try_recv() {
        assert!(!matches!(update, TerminalUpdate::Started(_)), "a command started: {update:?}");
    }
    assert!(engine.terminal().running().is_empty());
    assert_eq!(std::fs::read_to_string(work.join("canary")).unwrap(), "alive");
    assert!(Path::new(&work).is_dir());
}
