//! Opening a sign-in page in the user's own browser, never in a webview: the page is the
//! authorization server's, and the user's browser is where their session and password manager
//! are (RFC 8252 section 8.12).
//!
//! `$BROWSER` wins when set, as `xdg-open` and most command-line tools honour it: a list of
//! commands separated by `:`, each run with `%s` replaced by the URL (or the URL appended), the
//! first that starts is used. Tests and unusual desktops substitute their own that way. The URL
//! is always one argument of its own, never text for a shell.

use std::process::{Command, Stdio};

/// Why no browser could be opened; the caller shows the URL instead.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error("only http and https pages are opened, not {0:?}")]
    NotWeb(String),
    #[error("no browser could be started: {0}")]
    NoBrowser(String),
}

/// Opens `url` in the browser and returns once it has started (not when the page loaded).
pub fn open(url: &str) -> Result<(), BrowserError> {
    let scheme = url.split_once(':').map(|(s, _)| s.to_ascii_lowercase()).unwrap_or_default();
    if scheme != "http" && scheme != "https" {
        return Err(BrowserError::NotWeb(scheme));
    }
    match std::env::var("BROWSER") {
        Ok(list) if !list.trim().is_empty() => open_with(&list, url),
        _ => open::that_detached(url).map_err(|e| BrowserError::NoBrowser(e.to_string())),
    }
}

/// Runs the first command of a `$BROWSER` list that starts. The child is waited for on a thread
/// of its own, so it never lingers as a zombie.
fn open_with(list: &str, url: &str) -> Result<(), BrowserError> {
    let mut failures = Vec::new();
    for command in list.split(':').map(str::trim).filter(|c| !c.is_empty()) {
        let argv = command_line(command, url);
        let Some((program, args)) = argv.split_first() else { continue };
        let started = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match started {
            Ok(mut child) => {
                let program = program.clone();
                std::thread::spawn(move || match child.wait() {
                    Ok(status) if !status.success() => {
                        tracing::warn!(%program, %status, "the browser command from $BROWSER failed");
                    }
                    _ => {}
                });
                return Ok(());
            }
            Err(e) => failures.push(format!("{program}: {e}")),
        }
    }
    Err(BrowserError::NoBrowser(if failures.is_empty() {
        "$BROWSER names no command".to_owned()
    } else {
        failures.join("; ")
    }))
}

/// One `$BROWSER` entry as program and arguments: words split on spaces, `%s` replaced by the
/// URL (`%%` is a percent sign), or the URL appended when no `%s` is there.
fn command_line(command: &str, url: &str) -> Vec<String> {
    let mut placed = false;
    let mut argv: Vec<String> = command
        .split_whitespace()
        .map(|word| {
            if word.contains("%s") {
                placed = true;
            }
            word.replace("%%", "\u{0}").replace("%s", url).replace('\u{0}', "%")
        })
        .collect();
    if !placed {
        argv.push(url.to_owned());
    }
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_entry_gets_the_url_as_one_argument() {
        let url = "https://auth.example/authorize?a=1&b=two words;rm -rf ~";
        assert_eq!(command_line("firefox", url), vec!["firefox", url]);
        assert_eq!(command_line("firefox --new-tab %s", url), vec!["firefox", "--new-tab", url]);
        assert_eq!(command_line("echo 100%% %s", url), vec!["echo", "100%", url]);
    }

    #[test]
    fn only_web_pages_are_opened() {
        assert!(matches!(open("file:///etc/passwd"), Err(BrowserError::NotWeb(s)) if s == "file"));
        assert!(matches!(open("javascript:alert(1)"), Err(BrowserError::NotWeb(_))));
    }

    #[test]
    fn the_first_command_that_starts_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("opened");
        let script = dir.path().join("browser.sh");
        std::fs::write(&script, format!("#!/bin/sh\nprintf '%s' \"$1\" > {}\n", out.display())).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let list = format!("/no/such/browser:{}", script.display());
        open_with(&list, "https://auth.example/authorize?state=x").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        // The file appears before its text does.
        while std::fs::read_to_string(&out).unwrap_or_default().is_empty()
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "https://auth.example/authorize?state=x");
        let err = open_with("/no/such/browser", "https://x.example/").unwrap_err().to_string();
        assert!(err.contains("/no/such/browser"), "{err}");
    }
}
