//! `perch screenshot | show | toggle`: what the global shortcuts do, sent to the running app
//! over its local socket, for desktops where global shortcuts cannot work (most Wayland
//! compositors) and users bind these commands in their desktop's keyboard settings. Also
//! `perch update check | apply`: the app holds the updater (its public key, the package it
//! was installed from), so the command line asks it.

use std::time::Duration;

use anyhow::bail;
use perch_ipc::{Client, ScreenshotMode};
use serde_json::{Value, json};

/// A fullscreen capture answers when its chip exists; the overlay answers when it is shown.
const TIMEOUT: Duration = Duration::from_secs(10);

pub enum AppRequest {
    Screenshot { mode: Option<String> },
    Show,
    Toggle,
    ActOnSelection,
    DictateToggle,
    UpdateCheck,
    UpdateApply,
}

pub async fn run(request: AppRequest, json_output: bool) -> anyhow::Result<()> {
    // Checked here too, so a typo fails before Perch is even looked for.
    let (kind, payload) = match &request {
        AppRequest::Screenshot { mode } => {
            let mode = mode.as_deref().map(str::parse::<ScreenshotMode>).transpose()?;
            ("screenshot", json!({ "mode": mode.map(ScreenshotMode::as_str) }))
        }
        AppRequest::Show => ("show", json!({})),
        AppRequest::Toggle => ("toggle", json!({})),
        AppRequest::ActOnSelection => ("act_on_selection", json!({})),
        AppRequest::DictateToggle => ("dictate_toggle", json!({})),
        AppRequest::UpdateCheck => ("update_check", json!({})),
        AppRequest::UpdateApply => ("update_apply", json!({})),
    };
    let answer_within = match request {
        AppRequest::UpdateCheck => Duration::from_secs(90),
        // The download: the app shows its progress.
        AppRequest::UpdateApply => Duration::from_secs(31 * 60),
        _ => TIMEOUT,
    };
    let (mut client, _) = match Client::discover(TIMEOUT).await {
        Ok(found) => found,
        Err(e) if matches!(request, AppRequest::UpdateCheck | AppRequest::UpdateApply) => {
            bail!("{e}. Updates are checked and installed by the app: start Perch, then run this again.")
        }
        Err(e) => return Err(e.into()),
    };
    if matches!(request, AppRequest::UpdateApply) {
        eprintln!("perch: downloading and verifying the update (Perch shows the progress)...");
    }
    let response = client.request(kind, payload, answer_within).await?;
    if !response.success {
        bail!("{}", response.error.unwrap_or_else(|| "Perch refused the request".into()));
    }
    let data = response.data.unwrap_or(Value::Null);
    if json_output {
        outln!("{data}");
    } else if let Some(text) = data.get("message").and_then(Value::as_str) {
        outln!("{text}");
    }
    Ok(())
}
