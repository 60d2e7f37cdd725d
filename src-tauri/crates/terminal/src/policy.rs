//! The decision on one command line, from layers 1-3 (blocklist, what the parser cannot
//! reduce, PATH guard) and the approval layer's settings. `perch terminal check` prints it;
//! the approval gate acts on it. Remembered approvals are kept as the SHA-256 of the whole
//! normalised line and the folder it runs in ([`Assessment::key`]), so "always allow" covers
//! exactly what the card showed: another argument, a redirection, a variable or another folder
//! is another command. Keys used to be each program with its first two arguments; approvals
//! remembered that way no longer match anything and are simply asked about again.

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
    /// What remembered approvals are matched by: the folder, then the line's shape
    /// ([`Analysis::shape`]), one part a line.
    pub key: String,
    /// The command as Settings lists a remembered approval: `git diff --stat, in ~/src/app`.
    pub label: String,
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
    let unclear = analysis
        .unclear
        .first()
        .cloned()
        .or_else(|| {
            findings.iter().find_map(|f| match f {
                Finding::Unclear(why) => Some(why.clone()),
                Finding::Blocked(_) => None,
            })
        })
        .or_else(|| write_outside(&analysis, cwd, home));
    let check = match (blocked, unclear) {
        (Some(why), _) => Check::Blocked(why),
        (None, Some(why)) => Check::Unclear(why),
        (None, None) if analysis.commands.is_empty() && line.trim().is_empty() => {
            Check::Unclear("the command is empty".into())
        }
        (None, None) => Check::Clear,
    };
    let mut key = format!("in {}", cwd.display());
    for part in &analysis.shape {
        key.push('\n');
        key.push_str(part);
    }
    let label = format!("{}, in {}", analysis.shape.join(" ").replace(" ; ", "; "), shown_folder(cwd, home));
    Assessment { check, key, label, analysis }
}

/// `~/src/app` for a folder in the home folder.
fn shown_folder(cwd: &Path, home: &Path) -> String {
    match cwd.strip_prefix(home) {
        Ok(rest) if home != Path::new("/") && rest.as_os_str().is_empty() => "~".to_owned(),
        Ok(rest) if home != Path::new("/") => format!("~/{}", rest.display()),
        _ => cwd.display().to_string(),
    }
}

