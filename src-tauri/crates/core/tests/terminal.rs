// Over 500 lines: one test per promise of the terminal, on real PTYs and the real sandbox.
#![allow(clippy::unwrap_used)]
//! The terminal against real PTYs, the real sandbox and the process table: output and exit
//! codes, the hard timeout and Stop killing whole process groups (no orphans), send_input,
//! endless output capped, Landlock refusing writes outside the working folder, the network
//! switch, events saved for reopening; and through the agent loop with a fake model: approval,
//! remembered approvals, session mode ending with the answer, and the blocked case.
#![cfg(target_os = "linux")]

mod support;

use std::path::Path;
use std::time::Duration;

use perch_core::agent::run_turn;
use perch_core::mcp::CallOrigin;
use perch_core::questions::{ApprovalChoice, ApprovalDetail, Question};
use perch_core::terminal::{AskLevel, TerminalSettings, TerminalUpdate};
use perch_fake_llm::Script;
use serde_json::{Value, json};
use support::terminal::*;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn output_and_exit_codes_come_back_from_a_real_pty() {
    let (_root, engine, work) = setup().await;
    let out = direct(
        &engine,
        "echo hello from $(basename $PWD); test -t 1 && echo on-a-tty; exit 3",
        &CancellationToken::new(),
    )
    .await;
    assert!(out.text.contains("hello from work"), "{}", out.text);
    assert!(out.text.contains("on-a-tty"), "not a terminal: {}", out.text);
    assert!(out.text.contains("[exit code 3"), "{}", out.text);
    assert!(out.is_error);
    let ok = direct(&engine, "printf '\\033[1;32mgreen\\033[0m\\n'", &CancellationToken::new()).await;
    assert_eq!(ok.text.lines().next(), Some("green"), "escapes are removed for the model");
    assert!(!ok.is_error);
    assert!(work.is_dir());
}

#[tokio::test]
async fn the_timeout_kills_the_whole_group_leaving_no_orphans() {
    let (_root, engine, work) = setup().await;
    let s = settings(&engine).await;
    let (_, job) = engine
        .terminal()
        .run(
            "sleep 300 & sleep 300 & (sleep 300; echo never) ; wait",
            &work,
            &s,
            Duration::from_secs(1),
            CallOrigin::default(),
            None,
        )
        .await
        .unwrap();
    let pgid = job.pid.unwrap();
    support::eventually(10, "several processes in the group", || support::group_members(pgid).len() >= 3)
        .await;
    let report = job.wait_report(None, &CancellationToken::new()).await;
    let exit = report.exit.unwrap();
    assert!(exit.timed_out, "{exit:?}");
    assert_eq!(exit.code, None);
    support::eventually(5, "the group to be gone", || support::group_members(pgid).is_empty()).await;
}

