//! The SSRF guard: which hosts and addresses a page fetch may reach. Every name is resolved
//! here, every address it resolves to is checked, and the connection is made only to the
//! checked addresses (the guard is reqwest's resolver, so redirects pass through it too).
//! IP literals never reach a resolver, so they are checked on the URL itself, before the
//! first request and before following each redirect.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::error::WebError;

/// What the user allowed beyond the public internet (the server's command line).
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Hosts (as written in URLs: a name or an IP literal) exempt from the address check.
    pub allowed_hosts: HashSet<String>,
    /// Allows every private, loopback and link-local address (a trusted intranet set-up).
    pub allow_private: bool,
}

impl Policy {
    fn host_allowed(&self, host: &str) -> bool {
        // An IPv6 literal is written `[::1]` in a URL and kept without brackets in the list.
        let host = host.trim_matches(['[', ']']).to_ascii_lowercase();
        self.allow_private || self.allowed_hosts.contains(&host)
    }

    /// Checks a URL before it is requested: http(s) only, and an IP literal host must be public.
    pub fn check_url(&self, url: &Url) -> Result<(), WebError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(WebError::Scheme(url.scheme().to_owned()));
        }
        let Some(host) = url.host() else { return Err(WebError::BadUrl(url.to_string())) };
        let literal = match host {
            url::Host::Ipv4(ip) => IpAddr::V4(ip),
            url::Host::Ipv6(ip) => IpAddr::V6(ip),
            url::Host::Domain(_) => return Ok(()), // checked when resolved
        };
        let written = url.host_str().unwrap_or_default();
        if self.host_allowed(written) || is_public(literal) {
            Ok(())
        } else {
            Err(WebError::Refused { host: written.to_owned(), address: literal })
        }
    }
}

/// A resolver that refuses names resolving to non-public addresses (any one of them: a name
/// with one public and one private address is refused, so no retry can land on the private one).
pub struct GuardedResolver {
    pub policy: Arc<Policy>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|e| WebError::Dns { host: host.clone(), message: e.to_string() })?
                .collect();
            if addrs.is_empty() {
                return Err(WebError::Dns { host, message: "no addresses".into() }.into());
            }
            if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip()))
                && !policy.host_allowed(&host)
            {
                return Err(WebError::Refused { host, address: bad.ip() }.into());
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// True for addresses on the public internet; false for loopback, private, link-local,
/// carrier-grade NAT, multicast, documentation, benchmarking and other special ranges.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    let first = segments[0];
    // Addresses that carry an IPv4 address inside are judged by it: IPv4-compatible `::a.b.c.d`
    // (::/96, deprecated but still routed by some stacks) and 6to4 `2002:aabb:ccdd::/48`.
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if segments[..6].iter().all(|s| *s == 0) {
        return is_public_v4(embedded(segments[6], segments[7]));
    }
    if first == 0x2002 && !is_public_v4(embedded(segments[1], segments[2])) {
        return false;
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated)
        || first == 0x2001 && ip.segments()[1] == 0x0db8 // documentation
        || first == 0x0064 && ip.segments()[1] == 0xff9b) // NAT64 can reach IPv4 private space
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(s: &str) -> bool {
        is_public(s.parse().expect("an address"))
    }

    #[test]
    fn classifies_addresses() {
        for private in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "64:ff9b:1::a00:1",
            "::127.0.0.1",
            "::10.0.0.1",
            "::c0a8:101",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
        ] {
            assert!(!public(private), "{private} should not be public");
        }
        for open in
            ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "172.32.0.1", "2002:101:101::1", "::1.1.1.1"]
        {
            assert!(public(open), "{open} should be public");
        }
    }

    #[test]
    fn checks_literal_hosts_and_schemes() {
        let policy = Policy::default();
        let url = |s: &str| Url::parse(s).expect("a URL");
        assert!(policy.check_url(&url("https://example.com/")).is_ok());
        assert!(matches!(policy.check_url(&url("http://127.0.0.1:8080/")), Err(WebError::Refused { .. })));
        assert!(matches!(policy.check_url(&url("http://[::1]/")), Err(WebError::Refused { .. })));
        assert!(matches!(policy.check_url(&url("http://2130706433/")), Err(WebError::Refused { .. })));
        assert!(matches!(policy.check_url(&url("file:///etc/passwd")), Err(WebError::Scheme(_))));
        let allowed = Policy { allowed_hosts: ["127.0.0.1".to_owned()].into(), allow_private: false };
        assert!(allowed.check_url(&url("http://127.0.0.1:8080/")).is_ok());
        assert!(allowed.check_url(&url("http://127.0.0.2/")).is_err());
        // `--allow-host ::1` (or `[::1]`, kept without brackets) lets `http://[::1]/` through.
        let allowed_v6 = Policy { allowed_hosts: ["::1".to_owned()].into(), allow_private: false };
        assert!(allowed_v6.check_url(&url("http://[::1]:8080/")).is_ok());
        assert!(allowed_v6.check_url(&url("http://[::2]/")).is_err());
    }
}
