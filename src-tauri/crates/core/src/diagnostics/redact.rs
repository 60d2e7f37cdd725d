//! Takes secrets out of text before it goes in a diagnostics bundle: the exact values Perch
//! holds (stored keys, sign-in tokens, secret-looking environment variables, what the MCP
//! config hands each server), then private keys and anything shaped like a key or token,
//! authorization headers, credentials in URLs and query strings, and fields named like secrets.
//! What was removed is counted by kind, never recorded.
//!
//! Redaction is best effort by nature; the exact values are what make it dependable for the
//! secrets Perch itself handled, and the shapes catch the ones it never stored.

use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde::Serialize;
use serde_json::Value;

/// What a removed value is replaced with.
pub const REMOVED: &str = "[removed]";

/// Values shorter than this are not redacted by exact match: a short stored value ("test", a
/// port) would otherwise blank out ordinary words all over the logs.
pub const MIN_KNOWN_LEN: usize = 8;

/// How many values of each kind were removed (no values, so it can be shown and kept).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RedactionCounts {
    /// Exact values from the key store, Perch's own environment and the MCP servers' config.
    pub known_secrets: usize,
    /// Keys and tokens recognised by their shape (`sk-…`, `ghp_…`, `ya29.…`, JWTs, PEM private
    /// keys…).
    pub token_shapes: usize,
    /// `Authorization: Bearer …` / `Basic …` and API-key headers.
    pub auth_headers: usize,
    /// `access_token=`, `code=`, `key=`… in query strings and form bodies.
    pub url_parameters: usize,
    /// `user:password@` in URLs.
    pub url_credentials: usize,
    /// Fields named like secrets (`"token": …`, `client_secret: …`), and environment and
    /// header values in the MCP servers' config.
    pub secret_fields: usize,
    /// The home folder, shown as `~` (only when asked).
    pub home_paths: usize,
}

impl RedactionCounts {
    pub fn total(&self) -> usize {
        self.known_secrets
            + self.token_shapes
            + self.auth_headers
            + self.url_parameters
            + self.url_credentials
            + self.secret_fields
            + self.home_paths
    }

    /// "3 stored or environment secrets, 1 authorization header", or "nothing".
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [
            (self.known_secrets, "stored or environment secret", "stored or environment secrets"),
            (self.token_shapes, "key or token by its shape", "keys or tokens by their shape"),
            (self.auth_headers, "authorization header", "authorization headers"),
            (self.url_parameters, "URL or form parameter", "URL or form parameters"),
            (self.url_credentials, "password in a URL", "passwords in URLs"),
            (self.secret_fields, "secret field", "secret fields"),
            (self.home_paths, "home folder path", "home folder paths"),
        ]
        .into_iter()
        .filter(|(n, ..)| *n > 0)
        .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect();
        if parts.is_empty() { "nothing".into() } else { parts.join(", ") }
    }

    fn add(&mut self, other: &RedactionCounts) {
        self.known_secrets += other.known_secrets;
        self.token_shapes += other.token_shapes;
        self.auth_headers += other.auth_headers;
        self.url_parameters += other.url_parameters;
        self.url_credentials += other.url_credentials;
        self.secret_fields += other.secret_fields;
        self.home_paths += other.home_paths;
    }
}

/// The patterns are constants, each exercised by the tests below.
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid redaction pattern")
}

/// Keys and tokens by the shapes their issuers give them.
static TOKEN_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"\bsk-[A-Za-z0-9_\-]{12,}",   // OpenAI, Anthropic (sk-ant-), DeepSeek…
        r"|\bAIza[0-9A-Za-z_\-]{20,}", // Google API keys
        r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}", // GitHub
        r"|\bxox[bpaors]-[A-Za-z0-9\-]{10,}", // Slack
        r"|\bya29\.[0-9A-Za-z_\-]{16,}", // Google access tokens
        r"|(?:^|\b)1//[0-9A-Za-z_\-]{16,}", // Google refresh tokens
        r"|\bGOCSPX-[0-9A-Za-z_\-]{8,}", // Google client secrets
        r"|\bhf_[A-Za-z0-9]{20,}",     // Hugging Face
        r"|\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", // Stripe secret and restricted keys
        r"|\bglpat-[A-Za-z0-9_\-]{20,}", // GitLab
        r"|\bnpm_[A-Za-z0-9]{30,}",    // npm
        r"|\bpypi-[A-Za-z0-9_\-]{40,}", // PyPI
        r"|\bgsk_[A-Za-z0-9]{20,}",    // Groq
        r"|\bxai-[A-Za-z0-9]{20,}",    // xAI
        r"|\bpplx-[A-Za-z0-9]{20,}",   // Perplexity
        r"|\bxapp-[0-9]-[A-Za-z0-9\-]{10,}", // Slack app-level tokens
        r"|\bAKIA[0-9A-Z]{16}\b",      // AWS access key IDs
        r"|\beyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*", // JWTs
    ))
});

