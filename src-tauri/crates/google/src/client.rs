//! The user's own Google OAuth client. Perch cannot ship one verified client for every user, so
//! the user creates a "Desktop app" client in Google Cloud and gives Perch its ID and secret,
//! typed in or as the `client_secret.json` Google offers to download. A client of another type
//! ("Web application") cannot come back to a loopback port on any port, so it is refused here
//! with the reason, rather than at Google's error page.

use serde::Deserialize;

use perch_oauth::flow::ClientIdentity;

/// Google's client IDs end so.
const ID_SUFFIX: &str = ".apps.googleusercontent.com";
/// The most a pasted `client_secret.json` may hold (Google's is under 1 KB).
const MAX_FILE: usize = 64 * 1024;

/// A client as the user gave it.
#[derive(Clone, PartialEq, Eq)]
pub struct GoogleClient {
    pub id: String,
    pub secret: Option<String>,
}

impl std::fmt::Debug for GoogleClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleClient")
            .field("id", &self.id)
            .field("secret", &self.secret.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    #[error("the client ID is empty: copy it from Google Cloud -> APIs & Services -> Credentials")]
    Empty,
    #[error(
        "{0:?} is not a Google OAuth client ID (they end in .apps.googleusercontent.com): copy the \
         \"Client ID\" of your Desktop app client from Google Cloud -> APIs & Services -> Credentials"
    )]
    NotAnId(String),
    #[error("the client ID and secret must not contain spaces or line breaks")]
    Spaces,
    #[error(
        "this is a \"{0}\" client; Perch needs a \"Desktop app\" client (Create credentials -> OAuth \
         client ID -> Application type: Desktop app), whose sign-in can come back to this computer"
    )]
    WrongType(String),
    #[error("this is not the client_secret.json Google gives for a client ({0})")]
    NotAClientFile(String),
}

#[derive(Deserialize)]
struct ClientFile {
    installed: Option<ClientSection>,
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
struct ClientSection {
    client_id: String,
    client_secret: Option<String>,
}

impl GoogleClient {
    /// A client from its ID and (optional) secret, as typed.
    pub fn new(id: &str, secret: Option<&str>, strict: bool) -> Result<Self, ClientError> {
        let id = id.trim();
        if id.is_empty() {
            return Err(ClientError::Empty);
        }
        let secret = secret.map(str::trim).filter(|s| !s.is_empty());
        if id.chars().any(char::is_whitespace) || secret.is_some_and(|s| s.chars().any(char::is_whitespace)) {
            return Err(ClientError::Spaces);
        }
        // A fake in tests has its own IDs; Google's always end so.
        if strict && !id.ends_with(ID_SUFFIX) {
            return Err(ClientError::NotAnId(id.chars().take(80).collect()));
        }
        Ok(Self { id: id.to_owned(), secret: secret.map(str::to_owned) })
    }

    /// A client from the text of the `client_secret.json` Google gives for it.
    pub fn from_file(text: &str, strict: bool) -> Result<Self, ClientError> {
        if text.len() > MAX_FILE {
            return Err(ClientError::NotAClientFile("it is far larger than one".into()));
        }
        let file: ClientFile =
            serde_json::from_str(text).map_err(|e| ClientError::NotAClientFile(format!("not JSON: {e}")))?;
        match file.installed {
            Some(section) => Self::new(&section.client_id, section.client_secret.as_deref(), strict),
            None => match file.other.keys().next() {
                Some(kind) if kind == "web" => Err(ClientError::WrongType("Web application".into())),
                Some(kind) => Err(ClientError::WrongType(kind.clone())),
                None => Err(ClientError::NotAClientFile("it has no \"installed\" client".into())),
            },
        }
    }

    pub fn identity(&self) -> ClientIdentity {
        ClientIdentity { id: self.id.clone(), secret: self.secret.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "123-abc.apps.googleusercontent.com";

    #[test]
    fn a_desktop_client_file_gives_its_id_and_secret() {
        let text = format!(
            r#"{{"installed":{{"client_id":"{ID}","project_id":"p","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","client_secret":"GOCSPX-s","redirect_uris":["http://localhost"]}}}}"#
        );
        let client = GoogleClient::from_file(&text, true).unwrap();
        assert_eq!(client.id, ID);
        assert_eq!(client.secret.as_deref(), Some("GOCSPX-s"));
        assert!(!format!("{client:?}").contains("GOCSPX"), "the secret is not in debug output");
    }

    #[test]
    fn a_web_client_or_another_file_is_refused_with_the_reason() {
        let web = format!(r#"{{"web":{{"client_id":"{ID}","client_secret":"s"}}}}"#);
        assert_eq!(
            GoogleClient::from_file(&web, true),
            Err(ClientError::WrongType("Web application".into()))
        );
        assert!(matches!(GoogleClient::from_file("{}", true), Err(ClientError::NotAClientFile(_))));
        assert!(matches!(GoogleClient::from_file("not json", true), Err(ClientError::NotAClientFile(_))));
        let huge = "x".repeat(MAX_FILE + 1);
        assert!(matches!(GoogleClient::from_file(&huge, true), Err(ClientError::NotAClientFile(_))));
    }

    #[test]
    fn a_typed_id_is_checked() {
        assert_eq!(GoogleClient::new("  ", None, true), Err(ClientError::Empty));
        assert!(matches!(GoogleClient::new("my-api-key", None, true), Err(ClientError::NotAnId(_))));
        assert_eq!(GoogleClient::new(&format!("{ID} x"), None, true), Err(ClientError::Spaces));
        let client = GoogleClient::new(&format!(" {ID}\n"), Some(" "), true).unwrap();
        assert_eq!((client.id.as_str(), client.secret), (ID, None), "trimmed; an empty secret is none");
        assert!(GoogleClient::new("fake-client", None, false).is_ok(), "a test's fake has its own IDs");
    }
}
