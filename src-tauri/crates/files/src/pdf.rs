//! The text of a PDF (the web server's `read_page`, the knowledge folders), with lopdf's own
//! text extraction (pure Rust; no font programs parsed, so little to build): the title from the
//! Info dictionary, the page count and each page's text. A PDF is untrusted input, so reading
//! is bounded: every stream's inflated size is capped, pages are read one at a time and reading
//! stops once there is enough text or the time budget is spent, and a panic inside the parser
//! becomes the damaged-PDF error.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use lopdf::xref::XrefRecovery;
use lopdf::{Document, LoadOptions};

/// Why a PDF's text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PdfError {
    #[error("this PDF has no text layer; it may be scanned images")]
    NoText,
    #[error("this PDF is encrypted and needs a password to open, so its text cannot be read")]
    Encrypted,
    #[error("this PDF is damaged or not a valid PDF ({0}); try another copy of the document")]
    Corrupt(String),
    #[error("reading this PDF took longer than {0} s without finding text; it may be too large or complex")]
    Timeout(u64),
    #[error("page {asked}: the document has {pages} pages")]
    PastTheEnd { asked: usize, pages: usize },
}

/// The most bytes one stream (or one page's content) may inflate to: a few megabytes of
/// compressed PDF could otherwise expand to gigabytes.
const MAX_INFLATED: usize = 64 * 1024 * 1024;

/// What was read of a PDF.
#[derive(Debug)]
pub struct PdfText {
    /// The Info dictionary's title, if it has a non-blank one.
    pub title: Option<String>,
    pub page_count: usize,
    /// The number of the first page read (1 unless a later one was asked for).
    pub first_page: usize,
    /// The text of the pages read, from `first_page` on; fewer than the rest when reading
    /// stopped early. A page without text is an empty string.
    pub pages: Vec<String>,
    /// Reading stopped before the last page because the time budget was spent.
    pub out_of_time: bool,
    /// The file was damaged (cut short, a broken index) and this is what could be recovered.
    pub repaired: bool,
}

/// Reads `bytes` as a PDF from page `first_page` (1-based) on. Stops after the page that brings
/// the text past `enough_chars` characters, or when `budget` has passed.
pub fn read(
    bytes: &[u8],
    first_page: usize,
    enough_chars: usize,
    budget: Duration,
) -> Result<PdfText, PdfError> {
    // lopdf reports most damage as errors, but a parser fed hostile input can still panic:
    // caught here, and no crash report for it.
    catch_unwind(AssertUnwindSafe(|| {
        perch_crash::expected(|| read_unguarded(bytes, first_page, enough_chars, budget))
    }))
    .unwrap_or_else(|_| Err(PdfError::Corrupt("the PDF reader could not make sense of it".into())))
}

fn read_unguarded(
    bytes: &[u8],
    first_page: usize,
    enough_chars: usize,
    budget: Duration,
) -> Result<PdfText, PdfError> {
    let started = Instant::now();
    let options = LoadOptions { max_decompressed_size: Some(MAX_INFLATED), ..LoadOptions::default() };
    let doc = Document::load_mem_with_options(bytes, options).map_err(load_error)?;
    // lopdf opens a PDF encrypted with an empty user password (the common "no copying"
    // protection) by itself; one that needs a real password stays encrypted.
    if doc.is_encrypted() && !doc.was_encrypted() {
        return Err(PdfError::Encrypted);
    }
    let numbers: Vec<u32> = doc.get_pages().into_keys().collect();
    if numbers.is_empty() {
        return Err(PdfError::Corrupt("no pages found".into()));
    }
    let first_page = first_page.max(1);
    if first_page > numbers.len() {
        return Err(PdfError::PastTheEnd { asked: first_page, pages: numbers.len() });
    }
    let mut pages = Vec::new();
    let mut chars = 0;
    let mut out_of_time = false;
    let mut first_error = None;
    for &number in &numbers[first_page - 1..] {
        if chars > enough_chars {
            break;
        }
        if started.elapsed() >= budget {
            out_of_time = true;
            break;
        }
        // Chunk by chunk, so one font that cannot be decoded does not lose the page's other text.
        let mut text = String::new();
        for chunk in doc.extract_text_chunks_with_limit(&[number], MAX_INFLATED) {
            match chunk {
                Ok(chunk) => text.push_str(&chunk),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        let text = tidy(&text);
        chars += text.chars().count();
        pages.push(text);
    }
    let repaired = matches!(doc.xref_recovery, Some(XrefRecovery::Reconstructed));
    if chars == 0 {
        return Err(if out_of_time {
            PdfError::Timeout(budget.as_secs())
        } else if let Some(error) = first_error {
            PdfError::Corrupt(format!("its text could not be decoded: {error}"))
        } else if repaired {
            // Pieced together from what was left of the file: the text may be in the lost part.
            PdfError::Corrupt("it is cut short or its index is broken, and no text survived".into())
        } else {
            PdfError::NoText
        });
    }
    Ok(PdfText {
        title: info_title(&doc),
        page_count: numbers.len(),
        first_page,
        pages,
        out_of_time,
        repaired,
    })
}

fn load_error(error: lopdf::Error) -> PdfError {
    match error {
        lopdf::Error::InvalidPassword | lopdf::Error::Decryption(_) => PdfError::Encrypted,
        lopdf::Error::Unimplemented(what) => PdfError::Corrupt(format!("unsupported: {what}")),
        other => PdfError::Corrupt(other.to_string()),
    }
}

/// The document's title from its Info dictionary, whitespace collapsed.
fn info_title(doc: &Document) -> Option<String> {
    let (_, info) = doc.dereference(doc.trailer.get(b"Info").ok()?).ok()?;
    let (_, title) = doc.dereference(info.as_dict().ok()?.get(b"Title").ok()?).ok()?;
    let title = lopdf::decode_text_string(title).ok()?;
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then_some(title)
}

/// Trailing spaces off every line, runs of blank lines down to one, no blank edges, and the
/// typographic ligatures fonts map glyphs to ("ﬁeld") spelled out, so the text reads and
/// searches as typed.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    let text = unligature(text);
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            blank_run += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_run > 0 { "\n\n" } else { "\n" });
        }
        blank_run = 0;
        out.push_str(line);
    }
    out
}

