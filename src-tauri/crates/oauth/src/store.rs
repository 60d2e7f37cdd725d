//! A sign-in's credentials in the key store (the OS keyring, or the encrypted file where there
//! is none), one entry per sign-in: never in the database, the config file, logs or the UI.
//!
//! rmcp's [`StoredCredentials`] hold the tokens and the client ID but not the client's secret,
//! so a confidential client (pre-registered, or one that dynamic registration gave a secret)
//! could not refresh after a restart; [`SignInRecord`] keeps the secret beside them, and the
//! resource the sign-in is for, so a server whose URL changed signs in again instead of sending
//! its tokens elsewhere.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};

use perch_foundation::keys::{Keys, Secret};

/// Everything kept for one sign-in.
#[derive(Clone, Serialize, Deserialize)]
pub struct SignInRecord {
    /// What was signed in to (an MCP server's URL): tokens are never sent anywhere else.
    pub resource: String,
    /// rmcp's record: client ID, tokens, granted scopes, when they came, the issuer.
    pub credentials: Option<StoredCredentials>,
    /// The client's secret, for a confidential client.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// The authorization server's RFC 7009 endpoint, remembered for signing out.
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
    /// The secret goes in the request body (`client_secret_post`) rather than HTTP Basic.
    #[serde(default)]
    pub secret_in_body: bool,
    /// The authorization server's metadata as discovered at sign-in, so connecting needs no
    /// discovery.
    #[serde(default)]
    pub metadata: Option<AuthorizationMetadata>,
    /// Who signed in, where the provider says (an email address), for "connected as".
    #[serde(default)]
    pub account: Option<String>,
    /// Why the sign-in stopped working (the refresh token was refused), for the status line.
    #[serde(default)]
    pub problem: Option<String>,
}

impl std::fmt::Debug for SignInRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInRecord")
            .field("resource", &self.resource)
            .field("credentials", &self.credentials)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "[REDACTED]"))
            .field("revocation_endpoint", &self.revocation_endpoint)
            .field("secret_in_body", &self.secret_in_body)
            .field("account", &self.account)
            .field("problem", &self.problem)
            .finish()
    }
}

impl SignInRecord {
    pub fn new(resource: &str) -> Self {
        Self {
            resource: resource.to_owned(),
            credentials: None,
            client_secret: None,
            revocation_endpoint: None,
            secret_in_body: false,
            metadata: None,
            account: None,
            problem: None,
        }
    }

    /// Whether it holds tokens (an access token, perhaps expired, and perhaps a refresh token).
    pub fn has_tokens(&self) -> bool {
        self.credentials.as_ref().is_some_and(|c| c.token_response.is_some())
    }
}

/// One sign-in's entry in the key store, read and written as a whole.
#[derive(Clone)]
pub struct SignInEntry {
    keys: Arc<Keys>,
    /// The key store's name for it, e.g. `oauth/mcp/linear`.
    name: String,
}

impl std::fmt::Debug for SignInEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInEntry").field("name", &self.name).finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the key store failed: {0}")]
    Keys(#[from] perch_foundation::keys::KeyError),
    #[error("the stored sign-in for {0} is damaged; sign in again")]
    Damaged(String),
    #[error("the key store could not be reached: {0}")]
    Task(String),
}

