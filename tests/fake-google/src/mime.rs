//! Just enough RFC 2822 / MIME to read messages as Gmail does: headers (unfolded, RFC 2047
//! encoded words decoded), multipart trees, base64 and quoted-printable bodies, addresses, and
//! the checks `messages.send` makes on what it is given.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

pub(crate) struct Part {
    pub headers: Vec<(String, String)>,
    /// `type/subtype`, lowercase.
    pub mime_type: String,
    pub filename: String,
    /// The body with its transfer encoding undone (leaves only).
    pub body: Vec<u8>,
    pub parts: Vec<Part>,
}

impl Part {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn is_attachment(&self) -> bool {
        !self.filename.is_empty()
    }

    /// Every part, depth first, with Gmail's part ids ("" for the root, then "0", "0.1", ...).
    pub fn walk(&self) -> Vec<(String, &Part)> {
        fn go<'a>(part: &'a Part, id: String, out: &mut Vec<(String, &'a Part)>) {
            out.push((id.clone(), part));
            for (i, child) in part.parts.iter().enumerate() {
                let child_id = if id.is_empty() { i.to_string() } else { format!("{id}.{i}") };
                go(child, child_id, out);
            }
        }
        let mut out = Vec::new();
        go(self, String::new(), &mut out);
        out
    }

    /// The first text part of this type that is not an attachment.
    pub fn text(&self, mime_type: &str) -> Option<String> {
        self.walk()
            .into_iter()
            .find(|(_, p)| p.mime_type == mime_type && !p.is_attachment())
            .map(|(_, p)| String::from_utf8_lossy(&p.body).into_owned())
    }
}

fn split_head(raw: &[u8]) -> (&[u8], &[u8]) {
    if let Some(pos) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
        (&raw[..pos], &raw[pos + 4..])
    } else if let Some(pos) = raw.windows(2).position(|w| w == b"\n\n") {
        (&raw[..pos], &raw[pos + 2..])
    } else {
        (raw, &[])
    }
}

/// Header lines, unfolded, in order; values have encoded words decoded.
fn parse_headers(head: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(head);
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)) {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = headers.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    headers.into_iter().map(|(k, v)| (k, decode_words(&v))).collect()
}

/// `type/subtype` and the parameters of a Content-Type or Content-Disposition value.
pub(crate) fn parameters(value: &str) -> (String, Vec<(String, String)>) {
    let mut pieces = value.split(';');
    let main = pieces.next().unwrap_or_default().trim().to_ascii_lowercase();
    let params = pieces
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().trim_matches('"').to_owned()))
        .collect();
    (main, params)
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

pub(crate) fn parse(raw: &[u8]) -> Part {
    let (head, body) = split_head(raw);
    let headers = parse_headers(head);
    let find =
        |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone());
    let (mime_type, type_params) = parameters(&find("Content-Type").unwrap_or_else(|| "text/plain".into()));
    let (_, disposition) = parameters(&find("Content-Disposition").unwrap_or_default());
    let filename = param(&disposition, "filename")
        .or_else(|| param(&type_params, "name"))
        .unwrap_or_default()
        .to_owned();
    let encoding = find("Content-Transfer-Encoding").unwrap_or_default().to_ascii_lowercase();
    if mime_type.starts_with("multipart/")
        && let Some(boundary) = param(&type_params, "boundary")
    {
        let parts = split_multipart(body, boundary).into_iter().map(parse).collect();
        return Part { headers, mime_type, filename, body: Vec::new(), parts };
    }
    let body = match encoding.as_str() {
        "base64" => decode_base64(body),
        "quoted-printable" => decode_qp(body),
        _ => body.to_vec(),
    };
    Part { headers, mime_type, filename, body, parts: Vec::new() }
}

fn split_multipart<'a>(body: &'a [u8], boundary: &str) -> Vec<&'a [u8]> {
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let mut starts = Vec::new();
    let mut i = 0;
    while i + delimiter.len() <= body.len() {
        let at_line_start = i == 0 || body[i - 1] == b'\n';
        if at_line_start && &body[i..i + delimiter.len()] == delimiter {
            starts.push(i);
            i += delimiter.len();
        } else {
            i += 1;
        }
    }
    let mut parts = Vec::new();
    for pair in starts.windows(2) {
        let after = pair[0] + delimiter.len();
        // The rest of the delimiter line, then the part, up to the CRLF before the next one.
        let content_start =
            body[after..pair[1]].iter().position(|b| *b == b'\n').map_or(pair[1], |p| after + p + 1);
        let mut end = pair[1];
        if end > content_start && body[end - 1] == b'\n' {
            end -= 1;
        }
        if end > content_start && body[end - 1] == b'\r' {
            end -= 1;
        }
        parts.push(&body[content_start..end.max(content_start)]);
    }
    parts
}

