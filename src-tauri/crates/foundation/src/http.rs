//! The one way Perch starts an HTTP client (the engine, its capabilities, tests and benches).

use std::time::Duration;

/// How long a connection may take to open, for model services and downloads alike: a local
/// service that is up answers at once, and a remote one that takes longer is not reachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Makes rustls' ring provider the process default, once. reqwest is built without a bundled
/// provider (no aws-lc C build), so building a client before this panics; hence every client
/// comes from [`client_builder`], which calls it.
pub fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Fails only when another provider is already installed, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A reqwest client builder with the TLS provider installed and Perch's user agent.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    reqwest::Client::builder().user_agent(concat!("Perch/", env!("CARGO_PKG_VERSION")))
}

/// A client for downloads (models, voices): it gives up connecting after [`CONNECT_TIMEOUT`].
pub fn client() -> reqwest::Client {
    client_builder().connect_timeout(CONNECT_TIMEOUT).build().unwrap_or_default()
}
