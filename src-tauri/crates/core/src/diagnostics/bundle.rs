//! What goes in a bundle, file by file, each passed through the redactor; and the zip itself.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::DiagnosticsError;
use super::redact::{REMOVED, Redactor, is_secret_name};
use crate::probes::Probe;

/// How much of the logs a bundle carries, newest first: enough for the last days of a busy
/// app, small enough to attach to an issue.
pub const LOG_BUDGET_BYTES: u64 = 5 << 20;

/// How much of the crash reports a bundle carries, newest first: each is a few tens of KB (a
/// backtrace), and the folder keeps twenty at most.
pub const CRASH_BUDGET_BYTES: u64 = 1 << 20;

/// One file of the bundle, already redacted.
pub struct Entry {
    pub name: String,
    pub bytes: Vec<u8>,
}

impl Entry {
    pub fn text(name: impl Into<String>, text: String) -> Self {
        Self { name: name.into(), bytes: text.into_bytes() }
    }
}

/// Perch's version, the OS, the kernel and the sandbox, as a person reads them.
pub fn versions(report_sandbox: Option<&Probe>, data_dir: Option<&Path>, redactor: &mut Redactor) -> String {
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| os_release_name(&text))
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_owned())
        .unwrap_or_else(|_| "unknown".into());
    let sandbox = match report_sandbox {
        Some(p) => format!("{} ({})", if p.available { "yes" } else { "no" }, p.detail),
        None => "not probed".into(),
    };
    let data_dir = data_dir.map_or_else(|| "unusable (see doctor.json)".into(), |d| d.display().to_string());
    let text = format!(
        "Perch {}\nOS: {os}\nKernel: {kernel}\nArchitecture: {}\nSandbox: {sandbox}\nData folder: {data_dir}\nBundle made: {}\n",
        crate::VERSION,
        std::env::consts::ARCH,
        chrono::Local::now().to_rfc3339(),
    );
    redactor.text(&text)
}

fn os_release_name(text: &str) -> Option<String> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').to_owned())
    };
    field("PRETTY_NAME").or_else(|| field("NAME"))
}

/// The user's `mcp_servers.json` without secrets: every `env` and `headers` value removed (the
/// names stay, they say what the server expects), URLs without query strings or passwords,
/// secret-looking command-line arguments removed, then the usual redaction over the rest.
/// A file that is not JSON is redacted as text.
pub fn mcp_servers(text: &str, redactor: &mut Redactor) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(doc) => {
            let stripped = strip_config(&doc, None, redactor);
            let cleaned = redactor.json(&stripped);
            serde_json::to_string_pretty(&cleaned).unwrap_or_default()
        }
        Err(_) => text.lines().map(|l| redactor.text(l)).collect::<Vec<_>>().join("\n"),
    }
}

fn strip_config(value: &Value, field: Option<&str>, redactor: &mut Redactor) -> Value {
    let field_lower = field.map(str::to_ascii_lowercase);
    match (value, field_lower.as_deref()) {
        (Value::Object(map), Some("env" | "headers")) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    if !v.is_null() {
                        redactor.counts_mut().secret_fields += 1;
                    }
                    (k.clone(), Value::String(REMOVED.into()))
                })
                .collect(),
        ),
        (Value::Array(items), Some("args")) => Value::Array(strip_args(items, redactor)),
        (Value::String(s), _) if s.contains("://") => Value::String(strip_url(s, redactor)),
        (Value::Object(map), _) => Value::Object(
            map.iter().map(|(k, v)| (k.clone(), strip_config(v, Some(k), redactor))).collect::<Map<_, _>>(),
        ),
        (Value::Array(items), _) => {
            Value::Array(items.iter().map(|v| strip_config(v, None, redactor)).collect())
        }
        (other, _) => other.clone(),
    }
}

/// Where an argument holds a secret, as the byte offset its value starts at: after a
/// secret-named flag (`--api-key X`: all of `X`) or after the `=` of one (`--token=X`). Also
/// whether the argument is such a flag, whose value is the next argument.
pub(super) fn argument_secret(arg: &str, follows_secret_flag: bool) -> (Option<usize>, bool) {
    if follows_secret_flag && !arg.starts_with('-') {
        return (Some(0), false);
    }
    if !arg.starts_with('-') {
        return (None, false);
    }
    let flag = arg.trim_start_matches('-');
    match flag.split_once('=') {
        Some((name, _)) if is_secret_name(name) => (Some(arg.len() - flag.len() + name.len() + 1), false),
        Some(_) => (None, false),
        None => (None, is_secret_name(flag)),
    }
}