pub(crate) fn decode_base64(text: &[u8]) -> Vec<u8> {
    let clean: Vec<u8> = text.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
    STANDARD.decode(&clean).unwrap_or_default()
}

pub(crate) fn decode_qp(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    let hex = |b: u8| (b as char).to_digit(16);
    while i < text.len() {
        if text[i] == b'=' {
            match (text.get(i + 1).copied(), text.get(i + 2).copied()) {
                (Some(b'\r'), Some(b'\n')) => i += 3,
                (Some(b'\n'), _) => i += 2,
                (Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                    out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                    i += 3;
                }
                _ => {
                    out.push(b'=');
                    i += 1;
                }
            }
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

/// Quoted-printable with soft breaks under 76 characters a line (for the seeded mail).
pub(crate) fn encode_qp(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut width = 0;
        for b in line.bytes() {
            let piece = if (b.is_ascii_graphic() && b != b'=') || b == b' ' {
                (b as char).to_string()
            } else {
                format!("={b:02X}")
            };
            if width + piece.len() > 75 {
                out.push_str("=\r\n");
                width = 0;
            }
            width += piece.len();
            out.push_str(&piece);
        }
        out.push_str("\r\n");
    }
    out
}

/// Base64 in 76-character lines, as MIME bodies carry it.
pub(crate) fn encode_base64_lines(bytes: &[u8]) -> String {
    let encoded = STANDARD.encode(bytes);
    let mut out = String::with_capacity(encoded.len() + encoded.len() / 38);
    for chunk in encoded.as_bytes().chunks(76) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push_str("\r\n");
    }
    out
}

/// An RFC 2047 encoded word for a header value that is not ASCII.
pub(crate) fn encode_word(text: &str) -> String {
    if text.is_ascii() { text.to_owned() } else { format!("=?UTF-8?B?{}?=", STANDARD.encode(text)) }
}

/// Decodes RFC 2047 encoded words (B and Q, UTF-8 and Latin-1); whitespace between two adjacent
/// encoded words is dropped, as the RFC says.
pub(crate) fn decode_words(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    let mut previous_was_word = false;
    while let Some(start) = rest.find("=?") {
        let (before, candidate) = rest.split_at(start);
        let decoded = decode_word(candidate);
        let Some((text, consumed)) = decoded else {
            out.push_str(before);
            out.push_str("=?");
            rest = &candidate[2..];
            previous_was_word = false;
            continue;
        };
        if !(previous_was_word && before.trim().is_empty()) {
            out.push_str(before);
        }
        out.push_str(&text);
        rest = &candidate[consumed..];
        previous_was_word = true;
    }
    out.push_str(rest);
    out
}

fn decode_word(candidate: &str) -> Option<(String, usize)> {
    let inner = candidate.strip_prefix("=?")?;
    let (charset, inner) = inner.split_once('?')?;
    let (encoding, inner) = inner.split_once('?')?;
    let end = inner.find("?=")?;
    let text = &inner[..end];
    let consumed = 2 + charset.len() + 1 + encoding.len() + 1 + end + 2;
    let bytes = match encoding {
        "B" | "b" => STANDARD.decode(text).ok()?,
        "Q" | "q" => decode_qp(text.replace('_', " ").as_bytes()),
        _ => return None,
    };
    let text = match charset.to_ascii_lowercase().as_str() {
        "iso-8859-1" | "latin1" | "us-ascii" => bytes.iter().map(|b| *b as char).collect(),
        _ => String::from_utf8(bytes).ok()?,
    };
    Some((text, consumed))
}

/// The addr-specs of an address-list header: `"Ana" <ana@example.org>, bob@example.org`.
pub(crate) fn addresses(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut current, mut quoted, mut angle) = (String::new(), false, false);
    for c in value.chars() {
        match c {
            '"' => quoted = !quoted,
            '<' if !quoted => angle = true,
            '>' if !quoted => angle = false,
            ',' if !quoted && !angle => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.iter()
        .map(|a| a.trim())
        .filter(|a| !a.is_empty())
        .map(|a| match (a.rfind('<'), a.rfind('>')) {
            (Some(open), Some(close)) if open < close => a[open + 1..close].trim().to_owned(),
            _ => a.to_owned(),
        })
        .collect()
}

pub(crate) fn is_address(addr: &str) -> bool {
    match addr.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !addr.contains(char::is_whitespace)
                && !domain.contains('@')
        }
        None => false,
    }
}

