//! Reading a picked file for the model: images go the image way, other files must be text
//! (no NUL bytes, a decodable encoding), under a size limit per file and per message. A file
//! in another encoding is decoded without replacement characters, or refused.

use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

use encoding_rs::Encoding;
use tokio_util::sync::CancellationToken;

use super::FilesError;

/// Images larger than this are refused (providers refuse them too).
pub const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// Size limits for attached text.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most one file may hold (larger ones are offered as their first lines).
    pub file_bytes: u64,
    /// The most all of a message's files may hold together.
    pub message_bytes: u64,
}

impl Default for Limits {
    /// About 64k tokens a file and 250k a message: larger would not fit most models' context.
    fn default() -> Self {
        Self { file_bytes: 256 * 1024, message_bytes: 1024 * 1024 }
    }
}

/// What a picked file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// Readable text, with its size in bytes.
    Text { bytes: u64 },
    /// An image, attached as images are (the model must be able to see).
    Image { mime: &'static str, bytes: u64 },
}

/// A text file, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    pub path: PathBuf,
    pub text: String,
    /// The encoding it was read in (`UTF-8` for most).
    pub encoding: &'static str,
    /// Lines kept and lines in the file, when only the first lines were kept.
    pub shown_lines: Option<(usize, usize)>,
    /// The part of the file this is, when it is one passage of it (picked with `#`).
    pub part: Option<super::Part>,
}

impl TextFile {
    /// This file as the model reads it.
    pub fn block(&self) -> String {
        let path = self.path.to_string_lossy();
        match self.part {
            Some(part) => super::part_block(&path, part, &self.text),
            None => super::context_block(&path, &self.text, self.shown_lines),
        }
    }

    /// Its name as the question shows it: the path, with the part's lines or page.
    pub fn name(&self) -> String {
        let path = self.path.to_string_lossy();
        match self.part {
            Some(super::Part::Lines(start, end)) if start == end => format!("{path}:{start}"),
            Some(super::Part::Lines(start, end)) => format!("{path}:{start}-{end}"),
            Some(super::Part::Page(page)) => format!("{path}, page {page}"),
            None => path.into_owned(),
        }
    }
}

/// How much of a file is sniffed for binary content and image signatures.
const SNIFF_BYTES: usize = 8 * 1024;

fn image_mime(head: &[u8]) -> Option<&'static str> {
    match head {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xFF, 0xD8, 0xFF, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("image/webp"),
        _ => None,
    }
}

fn io_error(path: &Path, e: std::io::Error) -> FilesError {
    if e.kind() == std::io::ErrorKind::NotFound {
        FilesError::Missing { path: path.to_owned() }
    } else {
        FilesError::Io { path: path.to_owned(), source: e }
    }
}

fn read_head(path: &Path, limit: u64) -> Result<(Vec<u8>, u64), FilesError> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        return Err(FilesError::NotAFile { path: path.to_owned() });
    }
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let mut head = Vec::new();
    file.take(limit).read_to_end(&mut head).map_err(|e| io_error(path, e))?;
    Ok((head, meta.len()))
}

/// Whether the bytes look binary: a NUL byte, unless a UTF-16 byte-order mark explains it
/// (git's rule, which also catches executables, archives and most media).
fn looks_binary(head: &[u8]) -> bool {
    let utf16 = matches!(Encoding::for_bom(head), Some((e, _)) if e != encoding_rs::UTF_8);
    !utf16 && head[..head.len().min(SNIFF_BYTES)].contains(&0)
}

/// What a file is, from its first bytes, without reading all of it. A binary file is refused.
pub fn inspect(path: &Path) -> Result<FileKind, FilesError> {
    let (head, bytes) = read_head(path, SNIFF_BYTES as u64)?;
    if let Some(mime) = image_mime(&head) {
        return Ok(FileKind::Image { mime, bytes });
    }
    if looks_binary(&head) {
        return Err(FilesError::Binary { path: path.to_owned() });
    }
    Ok(FileKind::Text { bytes })
}

