//! The metered-connection probe against a NetworkManager served on a real private D-Bus daemon.
#![allow(clippy::unwrap_used)]

use perch_test_support::portal;

use perch_foundation::network::metered_on;
use portal::PrivateBus;
use zbus::interface;

/// NetworkManager's main object, with only the property the probe reads.
struct FakeNetworkManager {
    metered: u32,
}

#[interface(name = "org.freedesktop.NetworkManager")]
impl FakeNetworkManager {
    #[zbus(property)]
    fn metered(&self) -> u32 {
        self.metered
    }
}

async fn serve(bus: &PrivateBus, metered: u32) -> zbus::Connection {
    zbus::connection::Builder::address(bus.address.as_str())
        .unwrap()
        .name("org.freedesktop.NetworkManager")
        .unwrap()
        .serve_at("/org/freedesktop/NetworkManager", FakeNetworkManager { metered })
        .unwrap()
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn reads_what_network_manager_reports() {
    let bus = PrivateBus::start();
    let client = bus.connect().await;
    // No NetworkManager on the bus: not known, promptly.
    assert_eq!(metered_on(&client).await, None);

    let server = serve(&bus, 1).await;
    assert_eq!(metered_on(&client).await, Some(true), "NM_METERED_YES");
    drop(server);

    // A guess of "no" (Ethernet, Wi-Fi without a hint) is not metered.
    let _server = serve(&bus, 4).await;
    assert_eq!(metered_on(&client).await, Some(false), "NM_METERED_GUESS_NO");
}