impl SignInEntry {
    pub fn new(keys: Arc<Keys>, name: impl Into<String>) -> Self {
        Self { keys, name: name.into() }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The record, if there is one. The key store blocks (D-Bus), so it runs off the async threads.
    pub async fn load(&self) -> Result<Option<SignInRecord>, StoreError> {
        let (keys, name) = (self.keys.clone(), self.name.clone());
        let found = tokio::task::spawn_blocking(move || keys.get(&name, None))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))??;
        let Some((secret, _)) = found else { return Ok(None) };
        serde_json::from_str(secret.expose()).map(Some).map_err(|_| StoreError::Damaged(self.name.clone()))
    }

    pub async fn save(&self, record: &SignInRecord) -> Result<(), StoreError> {
        let text = serde_json::to_string(record).map_err(|_| StoreError::Damaged(self.name.clone()))?;
        let (keys, name) = (self.keys.clone(), self.name.clone());
        tokio::task::spawn_blocking(move || keys.set(&name, &Secret::new(text)))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))??;
        Ok(())
    }

    pub async fn delete(&self) -> Result<(), StoreError> {
        let (keys, name) = (self.keys.clone(), self.name.clone());
        tokio::task::spawn_blocking(move || keys.delete(&name))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))??;
        Ok(())
    }

    /// Held across a token refresh and its save, in this process and across processes (the app
    /// and the command line), so one rotating refresh token is never spent twice.
    pub async fn refresh_guard(&self) -> std::io::Result<RefreshGuard> {
        let in_process = entry_lock(&self.name).lock_owned().await;
        let dir = self.keys.dir().to_path_buf();
        let across =
            tokio::task::spawn_blocking(move || file_lock(&dir)).await.map_err(std::io::Error::other)??;
        Ok(RefreshGuard { _in_process: in_process, _across: across })
    }

    /// Changes the record under this entry's refresh guard (never call it holding one).
    pub async fn update(
        &self,
        resource: &str,
        change: impl FnOnce(&mut SignInRecord),
    ) -> Result<SignInRecord, StoreError> {
        // The whole guard, file lock included: a refresh in another process must not save over
        // this change with the record it read before.
        let _guard = self.refresh_guard().await.map_err(|e| StoreError::Task(e.to_string()))?;
        let mut record = match self.load().await? {
            Some(r) if r.resource == resource => r,
            _ => SignInRecord::new(resource),
        };
        change(&mut record);
        self.save(&record).await?;
        Ok(record)
    }
}

/// See [`SignInEntry::refresh_guard`]; released when dropped.
pub struct RefreshGuard {
    _in_process: tokio::sync::OwnedMutexGuard<()>,
    #[cfg(unix)]
    _across: nix::fcntl::Flock<std::fs::File>,
    #[cfg(not(unix))]
    _across: (),
}

/// One lock per entry for this process, held across a token refresh and its save, so two
/// connections to one server never spend one rotating refresh token twice.
fn entry_lock(name: &str) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: LazyLock<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> =
        LazyLock::new(Default::default);
    LOCKS.lock().unwrap_or_else(|p| p.into_inner()).entry(name.to_owned()).or_default().clone()
}

/// The lock the app and `perch mcp` share (both may refresh one sign-in: a rotating refresh
/// token spent twice ends the sign-in at most servers). Held until dropped. Blocking.
#[cfg(unix)]
fn file_lock(dir: &std::path::Path) -> std::io::Result<nix::fcntl::Flock<std::fs::File>> {
    let file =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(LOCK_FILE))?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive).map_err(|(_, e)| e.into())
}

#[cfg(not(unix))]
fn file_lock(_dir: &std::path::Path) -> std::io::Result<()> {
    Ok(())
}

/// Beside the key store, in the data folder.
const LOCK_FILE: &str = "sign-ins.lock";

/// rmcp's credential store over one [`SignInEntry`], for one resource: what the authorization
/// manager reads and writes as it signs in and refreshes.
#[derive(Debug, Clone)]
pub struct KeyCredentialStore {
    entry: SignInEntry,
    resource: String,
}

impl KeyCredentialStore {
    pub fn new(entry: SignInEntry, resource: &str) -> Self {
        Self { entry, resource: resource.to_owned() }
    }

    async fn record(&self) -> Result<Option<SignInRecord>, AuthError> {
        let record = self.entry.load().await.map_err(store_error)?;
        Ok(record.filter(|r| r.resource == self.resource))
    }

    async fn write(&self, change: impl FnOnce(&mut SignInRecord)) -> Result<(), AuthError> {
        let mut record = self.record().await?.unwrap_or_else(|| SignInRecord::new(&self.resource));
        change(&mut record);
        self.entry.save(&record).await.map_err(store_error)
    }
}

