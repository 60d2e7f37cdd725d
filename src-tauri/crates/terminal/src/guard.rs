//! Layer 3, the PATH guard: a line that tries to change how programs are found, loaded or
//! hooked (PATH, the dynamic loader, shell start-up hooks, the variables through which git,
//! pagers, editors and interpreters run other programs) is refused. And the environment a
//! command runs with is built from an allow-list, so keys, tokens and the handles of the
//! user's session (the session bus, the ssh agent, the display) never reach it. The list of
//! guarded variables is `perch_foundation::run_env`'s, the one links to MCP servers obey too.

use std::ffi::OsStr;
use std::sync::OnceLock;

use perch_foundation::run_env::any;
pub use perch_foundation::run_env::{GUARDED, matches};

/// Variables a command never gets, even when the user names them in Settings: keys and
/// tokens, and the handles through which a process reaches the user's session (the session
/// bus can start programs outside the sandbox; the agents sign and decrypt; the display
/// lets a program type into other windows) or Perch itself.
const NEVER: &[&str] = &[
    "*_TOKEN",
    "*_KEY",
    "*_KEY_ID",
    "*API_KEY*",
    "*ACCESS_KEY*",
    "*_SECRET",
    "*SECRET_KEY*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_CREDENTIALS",
    "DBUS_*",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "PERCH_*",
];

/// Variables passed on as Perch has them (when it has them).
const PASSED: &[&str] = &["HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_*", "SHELL", "COLORTERM", "TZ"];

/// Variables whose value Perch sets itself, whatever the environment or Settings say. The
/// temp folder is the sandbox's private one; output goes to the card, never to a pager.
fn fixed(path: &str) -> [(&'static str, String); 5] {
    [
        ("PATH", path.to_owned()),
        ("TERM", "xterm-256color".to_owned()),
        ("TMPDIR", "/tmp".to_owned()),
        ("PAGER", "cat".to_owned()),
        ("GIT_PAGER", "cat".to_owned()),
    ]
}

/// Why the line is refused, when it changes a guarded variable.
pub fn check(assigned: &[String]) -> Option<String> {
    let hit = assigned.iter().find(|name| any(GUARDED, name))?;
    Some(format!("it changes {hit}, which decides which programs run"))
}

/// The PATH of Perch's environment when this was first called (at start-up).
pub fn startup_path() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned()))
}

/// The environment a command runs with, built from an allow-list of Perch's own: the
/// user's identity, language and time zone, a terminal type, the sandbox's temp folder,
/// `path` as PATH (the login shell's, as MCP servers get), and the variables the user names
/// in Settings (`extra_names`, names or patterns such as `CARGO_*`), minus any that are
/// never passed.
pub fn command_env(path: &OsStr, extra_names: &[String]) -> Vec<(String, String)> {
    // A variable whose name or value is not UTF-8 is left out rather than mangled.
    let vars = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    env_from(vars, &path.to_string_lossy(), extra_names)
}

