//! API keys: in the OS keyring, or where there is none (headless Linux, for one) in an
//! encrypted file in the data dir with owner-only permissions, with a visible warning.
//!
//! Keys never appear in logs, errors or the UI: [`Secret`] has no Debug or Display that shows
//! its value, and the UI only ever gets [`KeyStatus`] with a masked form.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::Serialize;

const SERVICE: &str = "perch";
const KEY_FILE: &str = "keys.key";
const STORE_FILE: &str = "keys.enc";
/// The web search services' keys: the name each is stored under (`perch keys set brave`) and
/// the variable `perch-mcp-web` reads it from (`mcp::secrets` says who may see them).
pub const WEB_SEARCH_KEYS: [(&str, &str); 2] = [("brave", "BRAVE_API_KEY"), ("tavily", "TAVILY_API_KEY")];
/// Set to `file` to skip the OS keyring (tests, or keyrings that misbehave).
pub const BACKEND_ENV: &str = "PERCH_KEY_STORE";

/// A key in memory. Its value is only reachable through [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
    /// `sk-…abcd`: enough to recognise a key, not to use it.
    pub fn masked(&self) -> String {
        let chars: Vec<char> = self.0.chars().collect();
        if chars.len() <= 12 {
            return "•".repeat(8);
        }
        let head: String = chars[..3].iter().collect();
        let tail: String = chars[chars.len() - 4..].iter().collect();
        format!("{head}…{tail}")
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    #[error("the OS keyring failed: {0}")]
    Keyring(String),
    #[error("the key file {path} could not be used: {reason}")]
    File { path: PathBuf, reason: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// The provider's usual environment variable (it wins over stored keys).
    Env,
    Keyring,
    File,
}

/// What the UI and `perch keys status` may know about a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct KeyStatus {
    pub provider: String,
    pub source: Option<KeySource>,
    pub masked: Option<String>,
}

/// Where stored keys live on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct KeyBackend {
    pub source: KeySource,
    /// Set when keys are not in the OS keyring: say so in Settings and `perch doctor`.
    pub warning: Option<String>,
}

#[derive(Debug)]
pub struct Keys {
    dir: PathBuf,
    backend: OnceLock<KeySource>,
    /// The file store is read, changed and written whole, and its key is made on first use:
    /// one change at a time, or two writers lose each other's keys (or the key file itself).
    file: std::sync::Mutex<()>,
}

impl Keys {
    pub fn new(data_dir: &Path) -> Self {
        Self { dir: data_dir.to_path_buf(), backend: OnceLock::new(), file: std::sync::Mutex::new(()) }
    }

    /// The data folder the file store (and its lock files) live in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Which store is in use; decided once, by trying to write to the keyring. (Reading is no
    /// test: a locked keyring answers reads with "no entry".) Blocking.
    pub fn backend(&self) -> KeyBackend {
        let source = *self.backend.get_or_init(|| {
            if std::env::var(BACKEND_ENV).is_ok_and(|v| v == "file") || !keyring_works() {
                KeySource::File
            } else {
                KeySource::Keyring
            }
        });
        let warning = (source == KeySource::File).then(|| {
            format!(
                "No OS keyring is available, so API keys are kept encrypted in {} with a key file beside it. \
                 Anyone who can read your files can read them.",
                self.dir.join(STORE_FILE).display()
            )
        });
        KeyBackend { source, warning }
    }

    /// Keys in the encrypted file whatever the machine offers, as `PERCH_KEY_STORE=file` does
    /// for a whole process: for tests, which must never touch the user's keyring.
    pub fn in_file(data_dir: &Path) -> Self {
        let keys = Self::new(data_dir);
        let _ = keys.backend.set(KeySource::File);
        keys
    }

    /// The key for `provider`: the environment variable first, then the store. Blocking.
    pub fn get(&self, provider: &str, env: Option<&str>) -> Result<Option<(Secret, KeySource)>, KeyError> {
        if let Some(value) = env.and_then(|e| std::env::var(e).ok()).filter(|v| !v.trim().is_empty()) {
            return Ok(Some((Secret(value.trim().to_owned()), KeySource::Env)));
        }
        let source = self.backend().source;
        let stored = match source {
            KeySource::Keyring => keyring_get(provider)?,
            _ => {
                let _one_at_a_time = self.file.lock().unwrap_or_else(|p| p.into_inner());
                self.read_file()?.remove(provider).map(Secret)
            }
        };
        Ok(stored.map(|s| (s, source)))
    }

