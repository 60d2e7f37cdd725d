//! Sign-ins as the manager sees them: a server that answers 401 waits in "needs sign-in" (not
//! retried: the same request would get the same answer), the user signs in, and the server
//! starts again with its tokens. One sign-in per server at a time; starting another cancels the
//! first (its tab is stale).

use std::sync::Arc;

use rmcp::transport::auth::AuthClient;
use tokio_util::sync::CancellationToken;

use super::super::config::{ServerConfig, Transport};
use super::super::handshake::NEEDS_SIGN_IN;
use super::super::sign_in::{self, OpenUrl, SignInError, SignInOptions, SignInView};
use super::super::{CallError, ServerStatus};
use super::{McpManager, Slot};

/// Why a sign-in was not started or did not complete.
#[derive(Debug, thiserror::Error)]
pub enum SignInFailure {
    #[error(transparent)]
    Server(#[from] CallError),
    #[error(transparent)]
    SignIn(#[from] SignInError),
    #[error("no key store is available to keep the sign-in")]
    NoKeyStore,
    #[error("could not forget the sign-in: {0}")]
    Store(#[from] perch_oauth::store::StoreError),
}

/// Whether the user gave this server a token of their own (then there is nothing to sign in to).
fn has_own_token(config: &ServerConfig) -> bool {
    matches!(&config.transport, Transport::Http { headers, .. }
        if headers.keys().any(|k| k.eq_ignore_ascii_case("authorization")))
}

impl McpManager {
    /// The stored sign-in of an HTTP server, as a client that sends its tokens; also refreshes
    /// what the dashboard shows of it.
    pub(super) async fn stored_sign_in(
        &self,
        slot: &Slot,
        config: &ServerConfig,
    ) -> Option<AuthClient<reqwest::Client>> {
        let keys = self.keys.get()?.clone();
        if !matches!(config.transport, Transport::Http { .. }) || has_own_token(config) {
            return None;
        }
        let record = match sign_in::stored(keys.clone(), config).await {
            Ok(record) => record,
            Err(e) => {
                tracing::warn!(server = %config.name, error = %e, "the stored sign-in could not be read");
                None
            }
        };
        slot.state().sign_in = record.as_ref().map(SignInView::of);
        let http = super::super::launch::http_client().ok()?;
        sign_in::authorized_client(keys, config, &record?, http).await
    }

    /// A start was refused for want of credentials.
    pub(super) fn needs_sign_in(
        &self,
        name: &str,
        slot: &Slot,
        config: &ServerConfig,
        challenge: Option<String>,
    ) {
        {
            let mut s = slot.state();
            if has_own_token(config) {
                s.status = Some(ServerStatus::Error);
                s.last_error = Some(
                    "it refused the token in its \"Authorization\" header: change it in the server's \
                     settings (Settings -> MCP), or remove it to sign in instead"
                        .into(),
                );
            } else {
                s.status = Some(ServerStatus::NeedsSignIn);
                s.last_error = Some(format!(
                    "{NEEDS_SIGN_IN}: use Sign in on its card, or run `perch mcp login {name}`"
                ));
                s.challenge = challenge;
            }
            s.failed_attempts += 1;
        }
        tracing::info!(server = name, "MCP server needs sign-in");
        self.changed(name);
    }

    /// Signs in to `name` (its page goes to `open`), then starts it with its tokens. `scope`
    /// asks for more than was granted (a step-up after a 403).
    pub async fn sign_in(
        self: &Arc<Self>,
        name: &str,
        client_metadata_url: Option<String>,
        scope: Option<String>,
        open: OpenUrl,
    ) -> Result<SignInView, SignInFailure> {
        let keys = self.keys.get().cloned().ok_or(SignInFailure::NoKeyStore)?;
        let slot = self.slot(name)?;
        let config = slot.config();
        let cancel = CancellationToken::new();
        let (challenge, granted) = {
            let mut s = slot.state();
            if let Some((_, previous)) = s.signing_in.take() {
                previous.cancel();
            }
            s.signing_in = Some((String::new(), cancel.clone()));
            (s.challenge.clone(), s.sign_in.as_ref().map(|v| v.scopes.clone()).unwrap_or_default())
        };
        let scope = scope.or_else(|| slot.state().wanted_scope.clone());
        // A step-up asks for what was granted and what is missing (the spec's scope union).
        let scopes = match scope {
            Some(more) => {
                let mut all = granted;
                all.extend(more.split_whitespace().map(str::to_owned));
                all.sort();
                all.dedup();
                all
            }
            None => Vec::new(),
        };
        let shown = {
            let (slot, manager, name) = (slot.clone(), Arc::downgrade(self), name.to_owned());
            Box::new(move |page: &str| {
                if let Some((shown, _)) = slot.state().signing_in.as_mut() {
                    *shown = page.to_owned();
                }
                if let Some(manager) = manager.upgrade() {
                    manager.changed(&name);
                }
                open(page);
            })
        };
        let options = SignInOptions { challenge, scopes, client_metadata_url, cancel: cancel.clone() };
        let outcome = sign_in::sign_in(keys, &config, options, shown).await;
        {
            let mut s = slot.state();
            // Unless a newer sign-in replaced it (and cancelled this one).
            if !cancel.is_cancelled() {
                s.signing_in = None;
            }
            if let Ok(view) = &outcome {
                s.sign_in = Some(view.clone());
                s.challenge = None;
                s.wanted_scope = None;
            }
        }
        self.changed(name);
        let view = outcome?;
        self.restart(name).await?;
        Ok(view)
    }

    /// Cancels a sign-in under way (the user closed the dialog).
    pub fn cancel_sign_in(&self, name: &str) -> Result<(), CallError> {
        let slot = self.slot(name)?;
        if let Some((_, cancel)) = slot.state().signing_in.take() {
            cancel.cancel();
        }
        self.changed(name);
        Ok(())
    }

    /// Signs out of `name`: revoked at the server where it can be, forgotten here, and the
    /// server restarted without it. `Ok(true)` when the server was told.
    pub async fn sign_out(self: &Arc<Self>, name: &str) -> Result<bool, SignInFailure> {
        let keys = self.keys.get().cloned().ok_or(SignInFailure::NoKeyStore)?;
        let slot = self.slot(name)?;
        let revoked = sign_in::sign_out(keys, name).await?;
        slot.state().sign_in = None;
        let running = slot.state().stop.is_some();
        if running {
            self.restart(name).await?;
        } else {
            self.changed(name);
        }
        Ok(revoked)
    }
}
