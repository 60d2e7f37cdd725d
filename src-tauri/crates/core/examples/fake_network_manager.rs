//! A stand-in for NetworkManager, for the e2e suite (no NetworkManager runs there): serves the
//! one property Perch reads, `Metered` (an `NMMetered`), at NetworkManager's bus name and object
//! path on the D-Bus daemon at ADDRESS, which the app is then given as its system bus
//! (`DBUS_SYSTEM_BUS_ADDRESS`). Prints `ready` once it owns the name; runs until killed.
//!
//! Usage: fake_network_manager ADDRESS METERED

use zbus::interface;

struct NetworkManager {
    metered: u32,
}

#[interface(name = "org.freedesktop.NetworkManager")]
impl NetworkManager {
    #[zbus(property)]
    fn metered(&self) -> u32 {
        self.metered
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(address), Some(metered)) = (args.next(), args.next()) else {
        return Err("usage: fake_network_manager ADDRESS METERED".into());
    };
    let _bus = zbus::connection::Builder::address(address.as_str())?
        .name("org.freedesktop.NetworkManager")?
        .serve_at("/org/freedesktop/NetworkManager", NetworkManager { metered: metered.parse()? })?
        .build()
        .await?;
    println!("ready");
    std::future::pending::<()>().await;
    Ok(())
}