    pub fn set(&self, provider: &str, secret: &Secret) -> Result<(), KeyError> {
        match self.backend().source {
            KeySource::Keyring => entry(provider)?.set_password(secret.expose()).map_err(keyring_error),
            _ => {
                let _one_at_a_time = self.file.lock().unwrap_or_else(|p| p.into_inner());
                let mut all = self.read_file()?;
                all.insert(provider.to_owned(), secret.expose().to_owned());
                self.write_file(&all)
            }
        }
    }

    pub fn delete(&self, provider: &str) -> Result<(), KeyError> {
        match self.backend().source {
            KeySource::Keyring => match entry(provider)?.delete_credential() {
                Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(keyring_error(e)),
            },
            _ => {
                let _one_at_a_time = self.file.lock().unwrap_or_else(|p| p.into_inner());
                let mut all = self.read_file()?;
                if all.remove(provider).is_some() {
                    self.write_file(&all)?;
                }
                Ok(())
            }
        }
    }

    pub fn status(&self, provider: &str, env: Option<&str>) -> Result<KeyStatus, KeyError> {
        let found = self.get(provider, env)?;
        Ok(KeyStatus {
            provider: provider.to_owned(),
            source: found.as_ref().map(|(_, s)| *s),
            masked: found.map(|(k, _)| k.masked()),
        })
    }

    fn file_error(&self, file: &str, reason: impl ToString) -> KeyError {
        KeyError::File { path: self.dir.join(file), reason: reason.to_string() }
    }

    /// The file key, created on first use with owner-only permissions.
    fn cipher(&self) -> Result<XChaCha20Poly1305, KeyError> {
        let path = self.dir.join(KEY_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => {
                ensure_private(&path).map_err(|e| self.file_error(KEY_FILE, e))?;
                bytes
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = XChaCha20Poly1305::generate_key(&mut OsRng);
                write_private(&path, key.as_slice()).map_err(|e| self.file_error(KEY_FILE, e))?;
                key.to_vec()
            }
            Err(e) => return Err(self.file_error(KEY_FILE, e)),
        };
        XChaCha20Poly1305::new_from_slice(&bytes)
            .map_err(|_| self.file_error(KEY_FILE, "it is not a 32-byte key"))
    }

    fn read_file(&self) -> Result<BTreeMap<String, String>, KeyError> {
        let path = self.dir.join(STORE_FILE);
        let sealed = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(self.file_error(STORE_FILE, e)),
        };
        if sealed.len() < 24 {
            return Err(self.file_error(STORE_FILE, "it is too short to hold keys"));
        }
        let (nonce, ciphertext) = sealed.split_at(24);
        let plain = self.cipher()?.decrypt(XNonce::from_slice(nonce), ciphertext).map_err(|_| {
            self.file_error(STORE_FILE, "it cannot be decrypted with keys.key (damaged, or from elsewhere)")
        })?;
        serde_json::from_slice(&plain).map_err(|e| self.file_error(STORE_FILE, e))
    }

    fn write_file(&self, all: &BTreeMap<String, String>) -> Result<(), KeyError> {
        let cipher = self.cipher()?;
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let plain = serde_json::to_vec(all).map_err(|e| self.file_error(STORE_FILE, e))?;
        let ciphertext = cipher
            .encrypt(&nonce, plain.as_slice())
            .map_err(|_| self.file_error(STORE_FILE, "encryption failed"))?;
        let mut sealed = nonce.to_vec();
        sealed.extend_from_slice(&ciphertext);
        write_private(&self.dir.join(STORE_FILE), &sealed).map_err(|e| self.file_error(STORE_FILE, e))
    }
}

fn entry(provider: &str) -> Result<keyring::Entry, KeyError> {
    keyring::Entry::new(SERVICE, provider).map_err(keyring_error)
}

fn keyring_error(e: keyring::Error) -> KeyError {
    KeyError::Keyring(e.to_string())
}

fn keyring_get(provider: &str) -> Result<Option<Secret>, KeyError> {
    match entry(provider)?.get_password() {
        Ok(value) => Ok(Some(Secret(value))),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(keyring_error(e)),
    }
}

/// Whether the OS keyring accepts, returns and deletes an entry. Blocking.
pub fn keyring_works() -> bool {
    let Ok(probe) = keyring::Entry::new(SERVICE, "perch-keyring-probe") else { return false };
    let works = probe.set_password("probe").is_ok() && probe.get_password().is_ok_and(|v| v == "probe");
    let _ = probe.delete_credential();
    works
}

