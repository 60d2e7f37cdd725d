#![allow(clippy::unwrap_used)]
//! The approval escapes of issue 42, each really attempted through the engine (a fake model
//! calling the terminal's tools, the real parser, the real sandbox launcher), beside a control
//! that shows the same path working for what the user did approve. Each line here ran, unasked,
//! before the fix.
#![cfg(target_os = "linux")]

mod support;

use perch_core::agent::run_turn;
use perch_core::questions::{ApprovalChoice, ApprovalDetail, Question};
use perch_core::terminal::AskLevel;
use serde_json::json;
use support::terminal::*;

/// The command a terminal card asks about, if `q` is one.
fn command_of(q: &Question) -> Option<&str> {
    match q {
        Question::ToolApproval(a) => match a.detail.as_deref() {
            Some(ApprovalDetail::Command { command, .. }) => Some(command),
            _ => None,
        },
        _ => None,
    }
}

/// Answers "Always allow" for the card of `allowed` and "Deny" for every other card.
async fn always_allowing(allowed: &'static str) -> Chat {
    chat_answering(
        move |q| if command_of(q) == Some(allowed) { ApprovalChoice::Always } else { ApprovalChoice::Deny },
        AskLevel::OnMiss,
    )
    .await
}

/// Runs one turn in which the model calls `run_command` with each line in turn.
async fn model_runs(c: &Chat, lines: &[&str]) {
    for line in lines {
        c.fake.push(turn_calling("terminal__run_command", json!({ "command": line })));
    }
    c.fake.push(perch_fake_llm::Script::answer("Done."));
    run_turn(c.engine.agent(), ask("run them"), &Collect::default()).await.unwrap();
}

fn asked_commands(c: &Chat) -> Vec<String> {
    c.asked.lock().unwrap().iter().filter_map(command_of).map(str::to_owned).collect()
}

/// F1: after "Always allow" on a line, the same line with a carriage return (or a
/// backslash-CR-LF continuation) and a hidden command after it is a new line: bash runs the
/// hidden part, so it is asked about, and here denied.
#[tokio::test]
async fn a_carriage_return_cannot_hide_a_command_behind_an_allowed_one() {
    let c = always_allowing("echo allowed").await;
    model_runs(&c, &["echo allowed"]).await;
    // Control: remembered, it runs again without a card.
    model_runs(&c, &["echo allowed"]).await;
    assert_eq!(asked_commands(&c), ["echo allowed"]);
    let poisoned = ["echo allowed\r#; touch hidden-by-cr", "echo allowed \\\r\ntouch hidden-by-continuation"];
    model_runs(&c, &poisoned).await;
    assert_eq!(asked_commands(&c)[1..], poisoned, "each poisoned line was asked about");
    assert!(!c.work.join("hidden-by-cr").exists(), "the line behind the carriage return ran");
    assert!(!c.work.join("hidden-by-continuation").exists());
}

/// F12: a remembered approval of a quoted word does not cover the unquoted one bash expands:
/// `rm -f '*.log'` deletes a file named `*.log`, `rm -f *.log` every log; `rm "$X"` one odd
/// name, `rm $X` split into `-rf src`.
#[tokio::test]
async fn an_approval_of_a_quoted_word_does_not_cover_the_expanded_one() {
    let c = always_allowing("rm -f '*.log'").await;
    std::fs::write(c.work.join("a.log"), "keep").unwrap();
    std::fs::write(c.work.join("*.log"), "odd name").unwrap();
    model_runs(&c, &["rm -f '*.log'"]).await;
    assert!(!c.work.join("*.log").exists(), "control: the approved line ran");
    std::fs::write(c.work.join("*.log"), "odd name").unwrap();
    model_runs(&c, &["rm -f '*.log'", "rm -f *.log"]).await;
    assert_eq!(asked_commands(&c), ["rm -f '*.log'", "rm -f *.log"], "only the glob was asked about");
    assert!(c.work.join("a.log").exists(), "the unquoted glob ran on the strength of the quoted one");

    let c = always_allowing("X='-rf src'; rm -f \"$X\"").await;
    std::fs::create_dir_all(c.work.join("src")).unwrap();
    model_runs(&c, &["X='-rf src'; rm -f \"$X\"", "X='-rf src'; rm -f \"$X\"", "X='-rf src'; rm -f $X"])
        .await;
    assert_eq!(asked_commands(&c).len(), 2, "{:?}", asked_commands(&c));
    assert!(c.work.join("src").is_dir(), "the split variable ran on the strength of the quoted one");
}

/// F8: keys typed without Enter run nothing, but Ctrl+O (readline's operate-and-get-next) runs
/// what was typed: in session mode it is asked about, with the whole line and the key shown.
#[tokio::test]
async fn a_control_key_that_runs_the_typed_line_is_asked_about_in_session_mode() {
    let c = chat_answering(
        |q| match q {
            Question::ToolApproval(a)
                if matches!(a.detail.as_deref(), Some(ApprovalDetail::Session { .. })) =>
            {
                ApprovalChoice::Once
            }
            _ => ApprovalChoice::Deny,
        },
        AskLevel::Always,
    )
    .await;
    let input = |text: &str| turn_calling("terminal__send_input", json!({ "id": 1, "text": text }));
    c.fake.push(turn_calling("terminal__request_session_mode", json!({ "reason": "work in a shell" })));
    c.fake.push(turn_calling("terminal__run_command", json!({ "command": "bash --norc --noprofile -i" })));
    c.fake.push(input("touch typed-then-ctrl-o"));
    c.fake.push(input("\u{f}"));
    c.fake.push(input("\u{3}"));
    // Control: a whole line typed with Enter is the session's to run.
    c.fake.push(input("touch typed-with-enter\r"));
    c.fake.push(input("exit\n"));
    c.fake.push(perch_fake_llm::Script::answer("Done."));
    run_turn(c.engine.agent(), ask("use a shell"), &Collect::default()).await.unwrap();
    let asked = c.asked.lock().unwrap().clone();
    let typed: Vec<&str> = asked
        .iter()
        .filter_map(|q| match q {
            Question::ToolApproval(a) => match a.detail.as_deref() {
                Some(ApprovalDetail::Input { text, .. }) => Some(text.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(typed, ["touch typed-then-ctrl-o^O"], "only the control key was asked about: {asked:?}");
    support::eventually(10, "the line typed with Enter to run", || c.work.join("typed-with-enter").exists())
        .await;
    assert!(!c.work.join("typed-then-ctrl-o").exists(), "Ctrl+O ran the typed line unasked");
}
