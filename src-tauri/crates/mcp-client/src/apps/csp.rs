//! The Content Security Policy an app's page is served with, built from the origins its
//! resource declares (`_meta.ui.csp`). The spec says a host must not allow what was not
//! declared and may allow less; Perch allows less:
//! - only `https://` (and `wss://` for connections) origins with a public DNS name, optionally
//!   `*.` before it: no IP literals, loopback, `localhost`, `.local` or other private names, no
//!   paths, keywords, wildcards alone or anything that could close the directive (`;`, quotes,
//!   spaces), at most [`MAX_DOMAINS`] per list; nor public names made to point at this machine
//!   or a private network: the services that answer any name under them with loopback or with
//!   the address spelled in it (`localtest.me`, `*.nip.io`...) and names that spell an IPv4
//!   address in their labels (`127.0.0.1.example`, `app-10-0-0-1.example`);
//! - no nested frames (`frame-src 'none'` even when `frameDomains` asks), no workers, no
//!   plugins, no `<base>`, no form submissions, no eval;
//! - and the `sandbox` directive, so the page has an opaque origin even if the frame's own
//!   `sandbox` attribute were lost.
//!
//! Refused entries are reported, so the card can say what the app asked for and did not get.

use serde::Serialize;

use super::ResourceUi;

/// The most origins taken from one list.
pub const MAX_DOMAINS: usize = 32;

/// The policy for one page, and what was asked for but refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct AppPolicy {
    /// The `Content-Security-Policy` header's value.
    pub header: String,
    /// Origins its scripts may connect to (shown on the card).
    pub connect: Vec<String>,
    /// Origins scripts, styles, images, fonts and media may come from.
    pub resources: Vec<String>,
    /// Entries refused, with why.
    pub refused: Vec<RefusedDomain>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct RefusedDomain {
    pub entry: String,
    pub reason: String,
}

/// Why a declared origin is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginRefused {
    #[error("not an origin (scheme://host)")]
    NotAnOrigin,
    #[error("wss: is only for connections")]
    WssNotForResources,
    #[error("not encrypted (only https: and wss:)")]
    NotEncrypted,
    #[error("the scheme {0}: is not allowed")]
    Scheme(String),
    #[error("no host")]
    NoHost,
    #[error("the character {0:?} is not allowed in an origin")]
    Character(char),
    #[error("{0:?} is not a port")]
    Port(String),
    #[error("a wildcard is only allowed as the first label (*.example.com)")]
    WildcardInside,
    #[error("a wildcard over a public suffix")]
    WildcardOverSuffix,
    #[error("not a public host name")]
    NotPublicName,
    #[error("an IP address (only host names)")]
    IpAddress,
    #[error("a local or private name")]
    LocalName,
    #[error("a name made to point at this computer or a private address")]
    PointsInward,
}