/// Decodes without losing anything: a byte-order mark's encoding, else UTF-8, else the
/// encoding detected from the bytes (Latin-1, Shift_JIS, ...), refusing malformed input.
fn decode(path: &Path, bytes: &[u8]) -> Result<(String, &'static str), FilesError> {
    let (encoding, body) = match Encoding::for_bom(bytes) {
        Some((encoding, bom)) => (encoding, &bytes[bom..]),
        None => match std::str::from_utf8(bytes) {
            Ok(text) => return Ok((text.to_owned(), "UTF-8")),
            Err(_) => {
                let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
                detector.feed(bytes, true);
                (detector.guess(None, chardetng::Utf8Detection::Deny), bytes)
            }
        },
    };
    match encoding.decode_without_bom_handling_and_without_replacement(body) {
        Some(Cow::Borrowed(text)) => Ok((text.to_owned(), encoding.name())),
        Some(Cow::Owned(text)) => Ok((text, encoding.name())),
        None => Err(FilesError::Encoding { path: path.to_owned() }),
    }
}

/// Lines that fit in `limit` bytes of `bytes` (whole lines only, at least one).
fn lines_within(bytes: &[u8], limit: u64) -> usize {
    let cut = &bytes[..bytes.len().min(limit as usize)];
    cut.iter().filter(|&&b| b == b'\n').count().max(1)
}

/// Reads a text file for the model. `first_lines` keeps only that many lines (the offer made
/// when a file is too large); otherwise a file over the limit is refused with that offer.
/// Blocking, and for a part of a large file it reads the whole file to count its lines: run it
/// off the async threads; `stop` ends that count early.
pub fn read_text(
    path: &Path,
    limits: &Limits,
    first_lines: Option<usize>,
    stop: &CancellationToken,
) -> Result<TextFile, FilesError> {
    if let FileKind::Image { .. } = inspect(path)? {
        return Err(FilesError::Binary { path: path.to_owned() });
    }
    // Enough to decode the part asked for: a line cannot make the kept part exceed the limit.
    let (bytes, size) = read_head(path, limits.file_bytes.saturating_add(1))?;
    let whole = size <= limits.file_bytes && (bytes.len() as u64) == size;
    if !whole && first_lines.is_none() {
        let lines_that_fit = lines_within(&bytes, limits.file_bytes);
        return Err(FilesError::TooLarge {
            path: path.to_owned(),
            bytes: size,
            limit: limits.file_bytes,
            lines_that_fit,
        });
    }
    let usable = if whole { &bytes[..] } else { &bytes[..bytes.len().min(limits.file_bytes as usize)] };
    // A part ends at its last full line, so a multi-byte character is never cut.
    let usable = match (whole, usable.iter().rposition(|&b| b == b'\n')) {
        (false, Some(end)) => &usable[..=end],
        _ => usable,
    };
    let (text, encoding) = decode(path, usable)?;
    let Some(keep) = first_lines else {
        return Ok(TextFile { path: path.to_owned(), text, encoding, shown_lines: None, part: None });
    };
    let total = if whole { text.lines().count() } else { count_lines(path, stop)? };
    let kept: Vec<&str> = text.lines().take(keep).collect();
    let shown = (kept.len() < total).then_some((kept.len(), total));
    Ok(TextFile { path: path.to_owned(), text: kept.join("\n"), encoding, shown_lines: shown, part: None })
}

