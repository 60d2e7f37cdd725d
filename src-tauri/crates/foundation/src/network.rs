//! What the desktop reports about the network connection: whether it is metered (a phone's
//! hotspot, a capped plan), so background downloads and checks can wait for another one.
//!
//! NetworkManager says so on the system bus (`Metered` on its main object, an `NMMetered`).
//! Where it does not run, or does not answer quickly, the answer is "not known", and callers
//! treat that as not metered: most desktops without NetworkManager are on wired networks.

use std::time::Duration;

use zbus::proxy;

/// How long a check may wait for NetworkManager before giving up on an answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

#[proxy(
    interface = "org.freedesktop.NetworkManager",
    default_service = "org.freedesktop.NetworkManager",
    default_path = "/org/freedesktop/NetworkManager"
)]
trait NetworkManager {
    #[zbus(property)]
    fn metered(&self) -> zbus::Result<u32>;
}

/// Whether the primary connection is metered, if the system says.
pub async fn metered() -> Option<bool> {
    let conn = tokio::time::timeout(ASK_TIMEOUT, zbus::Connection::system()).await.ok()?.ok()?;
    metered_on(&conn).await
}

/// [`metered`] asked on a given bus (tests serve their own NetworkManager on a private one).
pub async fn metered_on(conn: &zbus::Connection) -> Option<bool> {
    let ask = async {
        let proxy = NetworkManagerProxy::builder(conn)
            .cache_properties(proxy::CacheProperties::No)
            .build()
            .await
            .ok()?;
        proxy.metered().await.ok()
    };
    let value = tokio::time::timeout(ASK_TIMEOUT, ask).await.ok()??;
    from_nm_metered(value)
}

/// `NMMetered`: 0 unknown, 1 yes, 2 no, 3 guessed yes, 4 guessed no. A guess counts: NetworkManager
/// guesses "yes" for phone tethering, which is exactly the case to spare.
fn from_nm_metered(value: u32) -> Option<bool> {
    match value {
        1 | 3 => Some(true),
        2 | 4 => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_count_and_unknown_stays_unknown() {
        assert_eq!(from_nm_metered(1), Some(true));
        assert_eq!(from_nm_metered(3), Some(true));
        assert_eq!(from_nm_metered(2), Some(false));
        assert_eq!(from_nm_metered(4), Some(false));
        assert_eq!(from_nm_metered(0), None);
        assert_eq!(from_nm_metered(9), None);
    }
}