fn env_from(
    vars: impl IntoIterator<Item = (String, String)>,
    path: &str,
    extra_names: &[String],
) -> Vec<(String, String)> {
    let fixed = fixed(path);
    let extra: Vec<&str> = extra_names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()).collect();
    let mut env: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(k, _)| {
            !k.is_empty()
                && !any(NEVER, k)
                && !fixed.iter().any(|(f, _)| f.eq_ignore_ascii_case(k))
                && (any(PASSED, k) || any(&extra, k))
        })
        .collect();
    env.sort();
    env.dedup_by(|a, b| a.0 == b.0);
    env.extend(fixed.into_iter().map(|(k, v)| (k.to_owned(), v)));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assigned(name: &str) -> Option<String> {
        check(&[name.to_owned()])
    }

    #[test]
    fn guarded_names_are_refused_whatever_their_case() {
        assert!(assigned("path").is_some());
        assert!(assigned("LD_PRELOAD").unwrap().contains("LD_PRELOAD"));
        assert_eq!(assigned("RUST_LOG"), None);
        assert_eq!(assigned("HOME"), None);
    }

    #[test]
    fn prefixes_and_suffixes_cover_what_real_tools_read() {
        for name in [
            "GIT_EXTERNAL_DIFF",
            "git_ssh_command",
            "GIT_PAGER",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_KEY_0",
            "GIT_EXEC_PATH",
            "GIT_ASKPASS",
            "FZF_DEFAULT_COMMAND",
            "PROMPT_COMMAND",
            "PAGER",
            "MANPAGER",
            "EDITOR",
            "GIT_EDITOR",
            "VISUAL",
            "PYTHONPATH",
            "PYTHONHOME",
            "NODE_OPTIONS",
            "NODE_PATH",
            "RUBYOPT",
            "RUBYLIB",
            "PERL5OPT",
            "PERL5LIB",
            "JAVA_TOOL_OPTIONS",
            "_JAVA_OPTIONS",
            "LD_AUDIT",
            "LD_BIND_NOW",
            "DYLD_INSERT_LIBRARIES",
            "BASH_ENV",
            "ENV",
            "BASH_FUNC_ls%%",
        ] {
            assert!(assigned(name).is_some(), "{name} is not guarded");
        }
        for name in ["ENVIRONMENT", "MY_PATH", "GITHUB_REF", "COMMANDS", "CARGO_TERM_COLOR", "PYTHON"] {
            assert_eq!(assigned(name), None, "{name} is guarded");
        }
    }

    fn env_of(vars: &[(&str, &str)], extra: &[&str]) -> Vec<(String, String)> {
        let vars = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
        let extra: Vec<String> = extra.iter().map(|e| (*e).to_owned()).collect();
        env_from(vars, "/login/bin:/usr/bin", &extra)
    }

    fn get<'e>(env: &'e [(String, String)], name: &str) -> Option<&'e str> {
        let mut found = env.iter().filter(|(k, _)| k == name);
        let first = found.next().map(|(_, v)| v.as_str());
        assert!(found.next().is_none(), "{name} is set twice");
        first
    }

    #[test]
    fn the_environment_is_an_allow_list() {
        let env = env_of(
            &[
                ("HOME", "/home/u"),
                ("USER", "u"),
                ("LANG", "en_GB.UTF-8"),
                ("LC_TIME", "de_DE.UTF-8"),
                ("TZ", "Europe/Berlin"),
                ("PATH", "/tmp/evil:/usr/bin"),
                ("TERM", "dumb"),
                ("TMPDIR", "/run/user/1000"),
                ("OPENAI_API_KEY", "sk-1"),
                ("ANTHROPIC_API_KEY", "sk-2"),
                ("GITHUB_TOKEN", "ghp"),
                ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
                ("SSH_AUTH_SOCK", "/run/user/1000/ssh"),
                ("DISPLAY", ":0"),
                ("WAYLAND_DISPLAY", "wayland-0"),
                ("XDG_RUNTIME_DIR", "/run/user/1000"),
                ("XAUTHORITY", "/home/u/.Xauthority"),
                ("PERCH_DATA_DIR", "/home/u/.perch"),
                ("LD_PRELOAD", "/tmp/x.so"),
                ("RUST_LOG", "debug"),
                ("CARGO_HOME", "/home/u/.cargo"),
            ],
            &[],
        );
        assert_eq!(get(&env, "HOME"), Some("/home/u"));
        assert_eq!(get(&env, "LC_TIME"), Some("de_DE.UTF-8"));
        assert_eq!(get(&env, "TZ"), Some("Europe/Berlin"));
        assert_eq!(get(&env, "PATH"), Some("/login/bin:/usr/bin"));
        assert_eq!(get(&env, "TERM"), Some("xterm-256color"));
        assert_eq!(get(&env, "TMPDIR"), Some("/tmp"));
        assert_eq!(get(&env, "PAGER"), Some("cat"));
        assert_eq!(get(&env, "GIT_PAGER"), Some("cat"));
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["HOME", "LANG", "LC_TIME", "TZ", "USER", "PATH", "TERM", "TMPDIR", "PAGER", "GIT_PAGER"],
            "nothing else passes"
        );
    }

    #[test]
    fn settings_add_names_but_never_secrets_or_the_session() {
        let vars = [
            ("RUST_LOG", "debug"),
            ("CARGO_HOME", "/c"),
            ("CARGO_REGISTRY_TOKEN", "t"),
            ("OPENAI_API_KEY", "sk"),
            ("SSH_AUTH_SOCK", "/s"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:x"),
            ("PATH", "/evil"),
            ("DB_PASSWORD", "p"),
            ("PERCH_KEY_STORE", "file"),
        ];
        let env = env_of(
            &vars,
            &[
                "RUST_LOG",
                " CARGO_* ",
                "OPENAI_API_KEY",
                "SSH_AUTH_SOCK",
                "DBUS_SESSION_BUS_ADDRESS",
                "PATH",
                "DB_PASSWORD",
                "PERCH_KEY_STORE",
                "",
            ],
        );
        assert_eq!(get(&env, "RUST_LOG"), Some("debug"));
        assert_eq!(get(&env, "CARGO_HOME"), Some("/c"));
        assert_eq!(get(&env, "PATH"), Some("/login/bin:/usr/bin"));
        for never in [
            "CARGO_REGISTRY_TOKEN",
            "OPENAI_API_KEY",
            "SSH_AUTH_SOCK",
            "DBUS_SESSION_BUS_ADDRESS",
            "DB_PASSWORD",
        ] {
            assert_eq!(get(&env, never), None, "{never} was passed");
        }
        assert_eq!(get(&env, "PERCH_KEY_STORE"), None);
    }

    #[test]
    fn the_process_environment_is_read_without_secrets() {
        let env = command_env(OsStr::new("/p"), &[]);
        assert_eq!(get(&env, "PATH"), Some("/p"));
        assert!(env.iter().all(|(k, _)| !any(NEVER, k)));
    }
}