/// Checks one declared origin; the normalised origin (lower case, no trailing `/`), or why not.
pub fn check_origin(entry: &str, allow_wss: bool) -> Result<String, OriginRefused> {
    let lower = entry.trim().to_ascii_lowercase();
    let (scheme, rest) = lower.split_once("://").ok_or(OriginRefused::NotAnOrigin)?;
    match scheme {
        "https" => {}
        "wss" if allow_wss => {}
        "wss" => return Err(OriginRefused::WssNotForResources),
        "http" | "ws" => return Err(OriginRefused::NotEncrypted),
        _ => return Err(OriginRefused::Scheme(scheme.to_owned())),
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() {
        return Err(OriginRefused::NoHost);
    }
    if let Some(bad) =
        rest.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '*')))
    {
        return Err(OriginRefused::Character(bad));
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => {
            let ok = !port.is_empty() && port.len() <= 5 && port.parse::<u16>().is_ok_and(|p| p > 0);
            if !ok {
                return Err(OriginRefused::Port(port.to_owned()));
            }
            (host, Some(port))
        }
        None => (rest, None),
    };
    let wildcard = host.starts_with("*.");
    let name = host.strip_prefix("*.").unwrap_or(host);
    if name.contains('*') {
        return Err(OriginRefused::WildcardInside);
    }
    // `*.co.uk` would be every site under a public suffix: a wildcard needs a registered name
    // under it (no public-suffix list is shipped; these are the common second-level suffixes).
    const SUFFIX_LABELS: [&str; 10] = ["co", "com", "net", "org", "gov", "edu", "ac", "or", "ne", "go"];
    if wildcard
        && (name.split('.').count() < 2 || SUFFIX_LABELS.contains(&name.split('.').next().unwrap_or("")))
    {
        return Err(OriginRefused::WildcardOverSuffix);
    }
    let labels: Vec<&str> = name.split('.').collect();
    let label_ok = |l: &&str| !l.is_empty() && l.len() <= 63 && !l.starts_with('-') && !l.ends_with('-');
    if labels.len() < 2 || !labels.iter().all(label_ok) || name.len() > 253 {
        return Err(OriginRefused::NotPublicName);
    }
    let tld = labels[labels.len() - 1];
    if tld.chars().all(|c| c.is_ascii_digit()) || name.parse::<std::net::IpAddr>().is_ok() {
        return Err(OriginRefused::IpAddress);
    }
    if !tld.chars().all(|c| c.is_ascii_alphabetic()) && !tld.starts_with("xn--") {
        return Err(OriginRefused::NotPublicName);
    }
    const PRIVATE: [&str; 7] = ["localhost", "local", "internal", "lan", "home", "arpa", "test"];
    if PRIVATE.contains(&tld) || name == "localhost" {
        return Err(OriginRefused::LocalName);
    }
    if points_inward(&labels) {
        return Err(OriginRefused::PointsInward);
    }
    Ok(match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

/// Public DNS services whose every name answers with loopback, or with the address written in
/// the name (`10.0.0.1.nip.io`): an origin under them reaches this computer or its network.
const INWARD_DOMAINS: [&str; 12] = [
    "localtest.me",
    "lvh.me",
    "vcap.me",
    "lacolhost.com",
    "localhost.direct",
    "fuf.me",
    "local.gd",
    "localh.st",
    "nip.io",
    "sslip.io",
    "xip.io",
    "traefik.me",
];

/// Whether a name (its labels, lower case) is under an [`INWARD_DOMAINS`] service or spells an
/// IPv4 address, dotted across four labels or dashed within one, the way such services read it.
fn points_inward(labels: &[&str]) -> bool {
    let name = labels.join(".");
    let under = |domain: &str| name == domain || name.ends_with(&format!(".{domain}"));
    let octet = |s: &str| !s.is_empty() && s.len() <= 3 && s.parse::<u8>().is_ok();
    let dotted = labels.windows(4).any(|four| four.iter().all(|l| octet(l)));
    let dashed = labels.iter().any(|label| {
        let parts: Vec<&str> = label.split('-').collect();
        parts.windows(4).any(|four| four.iter().all(|p| octet(p)))
    });
    INWARD_DOMAINS.iter().any(|d| under(d)) || dotted || dashed
}

/// Builds the policy for a page with these declarations (none: no network at all).
pub fn policy(ui: Option<&ResourceUi>) -> AppPolicy {
    let default = ResourceUi::default();
    let ui = ui.unwrap_or(&default);
    let mut refused = Vec::new();
    let mut take = |entries: &[String], allow_wss: bool| -> Vec<String> {
        let mut kept: Vec<String> = Vec::new();
        for entry in entries {
            match check_origin(entry, allow_wss) {
                Ok(origin) if kept.len() < MAX_DOMAINS => {
                    if !kept.contains(&origin) {
                        kept.push(origin);
                    }
                }
                Ok(_) => refused.push(RefusedDomain {
                    entry: entry.clone(),
                    reason: format!("more than {MAX_DOMAINS} origins"),
                }),
                Err(why) => refused.push(RefusedDomain { entry: entry.clone(), reason: why.to_string() }),
            }
        }
        kept
    };
    let connect = take(&ui.connect_domains, true);
    let resources = take(&ui.resource_domains, false);
    for entry in &ui.frame_domains {
        refused.push(RefusedDomain {
            entry: entry.clone(),
            reason: "Perch does not allow frames inside an app".into(),
        });
    }
    let with = |base: &str, extra: &[String]| {
        if extra.is_empty() { base.to_owned() } else { format!("{base} {}", extra.join(" ")) }
    };
    let directives = [
        "default-src 'none'".to_owned(),
        with("script-src 'unsafe-inline'", &resources),
        with("style-src 'unsafe-inline'", &resources),
        with("img-src data: blob:", &resources),
        with("font-src data:", &resources),
        with("media-src data: blob:", &resources),
        if connect.is_empty() { "connect-src 'none'".to_owned() } else { with("connect-src", &connect) },
        "frame-src 'none'".to_owned(),
        "child-src 'none'".to_owned(),
        "worker-src 'none'".to_owned(),
        "object-src 'none'".to_owned(),
        "manifest-src 'none'".to_owned(),
        "base-uri 'none'".to_owned(),
        "form-action 'none'".to_owned(),
        "sandbox allow-scripts allow-forms".to_owned(),
    ];
    AppPolicy { header: directives.join("; "), connect, resources, refused }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_https_origins_are_taken_and_normalised() {
        for (entry, origin) in [
            ("https://api.example.com", "https://api.example.com"),
            ("https://API.Example.com/", "https://api.example.com"),
            ("https://*.example.com", "https://*.example.com"),
            ("https://tiles.example.org:8443", "https://tiles.example.org:8443"),
            ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
            // Digits alone are no address: a version, a year, a name's own number.
            ("https://v1-2-3.cdn.example.com", "https://v1-2-3.cdn.example.com"),
            ("https://2024.example.org", "https://2024.example.org"),
            ("https://nip.iota.example", "https://nip.iota.example"),
        ] {
            assert_eq!(check_origin(entry, false).as_deref(), Ok(origin), "{entry}");
        }
        assert_eq!(check_origin("wss://live.example.com", true).as_deref(), Ok("wss://live.example.com"));
    }

    #[test]
    fn anything_that_could_widen_the_policy_is_refused() {
        for entry in [
            "*",
            "https://*",
            "'unsafe-eval'",
            "'self'",
            "data:",
            "blob:",
            "https:",
            "https://a.com;script-src *",
            "https://a.com 'unsafe-eval'",
            "https://a.com/path",
            "https://a.com?x=1",
            "https://a.*.com",
            "http://api.example.com",
            "ws://api.example.com",
            "http://127.0.0.1:9",
            "https://127.0.0.1",
            "https://10.0.0.1",
            "https://[::1]",
            "https://localhost",
            "https://localhost:3000",
            "https://printer.local",
            "https://db.internal",
            "https://intranet",
            "https://a.com:0",
            "https://a.com:99999",
            "javascript://a.com",
            "https://-a.com",
            "https://a..com",
            "https://*.co.uk",
            "https://*.com.au",
            // Public names that point at this computer or at the address they spell.
            "https://localtest.me",
            "https://app.localtest.me:8443",
            "https://*.nip.io",
            "https://127.0.0.1.nip.io",
            "wss://app-127-0-0-1.sslip.io",
            "https://*.lvh.me",
            "https://a.10.0.0.1.example.com",
            "https://app-192-168-1-1.example.com",
        ] {
            assert!(check_origin(entry, true).is_err(), "{entry} was taken");
        }
        assert!(check_origin("wss://a.com", false).is_err(), "wss only for connections");
    }

    #[test]
    fn no_declarations_means_no_network_and_the_sandbox_directive() {
        let p = policy(None);
        assert_eq!(
            p.header,
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'none'; \
             frame-src 'none'; child-src 'none'; worker-src 'none'; object-src 'none'; \
             manifest-src 'none'; base-uri 'none'; form-action 'none'; sandbox allow-scripts allow-forms"
        );
        assert!(p.refused.is_empty());
        assert!(!p.header.contains("unsafe-eval") && !p.header.contains("'self'"));
    }

    #[test]
    fn declared_origins_land_in_their_directives_and_refusals_are_listed() {
        let ui = ResourceUi {
            connect_domains: vec!["https://api.example.com".into(), "http://127.0.0.1:4000".into()],
            resource_domains: vec!["https://cdn.example.com".into(), "https://cdn.example.com/".into()],
            frame_domains: vec!["https://www.youtube.com".into()],
            prefers_border: None,
        };
        let p = policy(Some(&ui));
        assert!(p.header.contains("connect-src https://api.example.com;"), "{}", p.header);
        assert!(p.header.contains("script-src 'unsafe-inline' https://cdn.example.com;"));
        assert!(p.header.contains("img-src data: blob: https://cdn.example.com;"));
        assert!(p.header.contains("frame-src 'none'"), "frames are never granted");
        assert!(!p.header.contains("127.0.0.1"));
        assert_eq!(p.resources, vec!["https://cdn.example.com"], "the same origin once");
        let refused: Vec<&str> = p.refused.iter().map(|r| r.entry.as_str()).collect();
        assert_eq!(refused, vec!["http://127.0.0.1:4000", "https://www.youtube.com"]);
    }

    #[test]
    fn at_most_thirty_two_origins_per_list() {
        let ui = ResourceUi {
            connect_domains: (0..40).map(|i| format!("https://s{i}.example.com")).collect(),
            ..ResourceUi::default()
        };
        let p = policy(Some(&ui));
        assert_eq!(p.connect.len(), MAX_DOMAINS);
        assert_eq!(p.refused.len(), 8);
    }
}
