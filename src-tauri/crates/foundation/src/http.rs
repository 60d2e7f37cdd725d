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

/// What to do on a system with no trusted root certificates.
pub const NO_ROOT_CERTIFICATES: &str = "this system has no trusted root certificates, so no secure (HTTPS) \
     connection can be checked: install the ca-certificates package";

/// Whether the system's trusted root certificates load (found once per process). Without them
/// (a system without the ca-certificates package) reqwest refuses to build a client at all,
/// and a client that could not be built left even plain-HTTP services (Ollama, the local
/// MCP servers) out of reach, and panicked where a default client was taken instead.
pub fn system_has_root_certificates() -> bool {
    static LOADED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LOADED.get_or_init(|| {
        install_tls_provider();
        reqwest::Client::builder().build().is_ok()
    })
}

/// A reqwest client builder with the TLS provider installed and Perch's user agent. On a
/// system without root certificates it trusts none: plain HTTP works and every HTTPS
/// connection fails, where the failure is reported with [`NO_ROOT_CERTIFICATES`].
pub fn client_builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    let builder = reqwest::Client::builder().user_agent(concat!("Perch/", env!("CARGO_PKG_VERSION")));
    if system_has_root_certificates() { builder } else { builder.tls_certs_only([]) }
}

/// A client for downloads (models, voices): it gives up connecting after [`CONNECT_TIMEOUT`].
pub fn client() -> reqwest::Client {
    client_builder().connect_timeout(CONNECT_TIMEOUT).build().unwrap_or_default()
}
