//! What can go wrong talking to Google, in words the model (and the user reading the tool card)
//! can act on. No variant ever carries the access token: errors are built from Google's answer
//! (status, reason, message) and from reqwest errors, whose text names the URL but not headers.

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GoogleError {
    #[error(
        "Google did not accept Perch's access (the sign-in expired or was revoked): reconnect in \
         Settings → Connections"
    )]
    Unauthorized,
    #[error(
        "Google refused: Perch was not given permission to {need}. Add that permission to the Google \
         connection in Settings → Connections (or `perch google connect`), then try again"
    )]
    MissingPermission { need: &'static str },
    #[error("Google refused the request: {message}")]
    Forbidden { message: String },
    #[error("{}", rate_limited(*.retry_after_secs))]
    RateLimited { retry_after_secs: Option<u64> },
    #[error("Google is having trouble (HTTP {status}); try again in a few minutes")]
    Unavailable { status: u16 },
    #[error(
        "Google had trouble (HTTP {status}) and may or may not have done it: check (for mail, the Sent \
         folder or Drafts; for events, the calendar) before trying again"
    )]
    MaybeDone { status: u16 },
    #[error("Google found nothing there: {message}")]
    NotFound { message: String },
    #[error("Google rejected the request: {message}")]
    BadRequest { message: String },
    #[error("Google answered HTTP {status}: {message}")]
    Status { status: u16, message: String },
    #[error("Google's answer could not be read ({0}); try again")]
    Malformed(String),
    #[error("Google's answer is larger than {limit} bytes, more than Perch reads at once")]
    TooLarge { limit: usize },
    #[error("Google did not answer within {0} s; try again later")]
    Timeout(u64),
    #[error("could not reach Google: {0}")]
    Network(String),
    /// The arguments cannot make a valid request; the text says which and why.
    #[error("{0}")]
    Invalid(String),
}

fn rate_limited(retry_after_secs: Option<u64>) -> String {
    match retry_after_secs {
        Some(secs) if secs >= 120 => format!(
            "Google is limiting requests from Perch right now; try again in about {} minutes",
            secs.div_ceil(60)
        ),
        Some(secs) => format!("Google is limiting requests from Perch right now; try again in {secs} s"),
        None => "Google is limiting requests from Perch right now; try again in a minute".into(),
    }
}

impl GoogleError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }

    /// A reqwest failure: a timeout, or a network error with its causes (refused, reset, TLS).
    pub fn from_reqwest(error: &reqwest::Error, timeout_secs: u64) -> Self {
        if error.is_timeout() {
            return Self::Timeout(timeout_secs);
        }
        let mut message = error.without_url_string();
        let mut source = std::error::Error::source(error);
        while let Some(e) = source {
            message = format!("{message}: {e}");
            source = e.source();
        }
        Self::Network(message)
    }
}

/// reqwest's text without the URL: the URL holds the user's search words and ids, which belong in
/// the answer no more than in logs.
trait WithoutUrl {
    fn without_url_string(&self) -> String;
}

impl WithoutUrl for reqwest::Error {
    fn without_url_string(&self) -> String {
        if self.is_connect() {
            "the connection failed".into()
        } else if self.is_body() || self.is_decode() {
            "the answer was cut off".into()
        } else if self.is_request() {
            "the request could not be sent".into()
        } else {
            "the request failed".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_when_to_try_again() {
        let soon = GoogleError::RateLimited { retry_after_secs: Some(30) }.to_string();
        assert!(soon.ends_with("try again in 30 s"), "{soon}");
        let later = GoogleError::RateLimited { retry_after_secs: Some(600) }.to_string();
        assert!(later.ends_with("about 10 minutes"), "{later}");
        let reconnect = GoogleError::Unauthorized.to_string();
        assert!(reconnect.contains("reconnect in Settings → Connections"), "{reconnect}");
    }
}