/// `--api-key X`, `--token=X`: the value goes, the flag stays.
fn strip_args(items: &[Value], redactor: &mut Redactor) -> Vec<Value> {
    let mut out = Vec::with_capacity(items.len());
    let mut follows_secret_flag = false;
    for item in items {
        let Value::String(arg) = item else {
            out.push(item.clone());
            continue;
        };
        let (secret, flag) = argument_secret(arg, std::mem::take(&mut follows_secret_flag));
        follows_secret_flag = flag;
        let stripped = match secret {
            Some(at) => {
                redactor.counts_mut().secret_fields += 1;
                format!("{}{REMOVED}", &arg[..at])
            }
            None if arg.contains("://") => strip_url(arg, redactor),
            None => arg.clone(),
        };
        out.push(Value::String(stripped));
    }
    out
}

/// A URL without its query string, fragment or user information (all may carry secrets).
fn strip_url(text: &str, redactor: &mut Redactor) -> String {
    let Ok(mut url) = url::Url::parse(text) else { return text.to_owned() };
    let counts = redactor.counts_mut();
    if url.query().is_some() || url.fragment().is_some() {
        counts.url_parameters += 1;
        url.set_query(None);
        url.set_fragment(None);
    }
    if !url.username().is_empty() || url.password().is_some() {
        counts.url_credentials += 1;
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
    url.to_string()
}

/// Log files under `logs_dir` (Perch's daily files, and `mcp/` for the servers' stderr),
/// newest first, until `budget` bytes; a file that does not fit whole gives its last lines.
/// Returns the entries and whether anything was left out.
pub fn logs(logs_dir: &Path, budget: u64, redactor: &mut Redactor) -> (Vec<Entry>, bool) {
    let mut files: Vec<(std::time::SystemTime, PathBuf, u64)> =
        [logs_dir.to_path_buf(), logs_dir.join("mcp")]
            .iter()
            .filter_map(|dir| std::fs::read_dir(dir).ok())
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().contains(".log"))
            .filter_map(|e| {
                let meta = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
                Some((meta.modified().unwrap_or(std::time::UNIX_EPOCH), e.path(), meta.len()))
            })
            .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));

    let mut left = budget;
    let mut cut = false;
    let mut entries = Vec::new();
    for (_, path, len) in files {
        if left == 0 {
            cut = true;
            break;
        }
        let Ok(relative) = path.strip_prefix(logs_dir) else { continue };
        let Some(text) = read_tail(&path, left.min(len)) else { continue };
        cut |= len > left;
        left = left.saturating_sub(len);
        let text = redactor.private_keys(&text);
        let redacted: Vec<String> = text.lines().map(|l| redactor.text(l)).collect();
        let name = format!("logs/{}", relative.to_string_lossy().replace('\\', "/"));
        entries.push(Entry::text(name, redacted.join("\n") + "\n"));
    }
    (entries, cut)
}

/// The crash reports in `crashes_dir` as `crashes/NAME`, newest first, whole, until `budget`
/// bytes. They hold no conversation content (the hook cuts quoted text from the message), but
/// go through the redactor like everything else: a path or a message may still name a secret.
/// Returns the entries and whether any was left out.
pub fn crashes(crashes_dir: &Path, budget: u64, redactor: &mut Redactor) -> (Vec<Entry>, bool) {
    let mut left = budget;
    let mut cut = false;
    let mut entries = Vec::new();
    for report in crate::crash::list(crashes_dir) {
        let (Some(name), Ok(text)) = (report.file.file_name(), crate::crash::read(&report.file)) else {
            continue;
        };
        let len = text.len() as u64;
        if len > left {
            cut = true;
            continue;
        }
        left -= len;
        let text = redactor.private_keys(&text);
        let redacted: Vec<String> = text.lines().map(|l| redactor.text(l)).collect();
        entries.push(Entry::text(format!("crashes/{}", name.to_string_lossy()), redacted.join("\n") + "\n"));
    }
    (entries, cut)
}

/// The last `bytes` of a file, from the first whole line on; not UTF-8 is shown lossily.
fn read_tail(path: &Path, bytes: u64) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(bytes);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut buf = Vec::with_capacity(usize::try_from(bytes).unwrap_or(0));
    file.take(bytes).read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    Some(match (start > 0, text.find('\n')) {
        (true, Some(first_break)) => text[first_break + 1..].to_owned(),
        _ => text,
    })
}

