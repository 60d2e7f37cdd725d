//! Mail addresses: those the model gives (`ann@example.org` or `Ann Lee <ann@example.org>`),
//! checked strictly, and those in a received message's headers, read leniently.

use super::write::{encoded_words, no_line_breaks};
use crate::error::GoogleError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mailbox {
    pub name: Option<String>,
    pub address: String,
}

impl Mailbox {
    /// One address as a person writes it; refused unless it is a plain `local@domain.tld`.
    pub fn parse(input: &str) -> Result<Self, GoogleError> {
        no_line_breaks("address", input)?;
        let input = input.trim();
        let (name, address) = match (input.rfind('<'), input.ends_with('>')) {
            (Some(open), true) => {
                let name = unquote(input[..open].trim());
                (Some(name).filter(|n| !n.is_empty()), input[open + 1..input.len() - 1].trim())
            }
            _ => (None, input),
        };
        if !valid_address(address) {
            return Err(GoogleError::invalid(format!(
                "{input:?} is not an email address Perch can send to (write name@example.org, or \
                 Name <name@example.org>)"
            )));
        }
        Ok(Self { name, address: address.to_owned() })
    }

    /// As it goes in a header: the name quoted or encoded as needed, then `<address>`.
    pub fn render(&self) -> String {
        match &self.name {
            None => self.address.clone(),
            Some(name) if !name.is_ascii() => {
                format!("{} <{}>", encoded_words(name, 0).join(" "), self.address)
            }
            Some(name)
                if name.chars().all(|c| c.is_ascii_alphanumeric() || " !#$%&'*+-/=?^_`{|}~".contains(c)) =>
            {
                format!("{name} <{}>", self.address)
            }
            Some(name) => {
                format!("\"{}\" <{}>", name.replace('\\', "\\\\").replace('"', "\\\""), self.address)
            }
        }
    }

    /// The addresses of a header such as `To` in a received message: split on commas outside quotes
    /// and angle brackets; entries without a valid address are skipped.
    pub fn parse_list(header: &str) -> Vec<Self> {
        let mut items = Vec::new();
        let (mut current, mut quoted, mut angle) = (String::new(), false, false);
        let mut escaped = false;
        for c in header.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '"' => quoted = !quoted,
                '<' if !quoted => angle = true,
                '>' if !quoted => angle = false,
                ',' | ';' if !quoted && !angle => {
                    items.push(std::mem::take(&mut current));
                    continue;
                }
                _ => {}
            }
            current.push(c);
        }
        items.push(current);
        items
            .iter()
            .map(|item| item.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter_map(|item| Self::parse(&item).ok())
            .collect()
    }

    pub fn is(&self, address: &str) -> bool {
        self.address.eq_ignore_ascii_case(address)
    }
}

impl std::fmt::Display for Mailbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{name} <{}>", self.address),
            None => f.write_str(&self.address),
        }
    }
}

fn unquote(name: &str) -> String {
    let inner = name.strip_prefix('"').and_then(|n| n.strip_suffix('"')).unwrap_or(name);
    inner.replace("\\\"", "\"").replace("\\\\", "\\")
}

/// `local@domain`: the local part of RFC 5322 atoms joined by dots, the domain of LDH labels with
/// at least one dot; ASCII only (Gmail's API does not take SMTPUTF8 addresses through raw).
fn valid_address(address: &str) -> bool {
    let Some((local, domain)) = address.rsplit_once('@') else { return false };
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && local.split('.').all(|atom| !atom.is_empty() && atom.chars().all(atext));
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2
        && domain.len() <= 253
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    local_ok && domain_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_people_write_and_refuses_the_rest() {
        let ann = Mailbox::parse(" \"Lee, Ann\" <ann.lee+work@example.co.uk> ").unwrap();
        assert_eq!(ann.name.as_deref(), Some("Lee, Ann"));
        assert_eq!(ann.render(), "\"Lee, Ann\" <ann.lee+work@example.co.uk>");
        assert_eq!(Mailbox::parse("bob@example.org").unwrap().render(), "bob@example.org");
        for bad in
            ["bob", "bob@localhost", "a b@example.org", "<>", "bob@exa_mple.org", "bob@.org", "b..c@x.org"]
        {
            assert!(Mailbox::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_header_lists_with_commas_in_names() {
        let list = Mailbox::parse_list(
            "\"Lee, Ann\" <ann@example.org>, bob@example.org,\r\n Zoë <zoe@example.org>, bad",
        );
        let addresses: Vec<&str> = list.iter().map(|m| m.address.as_str()).collect();
        assert_eq!(addresses, ["ann@example.org", "bob@example.org", "zoe@example.org"]);
        assert_eq!(list[2].name.as_deref(), Some("Zoë"));
    }
}
