//! The tools' arguments, whose doc comments are the JSON schema the model reads.

use rmcp::schemars;
use serde::Deserialize;

use crate::calendar::EventFields;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Gmail search syntax, as in Gmail's search box: `from:ana is:unread`, `subject:invoice
    /// newer_than:7d`, `has:attachment label:receipts`, `in:sent after:2026/03/01`.
    pub query: String,
    /// How many messages to return (1-50, default 10).
    pub max_results: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadMessageArgs {
    /// The message id, from gmail_search or a thread.
    pub message_id: String,
    /// The most characters of body text to return (1000-100000, default 20000).
    pub max_chars: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadThreadArgs {
    /// The thread id, from gmail_search.
    pub thread_id: String,
    /// The most characters of body text per message (500-20000, default 3000).
    pub max_chars_per_message: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ComposeArgs {
    /// Recipients: `name@example.org` or `Name <name@example.org>`.
    #[serde(default)]
    pub to: Vec<String>,
    /// Copy recipients, in the same form.
    #[serde(default)]
    pub cc: Vec<String>,
    /// Blind-copy recipients, in the same form.
    #[serde(default)]
    pub bcc: Vec<String>,
    /// The subject line (one line).
    pub subject: String,
    /// The message text, plain text.
    pub body: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReplyArgs {
    /// The id of the message to answer.
    pub message_id: String,
    /// The reply's text, plain text (the original is not quoted).
    pub body: String,
    /// Also send to everyone else the original went to (never to yourself). Default false.
    #[serde(default)]
    pub reply_all: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct LabelArgs {
    /// The message id.
    pub message_id: String,
    /// Labels to add, by name or id (`Receipts`, `STARRED`, `IMPORTANT`).
    #[serde(default)]
    pub add: Vec<String>,
    /// Labels to remove, by name or id (`UNREAD` marks read, `INBOX` archives).
    #[serde(default)]
    pub remove: Vec<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct MessageIdArgs {
    /// The message id.
    pub message_id: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListEventsArgs {
    /// Start of the range: a date (2026-03-09) or date and time (2026-03-09T14:00), in the user's
    /// time zone unless an offset is given. Default: today.
    pub start: Option<String>,
    /// End of the range: a date (that day included) or a date and time. Default: a week after the start.
    pub end: Option<String>,
    /// Free text to find in titles, descriptions, places and attendees.
    pub query: Option<String>,
    /// How many events to return (1-250, default 50).
    pub max_results: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RangeArgs {
    /// Start: a date or date and time in the user's time zone. Default: today.
    pub start: Option<String>,
    /// End: a date (included) or date and time. Default: a week after the start.
    pub end: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EventArgs {
    /// The event's title.
    pub title: Option<String>,
    /// Start: a date (2026-03-09) for an all-day event, else a date and time (2026-03-09T14:00) read
    /// in `time_zone` (default the user's) unless it has an offset.
    pub start: Option<String>,
    /// End: a date and time; for an all-day event, its last day (included). Default: one hour, or
    /// `duration_minutes`, after the start.
    pub end: Option<String>,
    /// Length in minutes, instead of `end`.
    pub duration_minutes: Option<u32>,
    /// Whether it is an all-day event (default: when `start` is a date).
    pub all_day: Option<bool>,
    /// IANA time zone for the event (Europe/Paris); default the user's.
    pub time_zone: Option<String>,
    /// Where it happens.
    pub location: Option<String>,
    /// Notes for the event.
    pub description: Option<String>,
    /// Guests' email addresses (replaces the list when updating).
    pub attendees: Option<Vec<String>>,
    /// Repetition, as RFC 5545 lines: `RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10`, `EXDATE;…`.
    pub recurrence: Option<Vec<String>>,
    /// Email the guests about it (default true).
    pub notify_attendees: Option<bool>,
}

impl EventArgs {
    pub fn fields(self) -> (EventFields, bool) {
        let fields = EventFields {
            title: self.title,
            start: self.start,
            end: self.end,
            duration_minutes: self.duration_minutes,
            all_day: self.all_day,
            time_zone: self.time_zone,
            location: self.location,
            description: self.description,
            attendees: self.attendees,
            recurrence: self.recurrence,
        };
        (fields, self.notify_attendees.unwrap_or(true))
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct UpdateEventArgs {
    /// The event id, from calendar_list_events (an instance of a repeating event changes only
    /// that occurrence).
    pub event_id: String,
    /// The fields to change; those not given stay as they are.
    #[serde(flatten)]
    pub change: EventArgs,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DeleteEventArgs {
    /// The event id (an instance of a repeating event deletes only that occurrence).
    pub event_id: String,
    /// Email the guests that it is cancelled (default true).
    pub notify_attendees: Option<bool>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct QuickAddArgs {
    /// A sentence, as typed into Google Calendar: "Lunch with Ana tomorrow 1pm at Café Luz".
    pub text: String,
}