/// Writes `bytes` to `path` atomically, readable and writable by the owner only.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        use std::io::Write;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    ensure_private(path)
}

/// Puts owner-only permissions back if someone widened them.
fn ensure_private(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(path = %path.display(), "key file was readable by others; made it owner-only");
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn file_keys(dir: &Path) -> Keys {
        let keys = Keys::new(dir);
        let _ = keys.backend.set(KeySource::File);
        keys
    }

    #[test]
    fn masking_shows_only_the_ends() {
        assert_eq!(Secret::new("sk-proj-abcdefghijklmnop1234").masked(), "sk-…1234");
        assert_eq!(Secret::new("short").masked(), "••••••••");
        assert_eq!(format!("{:?}", Secret::new("sk-secret-value")), "Secret(<redacted>)");
    }

    #[test]
    fn the_file_store_round_trips_and_is_private_and_encrypted() {
        let tmp = tempfile::tempdir().unwrap();
        let keys = file_keys(tmp.path());
        let secret = Secret::new("sk-ant-very-secret-key-0001");
        keys.set("anthropic", &secret).unwrap();
        keys.set("openai", &Secret::new("sk-openai-another-key-0002")).unwrap();
        assert_eq!(keys.get("anthropic", None).unwrap(), Some((secret.clone(), KeySource::File)));

        let sealed = std::fs::read(tmp.path().join(STORE_FILE)).unwrap();
        let haystack = String::from_utf8_lossy(&sealed);
        assert!(
            !haystack.contains("very-secret") && !haystack.contains("anthropic"),
            "never written in clear"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for f in [STORE_FILE, KEY_FILE] {
                let mode = std::fs::metadata(tmp.path().join(f)).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{f}");
            }
        }
        keys.delete("anthropic").unwrap();
        assert_eq!(keys.get("anthropic", None).unwrap(), None);
        assert!(keys.get("openai", None).unwrap().is_some());
        // A fresh handle (a restart) reads the same store.
        assert!(file_keys(tmp.path()).get("openai", None).unwrap().is_some());
    }

    #[test]
    fn keys_written_at_once_from_many_threads_are_all_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let keys = Arc::new(file_keys(tmp.path()));
        let writers: Vec<_> = (0..16)
            .map(|i| {
                let keys = keys.clone();
                std::thread::spawn(move || keys.set(&format!("k{i}"), &Secret::new(format!("value-{i}"))))
            })
            .collect();
        for w in writers {
            w.join().unwrap().unwrap();
        }
        for i in 0..16 {
            assert_eq!(keys.get(&format!("k{i}"), None).unwrap().unwrap().0.expose(), format!("value-{i}"));
        }
    }

    #[test]
    fn a_tampered_store_is_an_error_not_garbage() {
        let tmp = tempfile::tempdir().unwrap();
        let keys = file_keys(tmp.path());
        keys.set("openai", &Secret::new("sk-openai-another-key-0002")).unwrap();
        let path = tmp.path().join(STORE_FILE);
        let mut sealed = std::fs::read(&path).unwrap();
        let last = sealed.len() - 1;
        sealed[last] ^= 0xff;
        std::fs::write(&path, sealed).unwrap();
        let err = keys.get("openai", None).unwrap_err().to_string();
        assert!(err.contains("cannot be decrypted"), "{err}");
        assert!(!err.contains("sk-openai"));
    }

    #[cfg(unix)]
    #[test]
    fn widened_permissions_are_put_back() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let keys = file_keys(tmp.path());
        keys.set("openai", &Secret::new("sk-openai-another-key-0002")).unwrap();
        let key_file = tmp.path().join(KEY_FILE);
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        keys.get("openai", None).unwrap();
        assert_eq!(std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn the_environment_wins_over_stored_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let keys = file_keys(tmp.path());
        keys.set("openai", &Secret::new("sk-stored-key-0000000001")).unwrap();
        // PATH is always set; it stands in for OPENAI_API_KEY without touching the environment.
        let (secret, source) = keys.get("openai", Some("PATH")).unwrap().unwrap();
        assert_eq!(source, KeySource::Env);
        assert_eq!(secret.expose(), std::env::var("PATH").unwrap().trim());
        let status = keys.status("gemini", None).unwrap();
        assert_eq!((status.source, status.masked), (None, None));
    }
}
