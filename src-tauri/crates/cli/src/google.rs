//! `perch google connect|status|disconnect`: the Google connection from a terminal, the same
//! one Settings -> Connections shows.

use clap::Subcommand;
use perch_core::Engine;
use perch_core::google::{GoogleClient, GoogleStatus, Service};

#[derive(Subcommand)]
pub enum GoogleCommand {
    /// Connect Perch to your Google account (or allow more): Google's page opens in the browser.
    ///
    /// Perch uses your own OAuth client: in Google Cloud, create a project, enable the Gmail
    /// and Google Calendar APIs, set up the consent screen, then Credentials -> Create
    /// credentials -> OAuth client ID -> Desktop app, and download its client_secret.json.
    Connect {
        /// What Perch may do: mail-read, mail-send, mail-organize, calendar-read,
        /// calendar-write (comma-separated, or repeated). Services allowed before are kept.
        #[arg(long, value_delimiter = ',', required = true)]
        allow: Vec<Service>,
        /// The client_secret.json of your Desktop app client (once; it is kept in the key store).
        #[arg(long, value_name = "FILE", conflicts_with = "client_id")]
        client_file: Option<std::path::PathBuf>,
        /// Your client's ID, instead of the file.
        #[arg(long)]
        client_id: Option<String>,
        /// Your client's secret, with --client-id (read from PERCH_GOOGLE_CLIENT_SECRET if unset,
        /// so it stays out of the shell's history).
        #[arg(long, env = "PERCH_GOOGLE_CLIENT_SECRET", hide_env_values = true, requires = "client_id")]
        client_secret: Option<String>,
        /// Print Google's address instead of opening a browser.
        #[arg(long)]
        no_browser: bool,
    },
    /// Who is connected, with which services.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Revoke Perch's access at Google and forget it here.
    Disconnect {
        /// Forget your OAuth client too.
        #[arg(long)]
        forget_client: bool,
    },
}

pub async fn run(engine: Engine, command: GoogleCommand) -> anyhow::Result<()> {
    match command {
        GoogleCommand::Connect { allow, client_file, client_id, client_secret, no_browser } => {
            let strict = engine.google().strict();
            let client = match (client_file, client_id) {
                (Some(file), _) => {
                    let text = std::fs::read_to_string(&file)
                        .map_err(|e| anyhow::anyhow!("could not read {}: {e}", file.display()))?;
                    Some(GoogleClient::from_file(&text, strict)?)
                }
                (None, Some(id)) => Some(GoogleClient::new(&id, client_secret.as_deref(), strict)?),
                (None, None) => None,
            };
            if let Some(client) = client {
                engine.google().set_client(&client).await?;
            }
            let open = Box::new(move |page: &str| {
                let opened = !no_browser && perch_core::oauth::browser::open(page).is_ok();
                if opened {
                    eprintln!("perch: finish connecting in your browser (waiting up to 5 minutes).");
                    eprintln!("perch: if no page opened, open this address: {page}");
                } else {
                    eprintln!("perch: open this address in a browser to connect (waiting up to 5 minutes):");
                    // The address alone on stdout, for a script to pick up.
                    outln!("{page}");
                }
            });
            let status = engine.google_connect(&allow, open).await?;
            tell_the_app().await;
            eprintln!("{}", line(&status));
            if let Some(problem) = &status.problem {
                eprintln!("perch: {problem}");
            }
            Ok(())
        }
        GoogleCommand::Status { json } => {
            let status = engine.google().status().await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                outln!("{}", line(&status));
                for s in &status.services {
                    outln!("   {} {:<16} {}", if s.granted { "ok" } else { "--" }, s.label, s.description);
                }
                if let Some(problem) = &status.problem {
                    outln!("!! {problem}");
                }
            }
            Ok(())
        }
        GoogleCommand::Disconnect { forget_client } => {
            let told = engine.google_disconnect(forget_client).await?;
            tell_the_app().await;
            if told {
                eprintln!("perch: disconnected from Google (Google revoked Perch's access).");
            } else {
                eprintln!(
                    "perch: disconnected here; Google could not be told, so remove Perch at \
                     https://myaccount.google.com/permissions as well."
                );
            }
            Ok(())
        }
    }
}

/// A running app's Google server still holds the old access: the app is asked to start it
/// again. Quiet when no app runs (its next start of the server picks the change up).
async fn tell_the_app() {
    let wait = std::time::Duration::from_secs(2);
    let Ok((mut client, _)) = perch_ipc::Client::discover(wait).await else { return };
    let asked = client
        .request("connections_changed", serde_json::json!({}), std::time::Duration::from_secs(15))
        .await;
    if asked.is_ok_and(|r| r.success) {
        eprintln!("perch: the running app now uses the changed connection.");
    }
}

/// The connection in one line, as `perch doctor` shows it.
pub fn line(status: &GoogleStatus) -> String {
    let granted: Vec<&str> = status.services.iter().filter(|s| s.granted).map(|s| s.label.as_str()).collect();
    match (&status.client_id, status.connected) {
        (_, true) => format!(
            "ok google        connected as {} ({})",
            status.account.as_deref().unwrap_or("an unnamed account"),
            if granted.is_empty() { "nothing granted".to_owned() } else { granted.join(", ") }
        ),
        (Some(_), false) => {
            let why = status.problem.as_deref().unwrap_or("run `perch google connect --allow ...`");
            format!("-- google        not connected: {why}")
        }
        (None, false) => "-- google        not connected (run `perch google connect --help`)".to_owned(),
    }
}
