#![allow(clippy::unwrap_used)]
//! Every kind of permission in the one list, and each revoked through it: the list shows what
//! was given, and after revoking, the check that read it (the rule, the conversation grant, the
//! remembered command, the session) no longer allows anything.
#![cfg(target_os = "linux")]

mod support;

use std::path::PathBuf;

use perch_core::permissions::{self, PermissionError, PermissionKind};
use perch_core::settings::RuleDecision;
use perch_core::terminal::Session;
use perch_core::terminal::policy::assess;

#[tokio::test]
async fn every_permission_is_listed_and_each_revoke_takes_it_back() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let engine = support::engine(root.path()).await;
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let store = engine.store();

    permissions::add_rule(&engine, "filesystem:read_file", RuleDecision::Allow).await.unwrap();
    let chat = store.create_conversation("Plans for Friday", None).await.unwrap();
    store.grant_tool(&chat.id, "web", "fetch").await.unwrap();
    let command = permissions::allow_command(&engine, "git diff --stat", &work).await.unwrap();
    engine.terminal().start_session(
        "run-1",
        Session { conversation_id: chat.id.clone(), folder: work.clone(), reason: "build it".into() },
    );

    let all = permissions::list(&engine).await.unwrap();
    let kinds: Vec<PermissionKind> = all.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            PermissionKind::ToolRule,
            PermissionKind::ConversationGrant,
            PermissionKind::TerminalCommand,
            PermissionKind::TerminalSession
        ]
    );
    assert_eq!(all[0].label, "allow filesystem:read_file");
    assert!(all[1].scope.contains("Plans for Friday"), "{:?}", all[1]);
    assert_eq!(all[2].label, "git diff --stat");
    assert!(all[2].scope.ends_with("/work"), "{:?}", all[2]);
    assert_eq!(all[2].id, command.id);
    assert!(all[3].scope.contains(&work.display().to_string()), "{:?}", all[3]);

    // Each revoke undoes what the check reads.
    permissions::revoke(&engine, &all[0].id).await.unwrap();
    assert!(engine.settings().get().await.tools.rules.is_empty());
    permissions::revoke(&engine, &all[1].id).await.unwrap();
    assert!(!store.is_granted(&chat.id, "web", "fetch").await.unwrap());
    let hash = assess("git diff --stat", &work, &perch_core::terminal::home()).hash();
    assert!(store.is_approval_remembered(&hash).await.unwrap());
    // A command's hash prefix will do.
    let prefix = all[2].id.trim_start_matches("command:")[..8].to_owned();
    permissions::revoke(&engine, &prefix).await.unwrap();
    assert!(!store.is_approval_remembered(&hash).await.unwrap());
    permissions::revoke(&engine, &all[3].id).await.unwrap();
    assert!(engine.terminal().session("run-1").is_none());
    assert!(permissions::list(&engine).await.unwrap().is_empty());
    assert!(matches!(
        permissions::revoke(&engine, "command:nothing").await,
        Err(PermissionError::NotFound(_))
    ));
}

#[tokio::test]
async fn what_perch_blocks_or_cannot_check_is_never_allowed_ahead() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let engine = support::engine(root.path()).await;
    let work: PathBuf = root.path().to_path_buf();
    for (line, why) in [
        ("rm -rf ~", "never runs"),
        ("python3 -c 'import os'", "cannot check"),
        ("GIT_PAGER=less git log", "never runs"),
        ("cat notes.txt > ../elsewhere.txt", "cannot check"),
    ] {
        match permissions::allow_command(&engine, line, &work).await {
            Err(PermissionError::Refused(text)) => assert!(text.contains(why), "{line}: {text}"),
            other => panic!("{line} was allowed ahead: {other:?}"),
        }
    }
    assert!(permissions::add_rule(&engine, "not a pattern", RuleDecision::Allow).await.is_err());
    assert!(permissions::list(&engine).await.unwrap().is_empty());
}