/// Lines in a whole file, streamed (it may be a 5 GB log), until `stop`.
fn count_lines(path: &Path, stop: &CancellationToken) -> Result<usize, FilesError> {
    let mut file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let (mut buf, mut lines, mut last) = (vec![0u8; 64 * 1024], 0usize, b'\n');
    loop {
        if stop.is_cancelled() {
            return Err(FilesError::Stopped { path: path.to_owned() });
        }
        let n = file.read(&mut buf).map_err(|e| io_error(path, e))?;
        if n == 0 {
            break;
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count();
        last = buf[n - 1];
    }
    Ok(lines + usize::from(last != b'\n'))
}

/// Refuses a message whose files together exceed the limit.
pub fn within_message_limit(files: &[TextFile], limits: &Limits) -> Result<(), FilesError> {
    let bytes: u64 = files.iter().map(|f| f.text.len() as u64).sum();
    if bytes > limits.message_bytes {
        return Err(FilesError::MessageTooLarge { bytes, limit: limits.message_bytes });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read nobody stops.
    fn go() -> CancellationToken {
        CancellationToken::new()
    }

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn text_binary_and_images_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let text = write(dir.path(), "a.rs", b"fn main() {}\n");
        assert_eq!(inspect(&text).unwrap(), FileKind::Text { bytes: 13 });
        let bin = write(dir.path(), "a.out", b"\x7fELF\x02\x01\x01\0\0\0rest");
        assert!(matches!(inspect(&bin), Err(FilesError::Binary { .. })));
        assert!(matches!(read_text(&bin, &Limits::default(), None, &go()), Err(FilesError::Binary { .. })));
        let png = write(dir.path(), "shot", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        assert!(matches!(inspect(&png), Ok(FileKind::Image { mime: "image/png", .. })));
        assert!(matches!(inspect(dir.path()), Err(FilesError::NotAFile { .. })));
    }

    #[test]
    fn a_file_that_disappeared_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "gone.txt", b"soon gone");
        std::fs::remove_file(&path).unwrap();
        let err = read_text(&path, &Limits::default(), None, &go()).unwrap_err();
        assert!(matches!(err, FilesError::Missing { .. }));
        assert!(err.to_string().contains("no longer exists"), "{err}");
    }

    #[test]
    fn other_encodings_are_decoded_losslessly_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits::default();
        // UTF-16LE with its mark: NUL bytes, yet text.
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend("héllo wörld\n".encode_utf16().flat_map(u16::to_le_bytes));
        let f = read_text(&write(dir.path(), "u16.txt", &utf16), &limits, None, &go()).unwrap();
        assert_eq!((f.text.as_str(), f.encoding), ("héllo wörld\n", "UTF-16LE"));
        // Latin-1 French prose (not UTF-8): detected and decoded, no replacement characters.
        let latin = b"Le caf\xe9 de la gare est ferm\xe9 le dimanche, d\xe9sol\xe9 pour la g\xeane.\n";
        let f = read_text(&write(dir.path(), "fr.txt", latin), &limits, None, &go()).unwrap();
        assert!(f.text.contains("café") && f.text.contains("gêne"), "{}", f.text);
        assert!(!f.text.contains('\u{FFFD}'));
        assert_eq!(f.encoding, "windows-1252");
        // A UTF-8 mark followed by malformed bytes: refused rather than mangled.
        let bad = write(dir.path(), "bad.txt", b"\xEF\xBB\xBFok \xC3\x28 broken");
        assert!(matches!(read_text(&bad, &limits, None, &go()), Err(FilesError::Encoding { .. })));
    }

    #[test]
    fn a_large_file_is_refused_with_an_offer_of_its_first_lines() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits { file_bytes: 1000, message_bytes: 1500 };
        let body: String = (1..=300).map(|i| format!("line {i:03} é\n")).collect(); // 12 bytes a line
        let path = write(dir.path(), "big.log", body.as_bytes());
        let err = read_text(&path, &limits, None, &go()).unwrap_err();
        let FilesError::TooLarge { lines_that_fit, bytes, .. } = &err else { panic!("{err}") };
        assert_eq!((*lines_that_fit, *bytes), (83, 3600));
        assert!(err.to_string().contains("first 83 lines"), "{err}");
        let part = read_text(&path, &limits, Some(83), &go()).unwrap();
        assert_eq!(part.text.lines().count(), 83);
        assert_eq!(part.text.lines().last(), Some("line 083 é"));
        assert_eq!(part.shown_lines, Some((83, 300)));
        assert!(
            part.block().starts_with(&format!("<file path=\"{}\" lines=\"1-83 of 300\">", path.display()))
        );
        // Two parts over the message's limit are refused together.
        let again = read_text(&path, &limits, Some(83), &go()).unwrap();
        assert!(within_message_limit(std::slice::from_ref(&part), &limits).is_ok());
        let err = within_message_limit(&[part, again], &limits).unwrap_err();
        assert!(matches!(err, FilesError::MessageTooLarge { bytes: 1990, limit: 1500 }), "{err}");
        // Counting a large file's lines stops when the question is stopped.
        let stopped = CancellationToken::new();
        stopped.cancel();
        let err = read_text(&path, &limits, Some(83), &stopped).unwrap_err();
        assert!(matches!(err, FilesError::Stopped { .. }), "{err}");
        // A small file asked for by its first lines is kept whole and not marked as a part.
        let small = write(dir.path(), "small.txt", b"a\nb\n");
        assert_eq!(read_text(&small, &limits, Some(10), &go()).unwrap().shown_lines, None);
    }
}
