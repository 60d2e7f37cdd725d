//! Waiting in tests: poll for the condition instead of sleeping a fixed time, and a port that
//! refuses connections for as long as the test holds it.
#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::time::Duration;

/// Polls `check` every 20 ms until it gives `Some`, and returns that; panics naming `what`
/// after `within`. (Bounds are generous: they only decide when a broken test gives up.)
pub async fn until<T, F, Fut>(what: &str, within: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out after {within:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A loopback port bound but not listening: connections to it are refused, and no other
/// process can take it while the socket lives (unlike a port bound, read and released).
pub fn refusing_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}