fn store_error(e: StoreError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for KeyCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.record().await?.and_then(|r| r.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        // A new client ID means a new registration: a secret kept for the old one is not its.
        self.write(|r| {
            if r.credentials.as_ref().is_some_and(|c| c.client_id != credentials.client_id) {
                r.client_secret = None;
            }
            r.credentials = Some(credentials);
        })
        .await
    }

    /// Called when the authorization server moved (the issuer changed): the client was
    /// registered with the old one, so nothing of it is kept.
    async fn clear(&self) -> Result<(), AuthError> {
        self.entry.delete().await.map_err(store_error)
    }

    /// The refresh token was refused for good: the tokens go, the client stays, and the
    /// server shows "needs sign-in".
    async fn on_refresh_token_rejected(&self, rejected: &StoredCredentials) -> Result<(), AuthError> {
        self.write(|r| {
            if let Some(c) = r.credentials.as_mut()
                && c.client_id == rejected.client_id
            {
                c.token_response = None;
            }
        })
        .await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = self
            .entry
            .refresh_guard()
            .await
            .map_err(|e| AuthError::CredentialStoreError(format!("the sign-ins' lock file: {e}")))?;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(dir: &std::path::Path) -> Arc<Keys> {
        Arc::new(Keys::in_file(dir))
    }

    fn credentials(client: &str, token: &str) -> StoredCredentials {
        let response: rmcp::transport::auth::OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": token, "token_type": "Bearer", "expires_in": 3600, "refresh_token": "r-1"
        }))
        .unwrap();
        StoredCredentials::new(client.into(), Some(response), vec!["mcp".into()], Some(1))
    }

    #[tokio::test]
    async fn credentials_round_trip_keep_the_secret_and_stay_with_their_resource() {
        let dir = tempfile::tempdir().unwrap();
        let entry = SignInEntry::new(keys(dir.path()), "oauth/mcp/linear");
        entry.update("https://mcp.example/mcp", |r| r.client_secret = Some("cs-1".into())).await.unwrap();
        let store = KeyCredentialStore::new(entry.clone(), "https://mcp.example/mcp");
        store.save(credentials("client-1", "at-1")).await.unwrap();
        let record = entry.load().await.unwrap().unwrap();
        assert_eq!(record.client_secret.as_deref(), Some("cs-1"), "a save keeps the secret");
        assert!(record.has_tokens());
        let debug = format!("{record:?}");
        assert!(!debug.contains("at-1") && !debug.contains("cs-1") && !debug.contains("r-1"), "{debug}");

        // Another URL under the same name sees nothing.
        let moved = KeyCredentialStore::new(entry.clone(), "https://evil.example/mcp");
        assert!(moved.load().await.unwrap().is_none());

        // A new registration drops the old client's secret.
        store.save(credentials("client-2", "at-2")).await.unwrap();
        assert_eq!(entry.load().await.unwrap().unwrap().client_secret, None);

        // A refused refresh token takes the tokens, not the client.
        let current = store.load().await.unwrap().unwrap();
        store.on_refresh_token_rejected(&current).await.unwrap();
        let record = entry.load().await.unwrap().unwrap();
        assert!(!record.has_tokens());
        assert_eq!(record.credentials.unwrap().client_id, "client-2");

        store.clear().await.unwrap();
        assert!(entry.load().await.unwrap().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn the_refresh_lock_excludes_another_holder() {
        let dir = tempfile::tempdir().unwrap();
        let held = file_lock(dir.path()).unwrap();
        // Another open of the file (as another process has) cannot take it meanwhile.
        let other = std::fs::File::options().write(true).open(dir.path().join(LOCK_FILE)).unwrap();
        let refused = nix::fcntl::Flock::lock(other, nix::fcntl::FlockArg::LockExclusiveNonblock);
        assert!(refused.is_err());
        drop(held);
        let other = std::fs::File::options().write(true).open(dir.path().join(LOCK_FILE)).unwrap();
        assert!(nix::fcntl::Flock::lock(other, nix::fcntl::FlockArg::LockExclusiveNonblock).is_ok());
    }

    #[tokio::test]
    async fn a_damaged_entry_is_an_error_not_a_sign_in() {
        let dir = tempfile::tempdir().unwrap();
        let keys = keys(dir.path());
        keys.set("oauth/mcp/x", &Secret::new("not json")).unwrap();
        let err = SignInEntry::new(keys, "oauth/mcp/x").load().await.unwrap_err();
        assert!(matches!(err, StoreError::Damaged(_)), "{err}");
    }
}
