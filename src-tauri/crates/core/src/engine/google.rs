//! The engine's side of the Google connection (Settings -> Connections, `perch google`): one
//! connection under way at a time, with Google's page kept for the dialog, and the Google
//! server started again when what it may reach changes.

use std::sync::Arc;

use super::Engine;

impl Engine {
    /// The Google connection (Settings -> Connections, `perch google`).
    pub fn google(&self) -> &crate::google::Connection {
        &self.inner.google
    }

    /// The Google connection's state, with Google's page while a connection is under way.
    pub async fn google_status(
        &self,
    ) -> Result<crate::google::GoogleStatus, crate::oauth::store::StoreError> {
        let mut status = self.inner.google.status().await?;
        status.connecting_page = self.google_connecting().as_ref().map(|(_, page)| page.clone());
        Ok(status)
    }

    /// Connects to Google (or adds services to the connection); `open` shows Google's page.
    /// A connection already under way is cancelled. The Google server then starts again with
    /// its new access, so the tools it offers follow what was granted.
    pub async fn google_connect(
        &self,
        services: &[crate::google::Service],
        open: crate::oauth::OpenUrl,
    ) -> Result<crate::google::GoogleStatus, crate::google::ConnectError> {
        let cancel = tokio_util::sync::CancellationToken::new();
        if let Some((previous, _)) = self.google_connecting().replace((cancel.clone(), String::new())) {
            previous.cancel();
        }
        let shown = {
            let (inner, cancel) = (Arc::downgrade(&self.inner), cancel.clone());
            Box::new(move |page: &str| {
                if let Some(inner) = inner.upgrade()
                    && let Some((current, shown)) =
                        inner.google_connecting.lock().unwrap_or_else(|p| p.into_inner()).as_mut()
                    && !current.is_cancelled()
                    && !cancel.is_cancelled()
                {
                    *shown = page.to_owned();
                }
                open(page);
            })
        };
        let outcome = self.inner.google.connect(services, shown, &cancel).await;
        // Ours is still the one kept unless it was cancelled (a newer connection cancels it
        // under this lock, so checking under it is exact).
        {
            let mut connecting = self.google_connecting();
            if !cancel.is_cancelled() {
                *connecting = None;
            }
        }
        if outcome.is_ok() {
            self.google_changed().await;
        }
        outcome
    }

    /// Stops waiting for Google's page (the user closed the dialog).
    pub fn google_cancel_connect(&self) {
        if let Some((cancel, _)) = self.google_connecting().take() {
            cancel.cancel();
        }
    }

    /// Revokes the connection at Google and forgets it here (`forget_client`: the client too).
    /// True when Google was told.
    pub async fn google_disconnect(
        &self,
        forget_client: bool,
    ) -> Result<bool, crate::oauth::store::StoreError> {
        let google = &self.inner.google;
        let revoked = if forget_client { google.forget().await? } else { google.disconnect().await? };
        self.google_changed().await;
        Ok(revoked)
    }

    pub(super) fn google_connecting(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<(tokio_util::sync::CancellationToken, String)>> {
        self.inner.google_connecting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The Google server's tools follow the connection: the lists it left for its idle times
    /// are dropped, and where it runs (or rests) it starts again with its new access. Where it
    /// does not (the command line), the app's next start of it picks the change up.
    pub(super) async fn google_changed(&self) {
        let name = crate::google::SERVER_NAME;
        self.mcp().forget_saved_lists(name);
        let Ok(server) = self.mcp().server(name) else { return };
        let running =
            !matches!(server.status, crate::mcp::ServerStatus::Stopped | crate::mcp::ServerStatus::Error);
        if server.config.enabled
            && running
            && let Err(e) = self.mcp().restart(name).await
        {
            tracing::warn!(error = %e, "could not restart the Google server");
        }
    }
}
