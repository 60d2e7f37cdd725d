//! The decision on one command line, from layers 1-3 (blocklist, what the parser cannot
//! reduce, PATH guard) and the approval layer's settings. `perch terminal check` prints it;
//! the approval gate acts on it. Remembered approvals are kept as the SHA-256 of the
//! normalised command: for each simple command its wrappers, program and first two arguments.

use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::blocklist::{self, Finding};
use super::parse::{self, Analysis};
use super::settings::AskLevel;

/// What layers 1-3 say about a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Refused whatever the user says.
    Blocked(String),
    /// It cannot be reduced to plain words: asked about, never auto-approved.
    Unclear(String),
    /// Plain words that the blocklist and the PATH guard let through.
    Clear,
}

#[derive(Debug, Clone)]
pub struct Assessment {
    pub check: Check,
    /// The normalised command remembered approvals are matched by.
    pub key: String,
    pub analysis: Analysis,
}

impl Assessment {
    pub fn hash(&self) -> String {
        approval_hash(&self.key)
    }
}

pub fn approval_hash(key: &str) -> String {
    Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses `line` as run in `cwd` and applies the blocklist and the PATH guard.
pub fn assess(line: &str, cwd: &Path, home: &Path) -> Assessment {
    let analysis = parse::analyse(line, cwd, home);
    let findings = blocklist::check(&analysis, home);
    let blocked = findings
        .iter()
        .find_map(|f| match f {
            Finding::Blocked(why) => Some(why.clone()),
            Finding::Unclear(_) => None,
        })
        .or_else(|| super::guard::check(&analysis.assigned));
    let unclear = analysis.unclear.first().cloned().or_else(|| {
        findings.iter().find_map(|f| match f {
            Finding::Unclear(why) => Some(why.clone()),
            Finding::Blocked(_) => None,
        })
    });
    let check = match (blocked, unclear) {
        (Some(why), _) => Check::Blocked(why),
        (None, Some(why)) => Check::Unclear(why),
        (None, None) if analysis.commands.is_empty() && line.trim().is_empty() => {
            Check::Unclear("the command is empty".into())
        }
        (None, None) => Check::Clear,
    };
    let key = normalised(&analysis);
    Assessment { check, key, analysis }
}

/// `cargo test -p ; git status` for `cd x && cargo test -p core && git status`.
fn normalised(analysis: &Analysis) -> String {
    analysis
        .commands
        .iter()
        .filter(|c| !matches!(c.name().as_str(), "cd" | "pushd"))
        .map(|c| {
            let mut parts: Vec<&str> = c.wrappers.iter().map(String::as_str).collect();
            parts.extend(c.words.iter().take(3).map(|w| w.text.as_str()));
            parts.join(" ")
        })
        .collect::<Vec<_>>()
        .join(" ; ")
}

/// The decision a user sees: the first word `perch terminal check` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "decision", content = "reason", rename_all = "snake_case")]
pub enum Decision {
    Blocked(String),
    Ask(String),
    Allowed(String),
}

impl Decision {
    pub fn word(&self) -> &'static str {
        match self {
            Self::Blocked(_) => "blocked",
            Self::Ask(_) => "ask",
            Self::Allowed(_) => "allowed",
        }
    }
    pub fn reason(&self) -> &str {
        match self {
            Self::Blocked(r) | Self::Ask(r) | Self::Allowed(r) => r,
        }
    }
}

/// What else the approval layer knows about this command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    pub ask_level: AskLevel,
    pub remembered: bool,
    pub session: bool,
    /// The sandbox is enforced here; without it every command is asked about.
    pub sandboxed: bool,
}

pub fn decide(assessment: &Assessment, ctx: Context) -> Decision {
    match &assessment.check {
        Check::Blocked(why) => return Decision::Blocked(why.clone()),
        Check::Unclear(why) => return Decision::Ask(format!("Perch cannot check it: {why}")),
        Check::Clear => {}
    }
    if !ctx.sandboxed {
        return Decision::Ask("there is no sandbox here, so every command is asked about".into());
    }
    if ctx.session {
        return Decision::Allowed("session mode is on".into());
    }
    match ctx.ask_level {
        AskLevel::Off => Decision::Allowed("the ask level is off".into()),
        AskLevel::OnMiss if ctx.remembered => Decision::Allowed("you always allow this command".into()),
        AskLevel::OnMiss => Decision::Ask("you have not allowed this command before".into()),
        AskLevel::Always => Decision::Ask("the ask level is always".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str) -> Check {
        assess(line, Path::new("/work/project"), Path::new("/home/u")).check
    }

    #[test]
    fn lines_are_blocked_asked_or_clear() {
        assert_eq!(check("cargo test && git status"), Check::Clear);
        assert!(matches!(check("rm -rf ~"), Check::Blocked(_)));
        assert!(matches!(check("export PATH=/tmp:$PATH"), Check::Blocked(why) if why.contains("PATH")));
        assert!(matches!(check("$X"), Check::Unclear(_)));
        assert!(matches!(check("   "), Check::Unclear(_)));
    }

    #[test]
    fn the_key_is_each_program_with_two_arguments() {
        let a =
            assess("cd src && cargo test -p core --lib && sudo git status", Path::new("/w"), Path::new("/h"));
        assert_eq!(a.key, "cargo test -p ; sudo git status");
        let b = assess("cargo   test -p other", Path::new("/w"), Path::new("/h"));
        assert_eq!(b.key, "cargo test -p");
        assert_eq!(a.hash().len(), 64);
    }

    #[test]
    fn ask_levels_sessions_and_the_missing_sandbox() {
        let clear = assess("ls", Path::new("/w"), Path::new("/h"));
        let unclear = assess("eval $x", Path::new("/w"), Path::new("/h"));
        let ctx = Context { sandboxed: true, ..Context::default() };
        assert_eq!(decide(&clear, ctx).word(), "ask");
        assert_eq!(decide(&clear, Context { remembered: true, ..ctx }).word(), "allowed");
        assert_eq!(
            decide(&clear, Context { ask_level: AskLevel::Always, remembered: true, ..ctx }).word(),
            "ask"
        );
        assert_eq!(decide(&clear, Context { ask_level: AskLevel::Off, ..ctx }).word(), "allowed");
        assert_eq!(decide(&clear, Context { session: true, ..ctx }).word(), "allowed");
        for c in
            [Context { session: true, ..ctx }, Context { ask_level: AskLevel::Off, remembered: true, ..ctx }]
        {
            assert_eq!(decide(&unclear, c).word(), "ask", "unclear lines are never auto-approved");
        }
        assert_eq!(
            decide(&clear, Context { ask_level: AskLevel::Off, sandboxed: false, ..ctx }).word(),
            "ask"
        );
    }
}
