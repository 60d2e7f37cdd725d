//! A test hook for the Content Security Policy, in debug builds only.
//!
//! `PERCH_TEST_IMG_SRC` adds sources to the policy's `img-src`, so the end-to-end suite can
//! show that a remote image in markdown is stopped by the renderer itself and not only by the
//! policy (a loopback server sees no request even when the policy would allow it). Release
//! builds ignore the variable: their policy is the one in tauri.conf.json.

use tauri::utils::config::Csp;

pub fn apply_test_hook<R: tauri::Runtime>(context: &mut tauri::Context<R>) {
    if !cfg!(debug_assertions) {
        return;
    }
    let Some(extra) = std::env::var("PERCH_TEST_IMG_SRC").ok().filter(|v| !v.trim().is_empty()) else {
        return;
    };
    if let Some(Csp::DirectiveMap(map)) = &mut context.config_mut().app.security.csp {
        map.entry("img-src".into())
            .or_default()
            .extend(extra.split_whitespace().map(str::to_owned).collect());
        tracing::warn!(%extra, "test hook: the CSP's img-src is loosened");
    }
}
