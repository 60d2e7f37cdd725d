//! Layer 3, the PATH guard: commands run with the PATH captured when Perch started, and a line
//! that tries to change how programs are found or loaded (PATH, the dynamic loader, shell
//! start-up hooks) is refused.

use std::sync::OnceLock;

/// Variables that decide which program or library runs, or what a shell runs first.
pub const GUARDED: &[&str] = &[
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "LD_DEBUG_OUTPUT",
    "LD_PROFILE",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "BASH_LOADABLES_PATH",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "GCONV_PATH",
    "HOSTALIASES",
    "NODE_OPTIONS",
    "PERL5OPT",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "ZDOTDIR",
];

/// Why the line is refused, when it changes a guarded variable.
pub fn check(assigned: &[String]) -> Option<String> {
    let hit = assigned.iter().find(|name| GUARDED.iter().any(|g| g.eq_ignore_ascii_case(name)))?;
    Some(format!("it changes {hit}, which decides which programs run"))
}

/// The PATH of Perch's environment when this was first called (at start-up).
pub fn startup_path() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned()))
}

/// The environment a command runs with: Perch's own, minus guarded variables, with the
/// start-up PATH and a terminal type.
pub fn command_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !GUARDED.iter().any(|g| g.eq_ignore_ascii_case(k)) && !k.starts_with("PERCH_"))
        .collect();
    env.push(("PATH".into(), startup_path().to_owned()));
    env.push(("TERM".into(), "xterm-256color".into()));
    env.push(("PAGER".into(), "cat".into()));
    env.push(("GIT_PAGER".into(), "cat".into()));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guarded_names_are_refused_whatever_their_case() {
        assert!(check(&["path".into()]).is_some());
        assert!(check(&["LD_PRELOAD".into()]).unwrap().contains("LD_PRELOAD"));
        assert_eq!(check(&["RUST_LOG".into()]), None);
        assert!(command_env().iter().any(|(k, v)| k == "PATH" && v == startup_path()));
        assert!(!command_env().iter().any(|(k, _)| k == "LD_PRELOAD"));
    }
}
