//! Opening a file at a line in the user's editor, from a command template such as
//! `code -g {file}:{line}`. The template is split into words like a shell would, but no shell
//! ever runs: file names cannot inject commands.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// An editor command that exits with an error this soon is reported; one still running is
/// left to run (most editors hand the file to a running window and exit, some stay).
const WATCH: Duration = Duration::from_millis(1500);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditorError {
    #[error("no editor is configured and none was found; set one in Settings -> Reviews")]
    NoEditor,
    #[error("the editor command {0:?} is not valid: {1}")]
    BadTemplate(String, BadWords),
    #[error("the editor {program:?} could not be started: {reason}")]
    Spawn { program: String, reason: String },
    #[error("the editor exited with {status}: {stderr}")]
    Failed { status: String, stderr: String },
}

/// The default command: VS Code, then Zed, then `$VISUAL` / `$EDITOR`.
pub fn default_template(
    has: impl Fn(&str) -> bool,
    visual: Option<String>,
    editor: Option<String>,
) -> Option<String> {
    if has("code") {
        return Some("code -g {file}:{line}".into());
    }
    if has("zed") {
        return Some("zed {file}:{line}".into());
    }
    visual.or(editor).filter(|e| !e.trim().is_empty()).map(|e| format!("{e} +{{line}} {{file}}"))
}

/// The configured template, or the default for this machine when none is configured.
pub async fn template_or_default(configured: &str) -> Result<String, EditorError> {
    if !configured.trim().is_empty() {
        return Ok(configured.trim().to_owned());
    }
    let (code, zed) = (
        perch_foundation::shell_path::find("code").await.is_some(),
        perch_foundation::shell_path::find("zed").await.is_some(),
    );
    let env = |name: &str| std::env::var(name).ok();
    default_template(|p| (p == "code" && code) || (p == "zed" && zed), env("VISUAL"), env("EDITOR"))
        .ok_or(EditorError::NoEditor)
}

/// Why a template cannot be split into words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadWords {
    #[error("it ends with a backslash")]
    TrailingBackslash,
    #[error("a quote is not closed")]
    OpenQuote,
    #[error("it is empty")]
    Empty,
}

/// Splits a template into words: whitespace separates, single and double quotes group, a
/// backslash escapes the next character.
pub fn split_words(template: &str) -> Result<Vec<String>, BadWords> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                word.push(chars.next().ok_or(BadWords::TrailingBackslash)?);
                in_word = true;
            }
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(BadWords::OpenQuote);
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(BadWords::Empty);
    }
    Ok(words)
}

/// The argv for opening `file` at `line`.
pub fn command_line(template: &str, file: &Path, line: u32) -> Result<Vec<String>, EditorError> {
    let words = split_words(template).map_err(|e| EditorError::BadTemplate(template.into(), e))?;
    let file = file.to_string_lossy();
    Ok(words.into_iter().map(|w| w.replace("{file}", &file).replace("{line}", &line.to_string())).collect())
}

/// Starts the editor. Returns once it is running, or with its error if it fails quickly.
pub async fn open(
    template: &str,
    file: &Path,
    line: u32,
    envs: &[(String, String)],
) -> Result<(), EditorError> {
    let argv = command_line(template, file, line)?;
    let (program, args) = argv.split_first().ok_or(EditorError::NoEditor)?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| EditorError::Spawn { program: program.clone(), reason: e.to_string() })?;
    match tokio::time::timeout(WATCH, child.wait()).await {
        Ok(Ok(status)) if !status.success() => {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                use tokio::io::AsyncReadExt;
                let _ = pipe.read_to_string(&mut stderr).await;
            }
            Err(EditorError::Failed {
                status: status.to_string(),
                stderr: stderr.trim().chars().take(500).collect(),
            })
        }
        Ok(_) => Ok(()),
        Err(_) => {
            // Still running (a terminal editor, or an editor that stays): reap it when it ends.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell_without_running_one() {
        assert_eq!(split_words("code -g {file}:{line}").unwrap(), ["code", "-g", "{file}:{line}"]);
        assert_eq!(
            split_words(r#""/opt/My Editor/bin/ed" --line={line} '{file}' a\ b"#).unwrap(),
            ["/opt/My Editor/bin/ed", "--line={line}", "{file}", "a b"]
        );
        assert_eq!(split_words("x ''").unwrap(), ["x", ""]);
        assert_eq!(split_words("  "), Err(BadWords::Empty));
        assert_eq!(split_words("'open"), Err(BadWords::OpenQuote));
        assert_eq!(split_words("ed \\"), Err(BadWords::TrailingBackslash));
    }

    #[test]
    fn file_names_are_substituted_as_single_arguments() {
        let argv = command_line("code -g {file}:{line}", Path::new("/r/a b; rm -rf ~.rs"), 7).unwrap();
        assert_eq!(argv, ["code", "-g", "/r/a b; rm -rf ~.rs:7"]);
    }

    #[test]
    fn defaults_prefer_vscode_then_zed_then_the_environment() {
        assert_eq!(default_template(|p| p == "code", None, None).as_deref(), Some("code -g {file}:{line}"));
        assert_eq!(default_template(|p| p == "zed", None, None).as_deref(), Some("zed {file}:{line}"));
        assert_eq!(
            default_template(|_| false, None, Some("vim".into())).as_deref(),
            Some("vim +{line} {file}")
        );
        assert_eq!(
            default_template(|_| false, Some("nvim".into()), Some("vi".into())).as_deref(),
            Some("nvim +{line} {file}")
        );
        assert_eq!(default_template(|_| false, None, None), None);
    }

    #[tokio::test]
    async fn a_failing_editor_is_reported_with_its_message() {
        let err = open("sh -c 'echo nope >&2; exit 3' {file}", Path::new("/x"), 1, &[]).await.unwrap_err();
        assert!(matches!(&err, EditorError::Failed { stderr, .. } if stderr == "nope"), "{err:?}");
        let err = open("/no/such/editor {file}", Path::new("/x"), 1, &[]).await.unwrap_err();
        assert!(matches!(err, EditorError::Spawn { .. }));
    }

    #[tokio::test]
    async fn the_editor_gets_the_file_the_line_and_the_environment() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("args");
        let template = format!(
            "sh -c 'printf \"%s|%s|%s\" \"$1\" \"$2\" \"$PERCH_IPC_PATH\" > {}' editor {{file}} {{line}}",
            out.display()
        );
        let env = [("PERCH_IPC_PATH".to_owned(), "/run/perch.sock".to_owned())];
        open(&template, Path::new("/repo/src/main.rs"), 42, &env).await.unwrap();
        assert_eq!(std::fs::read_to_string(out).unwrap(), "/repo/src/main.rs|42|/run/perch.sock");
    }
}