/// A PEM private key (RSA, EC, OpenSSH, PKCS#8, encrypted or not) from its first line to its
/// last, its lines joined by real or escaped (`\n` in JSON) line ends; or, cut off before its
/// last line, its first line and the base64 lines after it. Certificates and public keys stay.
static PRIVATE_KEYS: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----",
        r"(?:[A-Za-z0-9+/=\s:,\-\\]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
        r"|[^\r\n]*(?:\r?\n[A-Za-z0-9+/=]+)*)",
    ))
});

/// `Bearer …` wherever it appears (headers, JSON, debug output). Long enough not to be prose.
static BEARER: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=\-]{12,}"));

/// The value of an authorization or API-key header, whatever its scheme (`Basic`, `Digest`…).
static AUTH_HEADERS: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r#"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key|x-auth-token|cookie|set-cookie)"#,
        r#"(["']?\s*[:=]\s*["']?)((?:bearer|basic|digest|token)\s+)?([^\s"',;]+)"#,
    ))
});

/// Secret parameters in query strings and form bodies (and `name=value` log fields).
static URL_PARAMETERS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)(^|[?&;\s"'(\[{,])(access_token|refresh_token|id_token|client_secret|code|code_verifier|api_key|apikey|key|token|password|secret|passphrase|private_key|access_key|signature|sig|sid|session|x-amz-signature|x-amz-credential|x-amz-security-token)=([^&\s"'#,;)\]}]+)"#,
    )
});

/// `scheme://user:password@` in URLs.
static URL_CREDENTIALS: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@:]+:[^/\s@]+@"));

/// A quoted value after a name that says it is a secret: `"refresh_token": "…"`, Rust's
/// `client_secret: "…"`, tracing's `token="…"`.
static SECRET_FIELDS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)(["']?)([A-Za-z0-9_\-]*(?:token|secret|password|passwd|key|authorization|credential|cookie|passphrase|signature|session|sid)[A-Za-z0-9_\-]*)(["']?\s*[:=]\s*)"((?:[^"\\]|\\.)*)""#,
    )
});

/// Whether a field name says its value is a secret: it names a token, secret, password,
/// passphrase, credential, cookie, signature or session, or ends in "key" (`private_key`,
/// `sshKey`). Names of places and kinds that merely mention them (`token_endpoint`,
/// `token_type`, `public_key`, `hotkey`) keep their values: they help diagnose.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let secretish = [
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "apikey",
        "api_key",
        "api-key",
        "authorization",
        "credential",
        "cookie",
        "signature",
    ]
    .iter()
    .any(|word| lower.contains(word))
        || lower.ends_with("key")
        || ["session", "session_id", "sessionid", "sid"].contains(&lower.as_str());
    let harmless =
        ["endpoint", "url", "uri", "_type", "supported", "_env", "expires", "has_", "public", "hotkey"]
            .iter()
            .any(|word| lower.contains(word));
    secretish && !harmless
}

/// Removes secrets from text. Built once per bundle with the exact values to look for.
#[derive(Debug, Default)]
pub struct Redactor {
    /// The exact values, longest first so a value containing another is removed whole. Plain
    /// string search: it cannot fail to build (a regex of many long values could) and let
    /// them through.
    known: Vec<String>,
    home: Option<Regex>,
    counts: RedactionCounts,
}

impl Redactor {
    /// `known`: exact secret values (shorter ones than [`MIN_KNOWN_LEN`] are ignored).
    /// `home`: the home folder to show as `~`, if the user asked.
    pub fn new(known: impl IntoIterator<Item = String>, home: Option<&str>) -> Self {
        let mut values: Vec<String> =
            known.into_iter().map(|v| v.trim().to_owned()).filter(|v| v.len() >= MIN_KNOWN_LEN).collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        // A home of "/" would turn every path into noise; and /home/ann must not turn
        // /home/anna into ~a, so the home ends where a name cannot go on.
        let home = home
            .map(|h| h.trim_end_matches(['/', '\\']))
            .filter(|h| h.len() > 1)
            .and_then(|h| Regex::new(&format!(r"{}([^A-Za-z0-9._\-]|$)", regex::escape(h))).ok());
        Self { known: values, home, counts: RedactionCounts::default() }
    }