/// Why a line that redirects output out of the folder it runs in is asked about: the sandbox
/// may allow more (the writable folders from Settings), but an approval of the line does not.
/// The sandbox's private temp folder (`/tmp`, unless the home folder lies there), the
/// terminal's own devices and bash's network names (`/dev/tcp/host/port`, which the network
/// setting governs) are fine.
fn write_outside(analysis: &Analysis, cwd: &Path, home: &Path) -> Option<String> {
    const DEVICES: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"];
    analysis.writes.iter().find_map(|w| {
        if w.target.dynamic {
            return Some(format!("it writes to {}, a file only known when it runs", w.target.text));
        }
        let Some(path) = super::paths::resolve(&w.target.text, w.cwd.as_deref(), home) else {
            return Some(format!("it writes to {} in a folder only known when it runs", w.target.text));
        };
        let fine = path.starts_with(cwd)
            || (path.starts_with("/tmp") && !path.starts_with(home))
            || ["/dev/fd", "/dev/tcp", "/dev/udp"].iter().any(|d| path.starts_with(d))
            || DEVICES.iter().any(|d| path == Path::new(d));
        (!fine).then(|| format!("it writes to {}, outside the folder it runs in", path.display()))
    })
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

    fn in_folder(line: &str, cwd: &str) -> Assessment {
        assess(line, Path::new(cwd), Path::new("/home/u"))
    }

    #[test]
    fn the_key_is_the_whole_line_and_its_folder() {
        let a = in_folder("cd src && cargo test -p core --lib && sudo git status", "/w");
        assert_eq!(a.key, "in /w\ncd src\n&&\ncargo test -p core --lib\n&&\nsudo git status");
        assert_eq!(a.hash().len(), 64);
        // Spaces and quoting do not matter; every word, the folder and redirections do.
        let key = |line: &str, cwd: &str| in_folder(line, cwd).key;
        assert_eq!(key("git diff --stat", "/w"), key("git   'diff'  \"--stat\"", "/w"));
        assert_ne!(key("cargo test -p core", "/w"), key("cargo test -p other", "/w"));
        assert_ne!(key("make", "/a"), key("make", "/b"));
        assert_ne!(key("git diff", "/w"), key("git diff; rm -rf src", "/w"));
        assert_ne!(key("echo a b", "/w"), key("echo 'a b'", "/w"));
        assert_ne!(key("echo a\nrm -rf src", "/w"), key("echo a rm -rf src", "/w"));
        assert_ne!(key("cat notes.txt", "/w"), key("cat notes.txt > src/main.rs", "/w"));
        assert_ne!(key("ls > a", "/w"), key("ls >> a", "/w"));
        assert_ne!(key("sudo -u bob ls", "/w"), key("sudo -u root ls", "/w"));
        assert_ne!(key("FOO=1 make", "/w"), key("make", "/w"));
        assert_ne!(key("export FOO=1; make", "/w"), key("make", "/w"));
    }

    #[test]
    fn the_label_says_what_and_where() {
        assert_eq!(in_folder("git diff --stat", "/home/u/src/app").label, "git diff --stat, in ~/src/app");
        assert_eq!(in_folder("cd x;ls  -la", "/home/u").label, "cd x; ls -la, in ~");
        assert_eq!(in_folder("make", "/srv/b").label, "make, in /srv/b");
    }

    #[test]
    fn what_approving_git_diff_or_cat_covers() {
        let home = Path::new("/home/u");
        let work = Path::new("/home/u/src/app");
        let approved = assess("git diff", work, home);
        assert_eq!(approved.check, Check::Clear);
        let hooked = assess("GIT_EXTERNAL_DIFF='sh -c x' git diff", work, home);
        assert_ne!(hooked.key, approved.key);
        assert!(matches!(&hooked.check, Check::Blocked(why) if why.contains("GIT_EXTERNAL_DIFF")));
        let cat = assess("cat notes.txt", work, home);
        let truncating = assess("cat notes.txt > src/main.rs", work, home);
        assert_ne!(cat.key, truncating.key);
        assert_eq!(truncating.check, Check::Clear, "a write inside the folder is the line's own");
        let ctx = Context { sandboxed: true, remembered: true, ..Context::default() };
        // What a remembered key can never allow: the gate asks whatever is remembered.
        for line in [
            "cat notes.txt > ~/.config/autostart/x.desktop",
            "cat notes.txt > ../other/main.rs",
            "cat notes.txt > $OUT",
            "FOO=1 git diff",
            "env FOO=1 git diff",
            "python3 -c 'import os'",
            "node -e 'x'",
            "perl -e 'x'",
            "ruby -e 'x'",
            "sh -c 'git diff'",
            "bash -c 'git diff'",
        ] {
            let a = assess(line, work, home);
            assert!(matches!(a.check, Check::Unclear(_)), "{line}: {:?}", a.check);
            for c in [ctx, Context { session: true, ..ctx }, Context { ask_level: AskLevel::Off, ..ctx }] {
                assert_eq!(decide(&a, c).word(), "ask", "{line} under {c:?}");
            }
        }
        for line in [
            "ls > /dev/null 2>&1",
            "make > /tmp/log",
            "cd src && cargo build > build.log",
            "echo > /dev/tcp/127.0.0.1/80",
        ] {
            assert_eq!(assess(line, work, home).check, Check::Clear, "{line}");
        }
        let blocked = assess("bash -c 'rm -rf ~'", work, home);
        assert!(matches!(blocked.check, Check::Blocked(_)), "a blocked inner command stays blocked");
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

    /// What the store keeps for "always allow" is this hash: a remembered line matches only
    /// itself, in its folder.
    #[tokio::test]
    async fn an_approval_covers_the_whole_line_in_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = perch_store::Store::open(&dir.path().join("perch.db"), perch_store::Integrity::Full)
            .await
            .unwrap();
        let home = Path::new("/home/u");
        let approve = |line: &str, cwd: &str| assess(line, Path::new(cwd), home);
        for a in [approve("git diff", "/home/u/a"), approve("cat notes.txt", "/home/u/a")] {
            store.remember_approval(&a.hash(), &a.label).await.unwrap();
        }
        // A row from when the key was the program and its first two arguments.
        store.remember_approval(&approval_hash("make"), "make").await.unwrap();
        let remembered = async |line: &str, cwd: &str| {
            store.is_approval_remembered(&approve(line, cwd).hash()).await.unwrap()
        };
        assert!(remembered("git  'diff'", "/home/u/a").await);
        assert!(!remembered("git diff", "/home/u/b").await, "another folder");
        assert!(!remembered("git diff --stat", "/home/u/a").await, "another argument");
        assert!(!remembered("GIT_EXTERNAL_DIFF=x git diff", "/home/u/a").await);
        assert!(remembered("cat notes.txt", "/home/u/a").await);
        assert!(!remembered("cat notes.txt > src/main.rs", "/home/u/a").await);
        assert!(!remembered("make", "/home/u/a").await, "old rows match nothing");
        let labels: Vec<String> =
            store.remembered_approvals().await.unwrap().into_iter().map(|r| r.label).collect();
        assert!(labels.contains(&"git diff, in ~/a".to_owned()), "{labels:?}");
    }
}
