//! The one list of environment variables that change what runs: which program, library or
//! package runs, or what a shell or tool runs first. The terminal refuses a command line that
//! sets one ([`GUARDED`]); a link that adds an MCP server may set none of those nor of
//! [`LINK_ALSO_REFUSED`] (where packages and certificates come from, the home folder and the
//! shell), since its confirmation masks the values.

/// Variables that decide which program or library runs, or what a shell or tool runs first.
/// `X*` is every name that starts with X, `*X` every name that ends with X, `*X*` every name
/// that contains X; case is ignored.
pub const GUARDED: &[&str] = &[
    "PATH",
    // The dynamic loader (glibc, musl, macOS).
    "LD_*",
    "DYLD_*",
    "GCONV_PATH",
    "HOSTALIASES",
    // Shells: start-up files, hooks, exported functions, word splitting.
    "BASH_ENV",
    "ENV",
    "BASH_FUNC_*",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "BASH_LOADABLES_PATH",
    "ZDOTDIR",
    // git reads dozens of these, several of which run programs (GIT_EXTERNAL_DIFF,
    // GIT_SSH_COMMAND, GIT_PAGER, GIT_ASKPASS, GIT_EXEC_PATH) or add configuration that does
    // (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_GLOBAL).
    "GIT_*",
    // Programs other programs start: any `*_COMMAND` (GIT_SSH_COMMAND, PROMPT_COMMAND,
    // FZF_DEFAULT_COMMAND), pagers (PAGER, MANPAGER, SYSTEMD_PAGER), editors (EDITOR,
    // VISUAL, SUDO_EDITOR), password prompts, less's input filters, cargo's compiler wrappers.
    "*_COMMAND",
    "*PAGER",
    "*EDITOR",
    "VISUAL",
    "*ASKPASS",
    "LESSOPEN",
    "LESSCLOSE",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    // Interpreters' start-up code and module paths.
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONINSPECT",
    "NODE_OPTIONS",
    "NODE_PATH",
    "RUBYOPT",
    "RUBYLIB",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "PERL5DB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
];

/// What a link that adds a server may not set beyond [`GUARDED`]: where packages come from
/// (registries, package managers' own settings), which certificates and proxies its requests
/// trust, the home folder and the shell. A command line shows these to the user as written;
/// a link's confirmation masks them.
pub const LINK_ALSO_REFUSED: &[&str] = &[
    "HOME",
    "SHELL",
    "NODE_EXTRA_CA_CERTS",
    "PYTHONUSERBASE",
    "CLASSPATH",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "NPM_CONFIG_*",
    "YARN_*",
    "PNPM_*",
    "BUN_*",
    "DENO_*",
    "UV_*",
    "PIP_*",
    "CARGO_*",
    "RUSTUP_*",
];

/// Whether `name` matches `pattern` (see [`GUARDED`] for the pattern form), ignoring case.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (pattern, name) = (pattern.to_ascii_uppercase(), name.to_ascii_uppercase());
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(_), Some(_)) if pattern.len() >= 2 => name.contains(&pattern[1..pattern.len() - 1]),
        (Some(suffix), None) => name.ends_with(suffix),
        (None, Some(prefix)) => name.starts_with(prefix),
        _ => name == pattern,
    }
}

/// Whether `name` is one of `patterns` (in [`GUARDED`]'s pattern form), ignoring case.
pub fn any(patterns: &[&str], name: &str) -> bool {
    patterns.iter().any(|p| matches(p, name))
}

/// Whether a link that adds a server may not set `name`.
pub fn link_refuses(name: &str) -> bool {
    any(GUARDED, name) || any(LINK_ALSO_REFUSED, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_prefixes_suffixes_and_parts() {
        assert!(matches("LC_*", "lc_all") && !matches("LC_*", "XLC_ALL"));
        assert!(matches("*_KEY", "OPENAI_API_KEY") && !matches("*_KEY", "KEYBOARD"));
        assert!(matches("*PASSWORD*", "db_password_file") && !matches("*PASSWORD*", "PASSWD"));
        assert!(matches("HOME", "home") && !matches("HOME", "HOMEBREW"));
    }

    #[test]
    fn a_link_refuses_what_the_terminal_guards_and_where_packages_come_from() {
        for name in ["PATH", "ld_preload", "GIT_SSH_COMMAND", "PAGER", "NODE_OPTIONS", "BASH_FUNC_x%%"] {
            assert!(link_refuses(name), "{name}");
        }
        for name in ["HOME", "NPM_CONFIG_REGISTRY", "UV_INDEX_URL", "https_proxy", "SSL_CERT_FILE"] {
            assert!(link_refuses(name) && !any(GUARDED, name), "{name}: links only");
        }
        for name in ["API_KEY", "DEBUG", "RUST_LOG", "TZ"] {
            assert!(!link_refuses(name), "{name}");
        }
    }
}