#[tokio::test]
async fn stop_mid_command_kills_the_group_and_saves_what_arrived() {
    let (_root, engine, _work) = setup().await;
    let conversation = engine.store().create_conversation("t", None).await.unwrap();
    let mut updates = engine.terminal().subscribe();
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let origin = CallOrigin { conversation_id: Some(conversation.id.clone()), ..CallOrigin::default() };
    let args = json!({ "command": "echo started; sleep 200 & sleep 200" }).as_object().cloned();
    let engine2 = engine.clone();
    let call = tokio::spawn(async move {
        engine2.mcp().call_tool_from(&origin, "terminal", "run_command", args, &cancel, None).await.unwrap()
    });
    let mut pid = None;
    let mut seen = String::new();
    while !seen.contains("started") {
        match updates.recv().await.unwrap() {
            TerminalUpdate::Started(j) => pid = j.pid,
            TerminalUpdate::Output { data, .. } => seen.push_str(&data),
            _ => {}
        }
    }
    let pgid = pid.unwrap();
    stopper.cancel();
    let out = call.await.unwrap();
    assert!(out.text.contains("started") && out.text.contains("stopped by the user"), "{}", out.text);
    support::eventually(5, "the group to be gone", || support::group_members(pgid).is_empty()).await;
    let events = loop {
        let events = engine.store().terminal_events(&conversation.id).await.unwrap();
        if !events.is_empty() {
            break events;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(events[0].killed && events[0].output.contains("started"), "{:?}", events[0]);
}

#[tokio::test]
async fn send_input_feeds_a_program_waiting_for_it() {
    let (_root, engine, work) = setup().await;
    let s = settings(&engine).await;
    let (id, job) = engine
        .terminal()
        .run(
            "read -r -p 'name? ' name; echo \"hello $name\"",
            &work,
            &s,
            Duration::from_secs(30),
            CallOrigin::default(),
            None,
        )
        .await
        .unwrap();
    let first = job.wait_report(Some(Duration::from_millis(500)), &CancellationToken::new()).await;
    assert!(first.exit.is_none() && first.output.contains("name?"), "{first:?}");
    let args = json!({ "id": id, "text": "Ada\n" }).as_object().cloned();
    let out = engine
        .mcp()
        .call_tool_from(
            &CallOrigin::default(),
            "terminal",
            "send_input",
            args,
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
    let rest = job.wait_report(None, &CancellationToken::new()).await;
    let all = format!("{}{}", out.text, rest.output);
    assert!(all.contains("hello Ada"), "{all}");
    assert_eq!(job.exit().unwrap().code, Some(0));
}

#[tokio::test]
async fn endless_output_is_capped_and_killed_at_the_limit() {
    let (_root, engine, work) = setup().await;
    let s = TerminalSettings { max_output_mb: 2, ..settings(&engine).await };
    let (_, job) = engine
        .terminal()
        .run("yes perch", &work, &s, Duration::from_secs(60), CallOrigin::default(), None)
        .await
        .unwrap();
    let report = job.wait_report(None, &CancellationToken::new()).await;
    let exit = report.exit.unwrap();
    assert!(exit.output_capped && !exit.timed_out, "{exit:?}");
    let (saved, total) = job.saved_output();
    assert!(saved.len() <= 50 * 1024, "the table keeps the first 50 KB, not {}", saved.len());
    assert!(total > 2 << 20, "{total}");
    assert!(report.output.len() < 14 * 1024, "the model gets head and tail only: {}", report.output.len());
    assert!(report.output.contains("bytes of output left out"));
    support::eventually(5, "yes to be gone", || support::group_members(job.pid.unwrap()).is_empty()).await;
}

#[tokio::test]
async fn the_sandbox_refuses_writes_outside_and_allows_them_inside() {
    let (root, engine, work) = setup().await;
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(work.join(".git")).unwrap();
    let line = format!(
        "echo in > inside.txt && echo wrote-inside; touch {}/escaped.txt; echo x > .git/HEAD; echo done",
        outside.display()
    );
    let out = direct(&engine, &line, &CancellationToken::new()).await;
    assert!(out.text.contains("wrote-inside") && out.text.contains("done"), "{}", out.text);
    assert!(work.join("inside.txt").is_file());
    assert!(!outside.join("escaped.txt").exists(), "a write outside got through: {}", out.text);
    assert!(out.text.contains("Permission denied"), "{}", out.text);
    assert!(!work.join(".git/HEAD").exists(), ".git was writable: {}", out.text);
    let view = engine.terminal().sandbox_view(&work, &settings(&engine).await).await;
    assert!(view.enforced && view.summary.starts_with("Sandboxed"), "{view:?}");
}

// ---- the red team, through the engine: what issue 25 found a command could reach ----

/// F3: the folder a command starts in is the working folder or inside one the user made
/// writable: one outside, or beneath a hidden folder (Perch's data, a browser profile), is
/// refused before anything runs or a card is shown.
#[tokio::test]
async fn a_folder_the_model_picks_outside_the_writable_folders_is_refused() {
    let (root, engine, work) = setup().await;
    let elsewhere = root.path().join("elsewhere");
    let beneath_data = root.path().join("data/profile");
    for dir in [&elsewhere, &beneath_data, &work.join("sub")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let run_in = |cwd: &Path| {
        let args = json!({ "command": "touch made.txt && echo made", "cwd": cwd.display().to_string() });
        let engine = engine.clone();
        async move {
            engine
                .mcp()
                .call_tool_from(
                    &CallOrigin::default(),
                    "terminal",
                    "run_command",
                    args.as_object().cloned(),
                    &CancellationToken::new(),
                    None,
                )
                .await
                .unwrap()
        }
    };
    for cwd in [&elsewhere, &beneath_data] {
        let out = run_in(cwd).await;
        assert!(out.is_error && out.text.contains("outside the folders commands may change"), "{}", out.text);
        assert!(!cwd.join("made.txt").exists());
    }
    // Control: a subfolder of the working folder is fine.
    let out = run_in(&work.join("sub")).await;
    assert!(out.text.contains("made"), "{}", out.text);
    assert!(work.join("sub/made.txt").is_file());
}

#[tokio::test]
async fn a_conversation_given_its_own_folder_runs_and_writes_there_only() {
    let (root, engine, work) = setup().await;
    let own = root.path().join("site");
    std::fs::create_dir_all(&own).unwrap();
    let store = engine.store();
    let chat = store.create_conversation("Site", None).await.unwrap();
    let other = store.create_conversation("Other", None).await.unwrap();
    // Home itself is refused as anyone's folder, and nothing is saved.
    let home = perch_core::terminal::home();
    assert!(engine.choose_working_folder(&home, Some(&chat.id)).await.is_err());
    assert_eq!(store.conversation_folder(&chat.id).await.unwrap(), None);
    engine.choose_working_folder(&own, Some(&chat.id)).await.unwrap();

    let call = |cid: &str, args: Value| {
        let origin = CallOrigin { conversation_id: Some(cid.to_owned()), ..CallOrigin::default() };
        let engine = engine.clone();
        async move {
            let cancel = CancellationToken::new();
            let mcp = engine.mcp();
            mcp.call_tool_from(&origin, "terminal", "run_command", args.as_object().cloned(), &cancel, None)
                .await
                .unwrap()
        }
    };
    let run = |cid: &str| call(cid, json!({ "command": "pwd; touch made.txt && echo made || echo refused" }));
    let out = run(&chat.id).await;
    assert!(out.text.contains(&own.display().to_string()) && out.text.contains("made"), "{}", out.text);
    assert!(own.join("made.txt").is_file());
    assert!(!work.join("made.txt").exists());
    // The conversation's folder is the one writable folder: a command is not even started in the
    // default one.
    let line = json!({ "command": "touch there.txt && echo made || echo refused", "cwd": work.display().to_string() });
    let out = call(&chat.id, line).await;
    assert!(out.text.starts_with("Not run:") && out.text.contains("outside the folders"), "{}", out.text);
    assert!(!work.join("there.txt").exists());
    // Control: another conversation still uses the working folder from Settings.
    let out = run(&other.id).await;
    assert!(out.text.contains(&work.display().to_string()) && out.text.contains("made"), "{}", out.text);
    assert!(work.join("made.txt").is_file());

    // Listed with the permissions, and revoked there: the conversation falls back to Settings'.
    let listed = perch_core::engine::permissions::list(&engine).await.unwrap();
    let folder = listed
        .iter()
        .find(|p| p.kind == perch_core::engine::permissions::PermissionKind::ConversationFolder)
        .unwrap();
    assert!(folder.label.contains("site") && folder.scope.contains("Site"), "{folder:?}");
    perch_core::engine::permissions::revoke(&engine, &folder.id).await.unwrap();
    assert_eq!(store.conversation_folder(&chat.id).await.unwrap(), None);
    std::fs::remove_file(work.join("made.txt")).unwrap();
    let out = run(&chat.id).await;
    assert!(out.text.contains(&work.display().to_string()), "{}", out.text);
    assert!(work.join("made.txt").is_file());
}

/// A page loaded again (freed while hidden, crashed) subscribes anew: the feed of the page it
/// replaced ends instead of pushing every update into a page that is gone; the new one gets
/// the command's output.
#[tokio::test]
async fn a_new_panel_feed_ends_the_one_it_replaces() {
    let (_root, engine, _work) = setup().await;
    let mut old = engine.terminal().panel_feed();
    let mut new = engine.terminal().panel_feed();
    let ended =
        tokio::time::timeout(Duration::from_secs(5), old.next()).await.expect("the old feed ends at once");
    assert!(ended.is_none(), "the replaced feed gave {ended:?}");
    direct(&engine, "echo to-the-new-page", &CancellationToken::new()).await;
    let mut seen = String::new();
    while !seen.contains("to-the-new-page") {
        match tokio::time::timeout(Duration::from_secs(10), new.next()).await.expect("an update") {
            Some(TerminalUpdate::Output { data, .. }) => seen.push_str(&data),
            Some(_) => {}
            None => panic!("the current feed ended"),
        }
    }
}

/// The red team: a working folder that passed when it was chosen is swapped for a link to
/// Perch's data folder (it could as well be home). Commands must not write through it.
#[tokio::test]
async fn a_working_folder_swapped_for_a_link_after_it_was_chosen_writes_nothing_there() {
    let (_root, engine, work) = setup().await;
    // Control: the folder as chosen takes the write.
    let out = direct(&engine, "touch made.txt && echo made || echo refused", &CancellationToken::new()).await;
    assert!(out.text.contains("made") && work.join("made.txt").is_file(), "{}", out.text);
    let data = engine.data_dir().root().to_path_buf();
    std::fs::remove_dir_all(&work).unwrap();
    std::os::unix::fs::symlink(&data, &work).unwrap();
    let out =
        direct(&engine, "touch pwned.txt && echo made || echo refused", &CancellationToken::new()).await;
    assert!(!data.join("pwned.txt").exists(), "a write landed in Perch's data: {}", out.text);
    assert!(out.is_error && out.text.contains("No working folder"), "{}", out.text);
}

#[tokio::test]
async fn no_command_runs_before_a_working_folder_is_chosen() {
    let (_root, engine, work) = setup().await;
    engine.settings().update(|s| s.terminal.working_folder = String::new()).await.unwrap();
    let out = direct(&engine, "touch never.txt", &CancellationToken::new()).await;
    assert!(out.is_error && out.text.contains("No working folder"), "{}", out.text);
    assert!(!work.join("never.txt").exists());
    assert!(!perch_core::terminal::home().join("never.txt").exists());
}

#[tokio::test]
async fn perchs_data_folder_is_hidden_from_commands() {
    let (_root, engine, work) = setup().await;
    let data = engine.data_dir().root().to_path_buf();
    std::fs::write(data.join("keys.enc"), "the-key-store").unwrap();
    std::fs::write(work.join("visible.txt"), "visible-text").unwrap();
    let line = format!("cat {}/keys.enc; ls {}; cat visible.txt", data.display(), data.display());
    let out = direct(&engine, &line, &CancellationToken::new()).await;
    assert!(!out.text.contains("the-key-store"), "Perch's key file was read: {}", out.text);
    assert!(out.text.contains("visible-text"), "the control read failed: {}", out.text);
}

#[tokio::test]
async fn commands_get_an_allow_listed_environment() {
    let (_root, engine, _work) = setup().await;
    let out = direct(&engine, "env | cut -d= -f1 | sort -u", &CancellationToken::new()).await;
    let allowed = |name: &str| {
        name.starts_with("LC_")
            || [
                "HOME",
                "USER",
                "LOGNAME",
                "LANG",
                "LANGUAGE",
                "TERM",
                "SHELL",
                "TMPDIR",
                "COLORTERM",
                "TZ",
                "PATH",
                "PAGER",
                "GIT_PAGER",
                "PWD",
                "OLDPWD",
                "SHLVL",
                "_",
            ]
            .contains(&name)
    };
    let names: Vec<&str> = out.text.lines().filter(|l| !l.starts_with('[')).map(str::trim).collect();
    assert!(names.contains(&"PATH") && names.contains(&"HOME"), "{}", out.text);
    let leaked: Vec<&&str> = names.iter().filter(|n| !allowed(n)).collect();
    assert!(leaked.is_empty(), "passed to the command: {leaked:?}");
    // Control: this process has variables of its own that a whole-environment copy would pass.
    assert!(std::env::vars().any(|(k, _)| !allowed(&k)), "the test's environment has nothing to leak");
}

/// Host PIDs of `sleep` processes whose arguments hold `mark`.
fn sleeping_with(mark: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default().contains(") Z ");
        if cmdline.starts_with("sleep ") && cmdline.contains(mark) && !zombie {
            found.push(pid);
        }
    }
    found
}

#[tokio::test]
async fn nothing_a_command_starts_outlives_it() {
    let (_root, engine, _work) = setup().await;
    let mark = format!("{}.5", 3000 + std::process::id() % 1000);
    let line = format!(
        "setsid sleep {mark} </dev/null >/dev/null 2>&1 & nohup sleep {mark} >/dev/null 2>&1 & \
         (sleep {mark} </dev/null >/dev/null 2>&1 &); sleep 0.3; echo started"
    );
    let out = direct(&engine, &line, &CancellationToken::new()).await;
    assert!(out.text.contains("started"), "{}", out.text);
    support::eventually(5, "what the command started to be gone", || sleeping_with(&mark).is_empty()).await;
}

#[tokio::test]
async fn quitting_kills_running_commands_and_waits_for_their_end() {
    let (_root, engine, work) = setup().await;
    let mark = format!("{}.7", 3000 + std::process::id() % 1000);
    let s = settings(&engine).await;
    let line = format!("setsid sleep {mark} </dev/null >/dev/null 2>&1 & sleep {mark}");
    let (_, job) = engine
        .terminal()
        .run(&line, &work, &s, Duration::from_secs(100), CallOrigin::default(), None)
        .await
        .unwrap();
    support::eventually(10, "both sleeps to start", || sleeping_with(&mark).len() == 2).await;
    assert_eq!(engine.stop_terminal(Duration::from_secs(5)).await, 0, "a command was still running");
    assert!(job.exit().is_some());
    support::eventually(5, "the sleeps to be gone", || sleeping_with(&mark).is_empty()).await;
}

#[tokio::test]
async fn the_network_is_cut_when_the_setting_says_so() {
    let (_root, engine, _work) = setup().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let line = format!("(echo > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected || echo refused");
    let open = direct(&engine, &line, &CancellationToken::new()).await;
    assert!(open.text.contains("connected"), "{}", open.text);
    engine.settings().update(|s| s.terminal.network = false).await.unwrap();
    let closed = direct(&engine, &line, &CancellationToken::new()).await;
    assert!(closed.text.contains("refused"), "{}", closed.text);
}

// ---- through the agent loop, with a fake model and a scripted user ----

#[tokio::test]
async fn the_card_asks_with_the_command_and_always_allow_is_remembered() {
    let c = chat(ApprovalChoice::Always, AskLevel::OnMiss).await;
    for _ in 0..2 {
        c.fake.push(turn_calling(
            "terminal__run_command",
            json!({ "command": "echo remembered", "reason": "to test" }),
        ));
        c.fake.push(Script::answer("Done."));
    }
    run_turn(c.engine.agent(), ask("run the command to test"), &Collect::default()).await.unwrap();
    assert!(tool_result(&c.fake, 1).contains("remembered"), "{}", tool_result(&c.fake, 1));
    {
        let asked = c.asked.lock().unwrap();
        let [Question::ToolApproval(q)] = asked.as_slice() else { panic!("one question: {asked:?}") };
        let Some(ApprovalDetail::Command { command, cwd, reason, sandbox, can_remember, .. }) =
            q.detail.as_deref()
        else {
            panic!("a command card: {q:?}")
        };
        assert_eq!((command.as_str(), reason.as_deref()), ("echo remembered", Some("to test")));
        assert_eq!(Path::new(cwd), c.work);
        assert!(sandbox.enforced && *can_remember);
    }
    let remembered = c.engine.store().remembered_approvals().await.unwrap();
    assert_eq!(remembered.len(), 1);
    // The whole command and the folder it was allowed in, as Settings lists it.
    let label = &remembered[0].label;
    assert!(label.starts_with("echo remembered, in ") && label.ends_with("/work"), "{label}");
    assert_eq!(remembered[0].hash.len(), 64);
    run_turn(c.engine.agent(), ask("run it again"), &Collect::default()).await.unwrap();
    assert_eq!(c.asked.lock().unwrap().len(), 1, "the remembered command ran without a question");
    assert!(tool_result(&c.fake, 3).contains("remembered"));
    c.engine.store().revoke_approval(Some(&remembered[0].hash)).await.unwrap();
    assert!(c.engine.store().remembered_approvals().await.unwrap().is_empty());
}

#[tokio::test]
async fn session_mode_runs_without_questions_and_ends_with_the_answer() {
    let c = chat(ApprovalChoice::Once, AskLevel::Always).await;
    let mut updates = c.engine.terminal().subscribe();
    c.fake.push(turn_calling("terminal__request_session_mode", json!({ "reason": "build and test" })));
    c.fake.push(turn_calling("terminal__run_command", json!({ "command": "echo in-session" })));
    c.fake.push(turn_calling("terminal__run_command", json!({ "command": "echo second" })));
    c.fake.push(Script::answer("Done."));
    let answer = run_turn(c.engine.agent(), ask("build it"), &Collect::default()).await.unwrap();
    let asked = c.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "only the session was asked about: {asked:?}");
    assert!(
        matches!(&asked[0], Question::ToolApproval(q) if matches!(q.detail.as_deref(), Some(ApprovalDetail::Session { .. })))
    );
    assert!(tool_result(&c.fake, 2).contains("in-session"));
    assert!(tool_result(&c.fake, 3).contains("second"));
    // The answer ended: the session ended with it, and the panel heard.
    let mut began = false;
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let TerminalUpdate::Session { folder, conversation_id, .. } = updates.recv().await.unwrap() {
                assert_eq!(conversation_id, answer.conversation_id);
                if folder.is_none() {
                    break;
                }
                began = true;
            }
        }
    })
    .await;
    assert!(began && ended.is_ok(), "the session began and ended with the answer");
    // A new answer asks again.
    c.fake.push(turn_calling("terminal__run_command", json!({ "command": "echo after" })));
    c.fake.push(Script::answer("Done."));
    run_turn(c.engine.agent(), ask("again"), &Collect::default()).await.unwrap();
    assert_eq!(c.asked.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn blocked_and_denied_commands_never_run_and_are_recorded() {
    let c = chat(ApprovalChoice::Deny, AskLevel::OnMiss).await;
    let marker = c.work.join("ran");
    c.fake.push(turn_calling(
        "terminal__run_command",
        json!({ "command": format!("touch {} && rm -rf ~", marker.display()) }),
    ));
    c.fake.push(Script::answer("I could not."));
    let answer = run_turn(c.engine.agent(), ask("clean up"), &Collect::default()).await.unwrap();
    assert!(c.asked.lock().unwrap().is_empty(), "a blocked command is never asked about");
    let result = tool_result(&c.fake, 1);
    assert!(
        result.contains("not allowed") && !result.contains("rm -rf"),
        "the model is not told the rule: {result}"
    );
    c.fake.push(turn_calling(
        "terminal__run_command",
        json!({ "command": format!("touch {}", marker.display()) }),
    ));
    c.fake.push(Script::answer("Declined."));
    let mut second = ask("make a file");
    second.conversation_id = Some(answer.conversation_id.clone());
    run_turn(c.engine.agent(), second, &Collect::default()).await.unwrap();
    assert_eq!(c.asked.lock().unwrap().len(), 1);
    assert!(!marker.exists(), "nothing ran");
    let events = c.engine.store().terminal_events(&answer.conversation_id).await.unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[0].blocked.as_deref().is_some_and(|b| b.contains("home")), "{:?}", events[0]);
    assert!(events[1].denied && events[1].blocked.is_none());
}