    pub fn counts(&self) -> RedactionCounts {
        self.counts
    }

    /// `text` with each PEM private key replaced whole. [`Redactor::text`] does this too, but
    /// a key spans lines: give a file whole to this before its lines one by one to `text`, so
    /// the key's lines go with its first.
    pub fn private_keys(&mut self, text: &str) -> String {
        replace_counting(&PRIVATE_KEYS, text, &mut self.counts.token_shapes, |_| REMOVED.into())
    }

    /// `text` with every secret this redactor knows of, or recognises, replaced.
    pub fn text(&mut self, text: &str) -> String {
        let mut counts = RedactionCounts::default();
        let mut out = replace_counting(&PRIVATE_KEYS, text, &mut counts.token_shapes, |_| REMOVED.into());
        for value in &self.known {
            let found = out.matches(value.as_str()).count();
            if found > 0 {
                counts.known_secrets += found;
                out = out.replace(value.as_str(), REMOVED);
            }
        }
        out = replace_counting(&TOKEN_SHAPES, &out, &mut counts.token_shapes, |_| REMOVED.into());
        out = replace_counting(&BEARER, &out, &mut counts.auth_headers, |c| {
            format!("{}{}{REMOVED}", &c[1], &c[2])
        });
        out = replace_optional(&AUTH_HEADERS, &out, &mut counts.auth_headers, |c| {
            let scheme = c.get(3).map_or("", |m| m.as_str());
            (&c[4] != REMOVED).then(|| format!("{}{}{scheme}{REMOVED}", &c[1], &c[2]))
        });
        out = replace_optional(&URL_PARAMETERS, &out, &mut counts.url_parameters, |c| {
            let (name, value) = (&c[2], &c[3]);
            // `code=404`, `key=brave` and `session=3` are log fields, not secrets; codes, keys and
            // session ids are long.
            let short_word = ["code", "key", "sid", "session"].iter().any(|n| name.eq_ignore_ascii_case(n))
                && value.len() < MIN_KNOWN_LEN;
            (value != REMOVED && !short_word).then(|| format!("{}{name}={REMOVED}", &c[1]))
        });
        out = replace_counting(&URL_CREDENTIALS, &out, &mut counts.url_credentials, |c| {
            format!("{}{REMOVED}@", &c[1])
        });
        out = replace_optional(&SECRET_FIELDS, &out, &mut counts.secret_fields, |c| {
            let value = &c[4];
            // A value an earlier rule already cut (`"Bearer [removed]"`) keeps what is left.
            let keep = value.is_empty() || value.contains(REMOVED) || !is_secret_name(&c[2]);
            (!keep).then(|| format!("{}{}{}\"{REMOVED}\"", &c[1], &c[2], &c[3]))
        });
        if let Some(home) = &self.home {
            out = replace_counting(home, &out, &mut counts.home_paths, |c| format!("~{}", &c[1]));
        }
        self.counts.add(&counts);
        out
    }

    /// A JSON document with secret-named fields' string values removed, then every string
    /// (and key) redacted as text.
    pub fn json(&mut self, value: &Value) -> Value {
        match value {
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(name, v)| {
                        let v = match v {
                            Value::String(s) if is_secret_name(name) && !s.is_empty() => {
                                self.counts.secret_fields += 1;
                                Value::String(REMOVED.into())
                            }
                            other => self.json(other),
                        };
                        (self.text(name), v)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.json(v)).collect()),
            Value::String(s) => Value::String(self.text(s)),
            other => other.clone(),
        }
    }

    /// For removals the caller makes itself (a config value blanked for its place, not its look).
    pub fn counts_mut(&mut self) -> &mut RedactionCounts {
        &mut self.counts
    }
}

fn replace_counting(re: &Regex, text: &str, count: &mut usize, with: impl Fn(&Captures) -> String) -> String {
    replace_optional(re, text, count, |c| Some(with(c)))
}

/// Replaces the matches `with` has a replacement for; the others stay as they were.
fn replace_optional(
    re: &Regex,
    text: &str,
    count: &mut usize,
    with: impl Fn(&Captures) -> Option<String>,
) -> String {
    re.replace_all(text, |c: &Captures| match with(c) {
        Some(replacement) => {
            *count += 1;
            replacement
        }
        None => c[0].to_owned(),
    })
    .into_owned()
}

#[cfg(test)]
mod tests;
