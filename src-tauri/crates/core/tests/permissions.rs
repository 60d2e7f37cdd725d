#![allow(clippy::unwrap_used)]
//! Every kind of permission in the one list, and each revoked through it: the list shows what
//! was given, and after revoking, the check that read it (the rule, the conversation grant, the
//! remembered command, the session) no longer allows anything.
#![cfg(target_os = "linux")]

mod support;

use std::path::PathBuf;

use perch_core::engine::permissions::{self, PermissionError, PermissionKind};
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

/// An add-server link tried against a server the user has, with its rules: the link's program
/// would get them (rules and grants match by server name). The engine refuses the name, in any
/// case, and the name of a bundled server, and one only permissions still know; the servers
/// file and the rules stay as they were. A new name adds.
#[tokio::test]
async fn a_link_never_takes_a_name_that_a_server_or_a_permission_has() {
    use perch_core::engine::add_link_save::{AddLinkError, add};
    use perch_core::mcp::add_link::parse;
    use perch_core::mcp::{ConfigError, Transport};

    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mine = serde_json::json!({ "command": "perch-test-absent-github", "autoStart": false });
    let engine = support::engine_with_servers(root.path(), serde_json::json!({ "github": mine })).await;
    permissions::add_rule(&engine, "github:*", RuleDecision::Allow).await.unwrap();
    let file = engine.data_dir().root().join("mcp_servers.json");
    let before = std::fs::read_to_string(&file).unwrap();
    let command_of = |name: &str| match engine.mcp().server(name).unwrap().config.transport {
        Transport::Stdio { command, .. } => command,
        other => panic!("{other:?}"),
    };

    for name in ["github", "GitHub", "filesystem"] {
        let link = format!("perch://mcp/add?name={name}&command=npx&arg=-y&arg=evil-pkg");
        let refused = add(&engine, &parse(&link).unwrap()).await.unwrap_err();
        let existing = name.to_lowercase();
        assert!(
            matches!(&refused, AddLinkError::Config(ConfigError::NameTaken { existing: e }) if *e == existing),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("a link cannot replace a server"), "{refused}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before, "the user's entry is left alone");
    assert_eq!(command_of("github"), "perch-test-absent-github");
    let rules = engine.settings().get().await.tools.rules;
    assert_eq!(rules.iter().map(|r| r.pattern.as_str()).collect::<Vec<_>>(), ["github:*"]);

    // Names no server has any more, but a rule or a conversation's grant still does.
    permissions::add_rule(&engine, "Linear:create_issue", RuleDecision::Allow).await.unwrap();
    let chat = engine.store().create_conversation("Notes", None).await.unwrap();
    engine.store().grant_tool(&chat.id, "notion", "search").await.unwrap();
    for (name, given) in [
        ("linear", "allow Linear:create_issue"),
        ("Notion", "allow notion:search in the conversation \"Notes\""),
    ] {
        let link = format!("perch://mcp/add?name={name}&url=https%3A%2F%2Fmcp.example%2Fmcp");
        let refused = add(&engine, &parse(&link).unwrap()).await.unwrap_err();
        assert!(
            matches!(&refused, AddLinkError::NamedByPermissions { permissions, .. } if permissions == &[given]),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("revoke them in Settings -> Permissions"), "{refused}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

    // The control: a name nothing has is added, as the link proposed.
    let link = "perch://mcp/add?name=time&command=perch-test-absent-time&arg=--local-timezone%3DUTC";
    assert_eq!(add(&engine, &parse(link).unwrap()).await.unwrap(), ["time"]);
    assert_eq!(command_of("time"), "perch-test-absent-time");
    assert_eq!(command_of("github"), "perch-test-absent-github");
    engine.mcp().shutdown().await;
}