/// What `messages.send` and `drafts.create` refuse as not an RFC 2822 message. Lines must end
/// in CRLF, and a header may carry non-ASCII text only as encoded words.
pub(crate) fn check_outgoing(raw: &[u8]) -> Result<(), String> {
    if raw.iter().enumerate().any(|(i, b)| *b == b'\n' && (i == 0 || raw[i - 1] != b'\r')) {
        return Err("Invalid RFC 2822 message: lines must end in CRLF".into());
    }
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(raw.len());
    if !raw[..head_end].is_ascii() {
        return Err("Invalid RFC 2822 message: non-ASCII header text must be an encoded word".into());
    }
    let head = String::from_utf8_lossy(&raw[..head_end]);
    let malformed = head
        .split("\r\n")
        .find(|line| !line.starts_with([' ', '\t']) && !line.contains(':') && !line.is_empty());
    if let Some(line) = malformed {
        return Err(format!("Invalid RFC 2822 message: not a header line: {line}"));
    }
    Ok(())
}

/// Reply prefixes (`Re:`, `Fwd:`) removed and case folded, for Gmail's "subjects match" rule.
pub(crate) fn base_subject(subject: &str) -> String {
    let mut s = subject.trim();
    loop {
        let lower = s.to_ascii_lowercase();
        let Some(prefix) = ["re:", "fwd:", "fw:", "aw:"].iter().find(|p| lower.starts_with(**p)) else {
            break;
        };
        s = s[prefix.len()..].trim_start();
    }
    s.to_lowercase()
}

/// Message-IDs named in `In-Reply-To` and `References`.
pub(crate) fn referenced_ids(part: &Part) -> Vec<String> {
    let mut ids = Vec::new();
    for name in ["In-Reply-To", "References"] {
        if let Some(value) = part.header(name) {
            ids.extend(value.split_whitespace().filter(|t| t.starts_with('<')).map(str::to_owned));
        }
    }
    ids
}

/// Text for a snippet: the plain part, or the HTML part without tags, scripts and styles.
pub(crate) fn snippet(part: &Part) -> String {
    let text =
        part.text("text/plain").unwrap_or_else(|| strip_html(&part.text("text/html").unwrap_or_default()));
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = collapsed.chars().take(200).collect();
    // Gmail's snippets are HTML-escaped.
    cut.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn strip_html(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let tag = rest[open + 1..].to_ascii_lowercase();
        let skip_until = ["script", "style"].iter().find(|t| tag.starts_with(**t)).map(|t| format!("</{t}>"));
        rest = &rest[open..];
        if let Some(end_tag) = skip_until {
            let lower = rest.to_ascii_lowercase();
            rest = lower.find(&end_tag).map_or("", |i| &rest[i + end_tag.len()..]);
        } else {
            rest = rest.find('>').map_or("", |i| &rest[i + 1..]);
        }
        out.push(' ');
    }
    out.push_str(rest);
    out.replace("&nbsp;", " ").replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_words_decode_and_join() {
        assert_eq!(
            decode_words("=?UTF-8?B?R3LDvMOfZQ==?= =?UTF-8?Q?_aus_M=C3=BCnchen?="),
            "Grüße aus München"
        );
        assert_eq!(decode_words("Re: =?iso-8859-1?q?Caf=E9?= today"), "Re: Café today");
        assert_eq!(decode_words("plain =? not a word"), "plain =? not a word");
    }

    #[test]
    fn multipart_bodies_are_split_and_decoded() {
        let raw = "Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\npreamble\r\n--b\r\n\
                   Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
                   Gr=C3=BC=C3=9Fe, soft=\r\nbreak\r\n--b\r\nContent-Type: application/octet-stream\r\n\
                   Content-Disposition: attachment; filename=\"a.bin\"\r\nContent-Transfer-Encoding: base64\r\n\r\n\
                   AAEC\r\nAw==\r\n--b--\r\n";
        let part = parse(raw.as_bytes());
        assert_eq!(part.parts.len(), 2);
        assert_eq!(part.parts[0].body, "Grüße, softbreak".as_bytes());
        assert_eq!(
            (part.parts[1].filename.as_str(), part.parts[1].body.as_slice()),
            ("a.bin", &[0u8, 1, 2, 3][..])
        );
        let ids: Vec<String> = part.walk().into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["", "0", "1"]);
    }

    #[test]
    fn outgoing_checks_and_threading_helpers() {
        assert!(check_outgoing(b"To: a@b.example\r\n\r\nhi\r\n").is_ok());
        assert!(check_outgoing(b"To: a@b.example\n\nhi\n").is_err());
        assert!(check_outgoing("Subject: Grüße\r\n\r\n".as_bytes()).is_err());
        assert!(check_outgoing("Subject: x\r\n\r\nGrüße in the body are fine\r\n".as_bytes()).is_ok());
        assert_eq!(base_subject("RE: Fwd: re:  Trip"), "trip");
        assert_eq!(
            addresses("\"Lima, Ana\" <ana@example.org>, bob@example.org"),
            ["ana@example.org", "bob@example.org"]
        );
        assert!(!is_address("not an address") && is_address("ana@example.org"));
        assert_eq!(decode_qp(&encode_qp("Grüße = ☕\n").into_bytes()), "Grüße = ☕\r\n".as_bytes());
    }
}
