//! `perch mcp login|logout`, and how a sign-in reads in `perch mcp list` and `perch doctor`.

use perch_core::Engine;
use perch_core::mcp::sign_in::SignInView;

/// Signs in to `server`: the page opens in the browser (`$BROWSER` first), and its address is
/// printed when none can be opened, with `--no-browser`, or when nothing shows a browser here.
pub async fn login(
    engine: &Engine,
    server: &str,
    no_browser: bool,
    scope: Option<String>,
) -> anyhow::Result<()> {
    engine.mcp().server(server)?;
    let open = Box::new(move |page: &str| {
        let opened = !no_browser && perch_core::oauth::browser::open(page).is_ok();
        if opened {
            eprintln!("perch: finish signing in in your browser (waiting up to 5 minutes).");
            eprintln!("perch: if no page opened, open this address: {page}");
        } else {
            eprintln!("perch: open this address in a browser to sign in (waiting up to 5 minutes):");
            // The address alone on stdout, for a script to pick up.
            outln!("{page}");
        }
    });
    let signed = engine.sign_in_mcp(server, scope, open).await?;
    eprintln!("{}", line(server, Some(&signed)));
    Ok(())
}

/// Signs out of `server`: revoked at the server where it can be, forgotten here.
pub async fn logout(engine: &Engine, server: &str) -> anyhow::Result<()> {
    engine.mcp().server(server)?;
    let told = engine.mcp().sign_out(server).await?;
    if told {
        eprintln!("perch: signed out of {server} (the server revoked the sign-in).");
    } else {
        eprintln!("perch: signed out of {server} here (the server offers no way to revoke it there).");
    }
    Ok(())
}

/// A sign-in in one line: `ok linear  signed in with https://… (read, write), renews itself`.
pub fn line(server: &str, view: Option<&SignInView>) -> String {
    match view.filter(|v| v.signed_in) {
        Some(v) => {
            let issuer = v.issuer.as_deref().map(|i| format!(" with {i}")).unwrap_or_default();
            let scopes =
                if v.scopes.is_empty() { String::new() } else { format!(" ({})", v.scopes.join(" ")) };
            let expiry = match (v.expires_at, v.can_refresh) {
                (_, true) => ", renews itself".to_owned(),
                (Some(at), false) if at <= now_ms() => {
                    format!(", run out: run `perch mcp login {server}`")
                }
                (Some(at), false) => format!(", until {}", when(at)),
                (None, false) => String::new(),
            };
            format!("ok {server:<13} signed in{issuer}{scopes}{expiry}")
        }
        None => format!("-- {server:<13} not signed in (run `perch mcp login {server}` if it asks)"),
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}