/// Writes the entries as a zip next to `out`, then moves it into place, so a failed bundle
/// never leaves half a file under the name the user gave. Owner-only: logs are personal.
pub fn write_zip(out: &Path, entries: &[Entry]) -> Result<u64, DiagnosticsError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source: std::io::Error| DiagnosticsError::Io { path, source }
    };
    let archive = |e: zip::result::ZipError| DiagnosticsError::Archive(e.to_string());
    let mut partial = out.as_os_str().to_owned();
    partial.push(".part");
    let partial = PathBuf::from(partial);

    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(&partial).map_err(io(&partial))?;
    let now = chrono::Local::now().naive_local();
    let stamp = {
        use chrono::{Datelike, Timelike};
        let part = |n: u32| u8::try_from(n).unwrap_or(0);
        zip::DateTime::from_date_and_time(
            u16::try_from(now.year()).unwrap_or(1980),
            part(now.month()),
            part(now.day()),
            part(now.hour()),
            part(now.minute()),
            part(now.second()),
        )
        .unwrap_or_default()
    };
    let file_options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(stamp)
        .unix_permissions(0o600);
    let written = (|| {
        let mut zip = zip::ZipWriter::new(file);
        for entry in entries {
            zip.start_file(entry.name.as_str(), file_options).map_err(archive)?;
            zip.write_all(&entry.bytes).map_err(io(&partial))?;
        }
        let file = zip.finish().map_err(archive)?;
        file.sync_all().map_err(io(&partial))
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, out).map_err(io(out))?;
    Ok(std::fs::metadata(out).map_err(io(out))?.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_config_keeps_its_shape_and_loses_its_secrets() {
        let config = r#"{"mcpServers": {
            "gh": {"command": "npx", "args": ["-y", "server-github", "--token", "plain-value-1", "--api-key=plain-value-2", "--verbose"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "plain-value-3", "DEBUG": "1"}},
            "remote": {"url": "https://ann:plain-value-4@mcp.example/mcp?key=plain-value-5#frag",
                       "headers": {"Authorization": "Bearer plain-value-6", "X-Team": "plain-value-7"},
                       "oauth": {"clientId": "perch", "clientSecret": "plain-value-8"}}
        }}"#;
        let mut redactor = Redactor::new(Vec::new(), None);
        let out = mcp_servers(config, &mut redactor);
        for n in 1..=8 {
            assert!(!out.contains(&format!("plain-value-{n}")), "secret {n} survived");
        }
        let doc: Value = serde_json::from_str(&out).unwrap();
        let gh = &doc["mcpServers"]["gh"];
        assert_eq!(gh["env"]["DEBUG"], REMOVED, "every env value goes, names stay");
        assert_eq!(gh["args"][3], REMOVED);
        assert_eq!(gh["args"][4], "--api-key=[removed]");
        assert_eq!(gh["args"][5], "--verbose");
        assert_eq!(doc["mcpServers"]["remote"]["url"], "https://mcp.example/mcp");
        assert_eq!(doc["mcpServers"]["remote"]["oauth"]["clientId"], "perch");
    }

    #[test]
    fn a_broken_config_is_still_redacted_as_text() {
        let mut redactor = Redactor::new(vec!["broken-config-secret".to_owned()], None);
        let out = mcp_servers("{ \"env\": {\"K\": \"broken-config-secret\" ", &mut redactor);
        assert!(!out.contains("broken-config-secret"));
    }

    #[test]
    fn logs_come_newest_first_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let logs_dir = dir.path();
        std::fs::create_dir_all(logs_dir.join("mcp")).unwrap();
        std::fs::write(logs_dir.join("perch.2026-01-01.log"), "old line\n".repeat(100)).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
        std::fs::File::options()
            .write(true)
            .open(logs_dir.join("perch.2026-01-01.log"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::fs::write(logs_dir.join("perch.2026-01-02.log"), "first\nnew line\n").unwrap();
        std::fs::write(logs_dir.join("mcp/demo.log"), "server says hi\n").unwrap();
        std::fs::write(logs_dir.join("notes.txt"), "not a log\n").unwrap();

        let mut redactor = Redactor::new(Vec::new(), None);
        let (entries, cut) = logs(logs_dir, 40, &mut redactor);
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert!(names.contains(&"logs/mcp/demo.log") && names.contains(&"logs/perch.2026-01-02.log"));
        assert_eq!(names.last(), Some(&"logs/perch.2026-01-01.log"), "the oldest comes last");
        assert!(cut, "the old file did not fit whole");
        let tail = String::from_utf8_lossy(&entries[2].bytes).into_owned();
        assert!(tail.lines().all(|l| l == "old line"), "cut at a line boundary: {tail:?}");
        assert!(!names.iter().any(|n| n.contains("notes")));
    }

    #[test]
    fn the_os_name_comes_from_os_release() {
        assert_eq!(
            os_release_name("NAME=Ubuntu\nPRETTY_NAME=\"Ubuntu 24.04 LTS\"\n").as_deref(),
            Some("Ubuntu 24.04 LTS")
        );
        assert_eq!(os_release_name("NAME=\"Arch Linux\"\n").as_deref(), Some("Arch Linux"));
    }
}