fn unligature(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use lopdf::encryption::{EncryptionState, EncryptionVersion, Permissions};
    use lopdf::{Object, StringFormat};

    use super::*;

    /// Real-world PDFs (compressed streams, subset TrueType fonts with ToUnicode maps), printed
    /// once by `chromium --headless --no-pdf-header-footer --print-to-pdf` from the .html files
    /// beside them: two pages of text, and a page whose only content is a picture of text.
    const FIELD_NOTES: &[u8] = include_bytes!("../../../../tests/fixtures/pdf/field-notes.pdf");
    const SCANNED: &[u8] = include_bytes!("../../../../tests/fixtures/pdf/scanned.pdf");
    const PLENTY: Duration = Duration::from_secs(30);

    fn read_all(bytes: &[u8]) -> Result<PdfText, PdfError> {
        read(bytes, 1, usize::MAX, PLENTY)
    }

    /// The field notes re-saved encrypted (RC4, 128 bits) with `user_password` to open them.
    fn encrypted(user_password: &str) -> Vec<u8> {
        let mut doc = Document::load_mem(FIELD_NOTES).unwrap();
        let id = Object::String(b"perch-test-id-01".to_vec(), StringFormat::Hexadecimal);
        doc.trailer.set("ID", Object::Array(vec![id.clone(), id]));
        let version = EncryptionVersion::V2 {
            document: &doc,
            owner_password: "owner",
            user_password,
            key_length: 128,
            permissions: Permissions::all(),
        };
        let state = EncryptionState::try_from(version).unwrap();
        doc.encrypt(&state).unwrap();
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    #[test]
    fn reads_the_title_and_each_page() {
        let doc = read_all(FIELD_NOTES).unwrap();
        assert_eq!(doc.title.as_deref(), Some("Kestrel Field Notes"));
        assert_eq!(doc.page_count, 2);
        assert_eq!(doc.pages.len(), 2);
        assert!(doc.pages[0].contains("How kestrels hover"), "{:?}", doc.pages);
        assert!(doc.pages[0].contains("Kestrels hover into the wind while hunting."), "{:?}", doc.pages);
        assert!(!doc.pages[0].contains("Voles"), "{:?}", doc.pages);
        assert!(doc.pages[1].contains("Voles are the main prey in winter."), "{:?}", doc.pages);
        assert!(!doc.out_of_time && !doc.repaired);
    }

    #[test]
    fn recovers_the_text_of_a_file_missing_its_end() {
        // Without its trailer the file has no index and no Info dictionary, but the pages survive.
        let doc = read_all(&FIELD_NOTES[..FIELD_NOTES.len() - 100]).unwrap();
        assert!(doc.repaired);
        assert_eq!(doc.title, None);
        assert!(doc.pages[1].contains("Voles are the main prey in winter."), "{:?}", doc.pages);
    }

    #[test]
    fn stops_reading_once_there_is_enough_text() {
        let doc = read(FIELD_NOTES, 1, 10, PLENTY).unwrap();
        assert_eq!((doc.page_count, doc.pages.len()), (2, 1));
    }

    #[test]
    fn a_spent_time_budget_stops_reading() {
        assert!(matches!(read(FIELD_NOTES, 1, usize::MAX, Duration::ZERO), Err(PdfError::Timeout(0))));
    }

    #[test]
    fn says_why_a_pdf_cannot_be_read() {
        assert!(matches!(read_all(SCANNED), Err(PdfError::NoText)));
        assert!(matches!(read_all(&encrypted("secret")), Err(PdfError::Encrypted)));
        for damaged in [&FIELD_NOTES[..FIELD_NOTES.len() / 3], b"%PDF-1.7\n%%EOF\n", b"not a pdf at all"] {
            assert!(matches!(read_all(damaged), Err(PdfError::Corrupt(_))), "{:?}", read_all(damaged));
        }
    }

    #[test]
    fn opens_a_pdf_protected_only_against_changes() {
        // An empty user password: viewers open it without asking, and so do we.
        let doc = read_all(&encrypted("")).unwrap();
        assert!(doc.pages[1].contains("Voles are the main prey"), "{:?}", doc.pages);
    }

    #[test]
    fn tidies_lines() {
        assert_eq!(tidy("  a  \n\n\n\nb\nc \n\n"), "  a\n\nb\nc");
        assert_eq!(tidy(" \n \n"), "");
        assert_eq!(tidy("\u{FB01}eld \u{FB02}ight o\u{FB00}ice"), "field flight office");
    }
}
