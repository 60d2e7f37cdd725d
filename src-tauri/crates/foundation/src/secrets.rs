//! Where secrets live: the credential stores (the terminal refuses to touch them and its sandbox
//! hides them; the knowledge index never reads them) and what a file holding a secret looks
//! like by its name or its first bytes (the knowledge index skips it).

use std::path::{Path, PathBuf};

/// Credential stores, relative to the home folder (`~/`) or absolute.
pub const CREDENTIAL_STORES: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.kube/config",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.password-store",
    "~/.pgpass",
    "~/.local/share/keyrings",
    "~/Library/Keychains",
    "~/.config/gcloud",
    "~/.config/gh/hosts.yml",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
];

/// `entry` of [`CREDENTIAL_STORES`] as a path.
pub fn expand(entry: &str, home: &Path) -> PathBuf {
    entry.strip_prefix("~/").map_or_else(|| PathBuf::from(entry), |rest| home.join(rest))
}

/// The credential store `path` is in, if any (as the list writes it).
pub fn credential_store(path: &Path, home: &Path) -> Option<&'static str> {
    CREDENTIAL_STORES.iter().copied().find(|c| path.starts_with(expand(c, home)))
}

/// File names that hold keys, tokens or passwords, whatever folder they are in.
const SECRET_NAMES: &[&str] = &[
    ".env",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    "credentials",
    "credentials.json",
    "client_secret.json",
    "service-account.json",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.toml",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
];
/// Extensions of key and keystore files.
const SECRET_EXTENSIONS: &[&str] =
    &["pem", "key", "p12", "pfx", "jks", "keystore", "kdbx", "gpg", "asc", "ppk", "ovpn", "tfstate"];

/// Whether a file's name says it holds a secret: `.env` and `.env.local`, `id_rsa` and
/// `id_rsa.pub`'s private half, `*.pem`, `*.key`, keystores, `credentials.json`.
pub fn secret_name(path: &Path) -> bool {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()) else {
        return false;
    };
    if SECRET_NAMES.contains(&name.as_str()) || name.starts_with(".env.") {
        return true;
    }
    let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    extension.is_some_and(|e| SECRET_EXTENSIONS.contains(&e.as_str()))
}

/// Whether a text holds a private key or a credential line: a PEM private key block, or an
/// AWS secret access key, whatever the file is called.
pub fn secret_content(text: &str) -> bool {
    const MARKERS: &[&str] = &[
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "-----BEGIN EC PRIVATE KEY-----",
        "-----BEGIN DSA PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        "aws_secret_access_key",
    ];
    MARKERS.iter().any(|m| text.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credential_stores_are_found_under_home_and_absolute() {
        let home = Path::new("/home/u");
        assert_eq!(credential_store(Path::new("/home/u/.ssh/id_ed25519"), home), Some("~/.ssh"));
        assert_eq!(credential_store(Path::new("/etc/sudoers.d/x"), home), Some("/etc/sudoers.d"));
        assert_eq!(credential_store(Path::new("/home/u/.sshx/notes"), home), None);
        assert_eq!(credential_store(Path::new("/home/u/src/app"), home), None);
    }

    #[test]
    fn secret_files_are_known_by_name() {
        for secret in [".env", ".env.production", "deploy/server.PEM", "id_rsa", "tls.key", "vault.kdbx"] {
            assert!(secret_name(Path::new(secret)), "{secret}");
        }
        for plain in ["README.md", "env.rs", "keys.rs", "id_rsa.pub", "src/key_value.py", "Makefile"] {
            assert!(!secret_name(Path::new(plain)), "{plain}");
        }
    }

    #[test]
    fn private_keys_are_known_by_content() {
        assert!(secret_content("x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blb\n"));
        assert!(secret_content("[default]\naws_secret_access_key = abc\n"));
        assert!(!secret_content("-----BEGIN PUBLIC KEY-----\n"));
    }
}
