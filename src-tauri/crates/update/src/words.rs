//! What a person reads: a failure with what to do next, the saved package's name, and the
//! command that installs it by hand.

use std::path::Path;

use crate::{ReleaseError, UpdateStep};

/// Where a person finds releases when Perch cannot install one itself.
pub const RELEASES_PAGE: &str = "https://github.com/perch-app/perch/releases";

/// The file name from the download's URL path, else `perch-VERSION.bin`; never a path.
pub fn package_name(url_path: &str, version: &str) -> String {
    let last = url_path.rsplit('/').next().unwrap_or_default().to_owned();
    // Percent-escapes are not decoded: a name that needs them is not kept.
    let safe = !last.is_empty()
        && !last.starts_with('.')
        && last.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'));
    if safe { last } else { format!("perch-{version}.bin") }
}

/// The command that installs a saved package, by its kind.
pub fn how_to_install(path: &Path) -> String {
    match path.extension().and_then(|e| e.to_str()) {
        Some("deb") => format!("Install it with: sudo apt install {}", path.display()),
        Some("rpm") => format!("Install it with: sudo dnf install {}", path.display()),
        Some("AppImage") => {
            format!("Make it executable (chmod +x {}) and start it in place of this copy.", path.display())
        }
        _ => format!("Get the package for your system from {RELEASES_PAGE}."),
    }
}

/// A failure in words a person can act on.
pub(crate) fn describe(error: &ReleaseError, step: UpdateStep) -> String {
    use ReleaseError as E;
    match error {
        E::BadSignature => {
            "The download does not carry Perch's signature, so it was discarded and nothing was \
                            installed. It may have been damaged or tampered with on the way; try again later."
                .into()
        }
        E::SignedVersionMismatch { signed, announced } => format!(
            "The update server announced version {announced}, but the download was signed as version {signed}. \
             It was discarded and nothing was installed."
        ),
        E::MissingSignedVersion => "The download's signature does not say which version it is, so it was \
                                    discarded and nothing was installed."
            .into(),
        E::Timeout => "The update server did not answer in time. Try again later.".into(),
        E::Network => match step {
            UpdateStep::Check => {
                "Could not reach the update server. Check your connection, then try again.".into()
            }
            _ => "The download stopped. Check your connection, then try again.".into(),
        },
        E::Unreadable => "The update server's answer could not be read. Try again later.".into(),
        E::NoPackageForSystem => {
            format!("The latest release has no package for this system. See {RELEASES_PAGE}.")
        }
        E::NotAPackage => "The download is not a package for this system, so it was not installed.".into(),
        E::PasswordRefused => {
            "The administrator password was not given, so the update was not installed.".into()
        }
        E::InstallerRefused => "The system's package installer refused the update.".into(),
        E::Other(other) => match step {
            UpdateStep::Check => format!("The update check failed: {other}."),
            UpdateStep::Download => format!("The download failed: {other}."),
            UpdateStep::Install => format!("The update could not be installed: {other}."),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_come_from_the_url_and_never_make_a_path() {
        assert_eq!(
            package_name("/releases/download/v0.2.0/Perch_0.2.0_amd64.deb", "0.2.0"),
            "Perch_0.2.0_amd64.deb"
        );
        assert_eq!(package_name("/x/Perch%200.2.deb", "0.2.0"), "perch-0.2.0.bin", "an escape is not kept");
        assert_eq!(package_name("/x/..", "0.2.0"), "perch-0.2.0.bin");
        assert_eq!(package_name("/x/%2e%2e%2fetc", "0.2.0"), "perch-0.2.0.bin");
        assert_eq!(package_name("/", "0.2.0"), "perch-0.2.0.bin");
    }

    #[test]
    fn the_way_to_install_by_hand_fits_the_package() {
        assert!(
            how_to_install(Path::new("/d/updates/Perch_0.2.0_amd64.deb"))
                .contains("sudo apt install /d/updates/")
        );
        assert!(how_to_install(Path::new("/d/p.rpm")).contains("sudo dnf install"));
        assert!(how_to_install(Path::new("/d/p.AppImage")).contains("chmod +x"));
        assert!(how_to_install(Path::new("/d/p.bin")).contains(RELEASES_PAGE));
    }

    #[test]
    fn a_network_failure_says_which_step_stopped() {
        assert!(describe(&ReleaseError::Network, UpdateStep::Check).contains("Could not reach"));
        assert!(describe(&ReleaseError::Network, UpdateStep::Download).contains("download stopped"));
        assert!(
            describe(&ReleaseError::Other("boom".into()), UpdateStep::Install)
                .contains("could not be installed: boom")
        );
        let mismatch =
            ReleaseError::SignedVersionMismatch { signed: "0.1.9".into(), announced: "0.2.0".into() };
        let said = describe(&mismatch, UpdateStep::Download);
        assert!(
            said.contains("announced version 0.2.0") && said.contains("signed as version 0.1.9"),
            "{said}"
        );
    }
}
