//! What can go wrong fetching and searching, in words the model (and the user reading the
//! tool card) can act on.

use std::net::IpAddr;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    #[error("not a valid web address: {0}")]
    BadUrl(String),
    #[error("only http and https pages can be read, not {0}:")]
    Scheme(String),
    #[error(
        "refused: {host} is a private, loopback or link-local address ({address}); pages on this \
         computer or the local network can be read only if the user allows the host in the web \
         server's settings"
    )]
    Refused { host: String, address: IpAddr },
    #[error("could not find the address of {host}: {message}")]
    Dns { host: String, message: String },
    #[error("the page took longer than {0} s; try again later or another source")]
    Timeout(u64),
    #[error("the page is larger than {limit} bytes; only pages up to that size are read")]
    TooLarge { limit: u64 },
    #[error("too many redirects (more than {0}), or a redirect loop")]
    TooManyRedirects(usize),
    #[error("the server answered {status}")]
    Status { status: u16 },
    #[error("pages of type {0} cannot be read (HTML, plain text, Markdown, JSON and PDF can)")]
    ContentType(String),
    #[error("no readable text found on the page")]
    NoText,
    #[error("nothing there: {0}")]
    PastTheEnd(String),
    #[error("this PDF has no text layer; it may be scanned images")]
    PdfNoText,
    #[error("this PDF is encrypted and needs a password to open, so its text cannot be read")]
    PdfEncrypted,
    #[error("this PDF is damaged or not a valid PDF ({0}); try another copy of the document")]
    PdfCorrupt(String),
    #[error("reading this PDF took longer than {0} s without finding text; it may be too large or complex")]
    PdfTimeout(u64),
    #[error("the search service is rate-limiting requests; wait a minute before searching again")]
    RateLimited,
    #[error("the search service rejected the API key (HTTP {0}); check the key in Settings")]
    Auth(u16),
    #[error("{backend} needs an API key: set {env} or store one in Settings")]
    MissingKey { backend: &'static str, env: &'static str },
    #[error(
        "{backend} is reached only at its own address, since its API key goes with every search: \
         remove --endpoint from the web server's arguments (it is for SearXNG and DuckDuckGo)"
    )]
    KeyedEndpoint { backend: &'static str },
    #[error("{0}")]
    TestEndpoint(String),
    #[error("the search service answered in an unexpected form: {0}")]
    Unexpected(String),
    #[error("could not connect: {0}")]
    Network(String),
}

impl WebError {
    /// Turns a reqwest error into the most specific variant: a refusal from the guard (buried
    /// in the connect error's sources), a timeout, a redirect limit, or a network failure.
    pub fn from_reqwest(error: reqwest::Error, timeout_secs: u64) -> Self {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
        while let Some(e) = source {
            if let Some(web) = e.downcast_ref::<WebError>() {
                return web.clone_shallow();
            }
            source = e.source();
        }
        if error.is_timeout() {
            Self::Timeout(timeout_secs)
        } else if error.is_redirect() {
            Self::TooManyRedirects(crate::MAX_REDIRECTS)
        } else {
            // The chain's innermost message says what failed (refused, reset, TLS).
            let mut message = error.to_string();
            let mut source = std::error::Error::source(&error);
            while let Some(e) = source {
                message = format!("{message}: {e}");
                source = e.source();
            }
            Self::Network(message)
        }
    }

    fn clone_shallow(&self) -> Self {
        match self {
            Self::Refused { host, address } => Self::Refused { host: host.clone(), address: *address },
            Self::Dns { host, message } => Self::Dns { host: host.clone(), message: message.clone() },
            Self::Scheme(s) => Self::Scheme(s.clone()),
            other => Self::Network(other.to_string()),
        }
    }
}

impl From<perch_files::pdf::PdfError> for WebError {
    fn from(e: perch_files::pdf::PdfError) -> Self {
        use perch_files::pdf::PdfError;
        match e {
            PdfError::NoText => Self::PdfNoText,
            PdfError::Encrypted => Self::PdfEncrypted,
            PdfError::Corrupt(why) => Self::PdfCorrupt(why),
            PdfError::Timeout(secs) => Self::PdfTimeout(secs),
            past @ PdfError::PastTheEnd { .. } => Self::PastTheEnd(past.to_string()),
        }
    }
}
