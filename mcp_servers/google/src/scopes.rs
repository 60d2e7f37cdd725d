//! Which tools the granted OAuth scopes allow. A tool is listed when, for each Google method it
//! calls, one of the scopes Google documents for that method was granted, so the model never sees
//! a tool that could only fail with 403. (`gmail.metadata` is left out of reading: with it Gmail
//! refuses search queries and message bodies.)

use std::collections::BTreeSet;

const MAIL: &str = "https://mail.google.com/";
const GMAIL_MODIFY: &str = "https://www.googleapis.com/auth/gmail.modify";
const GMAIL_READONLY: &str = "https://www.googleapis.com/auth/gmail.readonly";
const GMAIL_METADATA: &str = "https://www.googleapis.com/auth/gmail.metadata";
const GMAIL_LABELS: &str = "https://www.googleapis.com/auth/gmail.labels";
const GMAIL_COMPOSE: &str = "https://www.googleapis.com/auth/gmail.compose";
const GMAIL_SEND: &str = "https://www.googleapis.com/auth/gmail.send";
const CALENDAR: &str = "https://www.googleapis.com/auth/calendar";
const CALENDAR_READONLY: &str = "https://www.googleapis.com/auth/calendar.readonly";
const CALENDAR_EVENTS: &str = "https://www.googleapis.com/auth/calendar.events";
const CALENDAR_EVENTS_READONLY: &str = "https://www.googleapis.com/auth/calendar.events.readonly";
const CALENDAR_EVENTS_OWNED: &str = "https://www.googleapis.com/auth/calendar.events.owned";
const CALENDAR_EVENTS_OWNED_READONLY: &str = "https://www.googleapis.com/auth/calendar.events.owned.readonly";
const CALENDAR_FREEBUSY: &str = "https://www.googleapis.com/auth/calendar.freebusy";
const CALENDAR_EVENTS_FREEBUSY: &str = "https://www.googleapis.com/auth/calendar.events.freebusy";

/// messages.list with `q`, messages.get and threads.get in full.
const READ_MAIL: &[&str] = &[MAIL, GMAIL_MODIFY, GMAIL_READONLY];
/// messages.get in the metadata format (headers only).
const READ_HEADERS: &[&str] = &[MAIL, GMAIL_MODIFY, GMAIL_READONLY, GMAIL_METADATA];
const LIST_LABELS: &[&str] = &[MAIL, GMAIL_MODIFY, GMAIL_READONLY, GMAIL_METADATA, GMAIL_LABELS];
const CREATE_DRAFT: &[&str] = &[MAIL, GMAIL_MODIFY, GMAIL_COMPOSE];
const SEND_MAIL: &[&str] = &[MAIL, GMAIL_MODIFY, GMAIL_COMPOSE, GMAIL_SEND];
/// messages.modify and messages.trash.
const MODIFY_MAIL: &[&str] = &[MAIL, GMAIL_MODIFY];
const READ_EVENTS: &[&str] = &[
    CALENDAR,
    CALENDAR_READONLY,
    CALENDAR_EVENTS,
    CALENDAR_EVENTS_READONLY,
    CALENDAR_EVENTS_OWNED,
    CALENDAR_EVENTS_OWNED_READONLY,
];
const FREE_BUSY: &[&str] = &[CALENDAR, CALENDAR_READONLY, CALENDAR_FREEBUSY, CALENDAR_EVENTS_FREEBUSY];
/// events.insert, patch, delete, quickAdd (and get, to keep an event's length when it moves).
const WRITE_EVENTS: &[&str] = &[CALENDAR, CALENDAR_EVENTS, CALENDAR_EVENTS_OWNED];

/// What a 403 says the user should add, in words and by the service's name in Settings ->
/// Connections (the names `google::Service::describe` gives in the app).
pub mod need {
    pub const READ_MAIL: &str = "read your mail (\"Read mail\")";
    pub const LABELS: &str = "see your mail labels (\"Read mail\")";
    pub const DRAFT: &str = "write drafts (\"Write mail\")";
    pub const SEND: &str = "send mail (\"Write mail\")";
    pub const MODIFY: &str = "change labels and move mail to the trash (\"Organise mail\")";
    pub const READ_EVENTS: &str = "see your calendar (\"See calendar\")";
    pub const FREE_BUSY: &str = "see when you are busy (\"See calendar\")";
    pub const WRITE_EVENTS: &str = "change your calendar (\"Change calendar\")";
}

/// Each tool and the scope sets it needs: one scope of every set.
pub const TOOLS: &[(&str, &[&[&str]])] = &[
    ("gmail_search", &[READ_MAIL]),
    ("gmail_read_message", &[READ_MAIL]),
    ("gmail_read_thread", &[READ_MAIL]),
    ("gmail_list_labels", &[LIST_LABELS]),
    ("gmail_create_draft", &[CREATE_DRAFT]),
    ("gmail_send", &[SEND_MAIL]),
    // Reads the original's headers, then sends.
    ("gmail_reply", &[READ_HEADERS, SEND_MAIL]),
    // Label names are looked up with labels.list, which gmail.modify allows too.
    ("gmail_modify_labels", &[MODIFY_MAIL]),
    ("gmail_trash", &[MODIFY_MAIL]),
    ("calendar_list_events", &[READ_EVENTS]),
    ("calendar_free_busy", &[FREE_BUSY]),
    ("calendar_create_event", &[WRITE_EVENTS]),
    ("calendar_update_event", &[WRITE_EVENTS]),
    ("calendar_delete_event", &[WRITE_EVENTS]),
    ("calendar_quick_add", &[WRITE_EVENTS]),
];

/// The granted scopes, from the space-separated list the app passes.
#[derive(Debug, Clone, Default)]
pub struct Granted(BTreeSet<String>);

impl Granted {
    pub fn parse(list: &str) -> Self {
        Self(list.split_whitespace().map(str::to_owned).collect())
    }

    pub fn allows(&self, tool: &str) -> bool {
        TOOLS
            .iter()
            .find(|(name, _)| *name == tool)
            .is_some_and(|(_, sets)| sets.iter().all(|set| set.iter().any(|s| self.0.contains(*s))))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(scopes: &str) -> Vec<&'static str> {
        let granted = Granted::parse(scopes);
        TOOLS.iter().map(|(name, _)| *name).filter(|t| granted.allows(t)).collect()
    }

    #[test]
    fn read_only_scopes_offer_no_sending_or_changing() {
        let tools = allowed(&format!("{GMAIL_READONLY} {CALENDAR_READONLY}"));
        assert_eq!(
            tools,
            [
                "gmail_search",
                "gmail_read_message",
                "gmail_read_thread",
                "gmail_list_labels",
                "calendar_list_events",
                "calendar_free_busy"
            ]
        );
    }

    #[test]
    fn sending_alone_cannot_reply_and_full_scopes_offer_everything() {
        assert_eq!(allowed(GMAIL_SEND), ["gmail_send"]);
        assert_eq!(
            allowed(&format!("{GMAIL_SEND} {GMAIL_METADATA}")),
            ["gmail_list_labels", "gmail_send", "gmail_reply"]
        );
        assert_eq!(allowed(&format!("{MAIL} {CALENDAR}")).len(), TOOLS.len());
        assert_eq!(
            allowed(&format!("{GMAIL_MODIFY} {CALENDAR_EVENTS}")).len(),
            TOOLS.len() - 1,
            "no free/busy"
        );
        assert!(allowed("").is_empty());
    }
}
