//! Calendar v3 under `/calendar/v3/`: the primary calendar's events (list, get, insert, patch,
//! update, delete), the time zone setting and the calendar list, each method behind the scopes
//! Google documents for it. quickAdd and freeBusy are in [`quick`].
//! (Over 500 lines: one Google API's methods, each answering as the real one does.)

mod quick;

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use crate::http::{Request, Response};
use crate::when::{self, When};
use crate::{State, errors, oauth};

pub(crate) const CALENDAR: &str = "https://www.googleapis.com/auth/calendar";
pub(crate) const READONLY: &str = "https://www.googleapis.com/auth/calendar.readonly";
pub(crate) const EVENTS: &str = "https://www.googleapis.com/auth/calendar.events";
pub(crate) const EVENTS_READONLY: &str = "https://www.googleapis.com/auth/calendar.events.readonly";
pub(crate) const EVENTS_OWNED: &str = "https://www.googleapis.com/auth/calendar.events.owned";
pub(crate) const EVENTS_OWNED_READONLY: &str =
    "https://www.googleapis.com/auth/calendar.events.owned.readonly";
pub(crate) const APP_CREATED: &str = "https://www.googleapis.com/auth/calendar.app.created";

const READ_EVENTS: &[&str] =
    &[CALENDAR, READONLY, EVENTS, EVENTS_READONLY, EVENTS_OWNED, EVENTS_OWNED_READONLY];
pub(crate) const WRITE_EVENTS: &[&str] = &[CALENDAR, EVENTS, EVENTS_OWNED, APP_CREATED];
const SETTINGS: &[&str] = &[CALENDAR, READONLY, "https://www.googleapis.com/auth/calendar.settings.readonly"];
const CALENDAR_LIST: &[&str] = &[
    CALENDAR,
    READONLY,
    "https://www.googleapis.com/auth/calendar.calendarlist",
    "https://www.googleapis.com/auth/calendar.calendarlist.readonly",
];

/// Fields the server owns: a client's values for them are ignored.
const SERVER_FIELDS: &[&str] =
    &["kind", "etag", "id", "htmlLink", "created", "updated", "creator", "organizer", "iCalUID", "sequence"];

pub(crate) struct Calendar {
    pub events: Vec<Value>,
    pub zone_name: String,
    /// The emails Google sent guests (invitations, changes, cancellations), in order.
    pub emailed: Vec<crate::GuestEmail>,
    revision: u64,
}

pub(crate) fn check(s: &State, request: &Request, accepted: &[&str], method: &str) -> Result<(), Response> {
    oauth::check(s, request, accepted, "calendar-json.googleapis.com", &format!("calendar.v3.{method}"))
        .map(|_| ())
}

impl Calendar {
    pub fn seeded() -> Self {
        let mut calendar = Calendar {
            events: Vec::new(),
            zone_name: crate::CALENDAR_TIME_ZONE.to_owned(),
            emailed: Vec::new(),
            revision: 0,
        };
        calendar.events = crate::seed_calendar::events(&calendar.zone());
        calendar
    }

    pub fn zone(&self) -> TimeZone {
        when::zone(&self.zone_name).unwrap_or(TimeZone::UTC)
    }

    pub fn etag(&mut self) -> String {
        self.revision += 1;
        format!("\"{}\"", 3_480_000_000_000_000u64 + self.revision * 2_000)
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.events.iter().position(|e| e["id"] == id)
    }
}

/// `primary` or the account's address; other calendars do not exist here.
fn is_primary(calendar_id: &str) -> bool {
    calendar_id == "primary" || calendar_id.eq_ignore_ascii_case(crate::USER_EMAIL)
}

pub(crate) fn route(s: &mut State, request: &Request) -> Response {
    let rest = request.path.trim_start_matches("/calendar/v3/");
    let segments: Vec<&str> = rest.split('/').collect();
    match (request.method.as_str(), segments.as_slice()) {
        ("GET", ["users", "me", "settings", "timezone"]) => setting(s, request),
        ("GET", ["users", "me", "calendarList"]) => calendar_list(s, request),
        ("POST", ["freeBusy"]) => quick::free_busy(s, request),
        (_, ["calendars", calendar_id, "events", ..]) if !is_primary(calendar_id) => {
            match check(s, request, READ_EVENTS, "Events") {
                Err(refusal) => refusal,
                Ok(()) => errors::calendar_not_found(),
            }
        }
        ("GET", ["calendars", _, "events"]) => list(s, request),
        ("POST", ["calendars", _, "events"]) => insert(s, request),
        ("POST", ["calendars", _, "events", "quickAdd"]) => quick::quick_add(s, request),
        ("GET", ["calendars", _, "events", id]) => get(s, request, id),
        ("PATCH", ["calendars", _, "events", id]) => change(s, request, id, true),
        ("PUT", ["calendars", _, "events", id]) => change(s, request, id, false),
        ("DELETE", ["calendars", _, "events", id]) => delete(s, request, id),
        _ => errors::calendar_not_found(),
    }
}

fn setting(s: &mut State, request: &Request) -> Response {
    if let Err(refusal) = check(s, request, SETTINGS, "Settings.Get") {
        return refusal;
    }
    Response::json(
        200,
        &json!({
            "kind": "calendar#setting",
            "etag": "\"1710000000000000\"",
            "id": "timezone",
            "value": s.calendar.zone_name,
        }),
    )
}

fn calendar_list(s: &mut State, request: &Request) -> Response {
    if let Err(refusal) = check(s, request, CALENDAR_LIST, "CalendarList.List") {
        return refusal;
    }
    Response::json(
        200,
        &json!({
            "kind": "calendar#calendarList",
            "etag": "\"p33c9l7rt0e3fg0o\"",
            "items": [{
                "kind": "calendar#calendarListEntry",
                "id": crate::USER_EMAIL,
                "summary": crate::USER_EMAIL,
                "timeZone": s.calendar.zone_name,
                "accessRole": "owner",
                "primary": true,
                "selected": true,
                "defaultReminders": [{ "method": "popup", "minutes": 10 }],
            }],
        }),
    )
}

/// The zone an answer's times are written in: the `timeZone` parameter or the calendar's.
fn answer_zone(s: &State, request: &Request) -> Result<TimeZone, Response> {
    match request.param("timeZone") {
        None | Some("") => Ok(s.calendar.zone()),
        Some(name) => when::zone(name).ok_or_else(|| errors::bad_request("Invalid time zone definition.")),
    }
}

fn matches_text(event: &Value, q: &str) -> bool {
    let q = q.to_lowercase();
    let mut haystack = String::new();
    for field in ["summary", "description", "location"] {
        haystack.push_str(event[field].as_str().unwrap_or_default());
        haystack.push(' ');
    }
    for attendee in event["attendees"].as_array().into_iter().flatten() {
        haystack.push_str(attendee["email"].as_str().unwrap_or_default());
        haystack.push(' ');
        haystack.push_str(attendee["displayName"].as_str().unwrap_or_default());
        haystack.push(' ');
    }
    let haystack = haystack.to_lowercase();
    q.split_whitespace().all(|word| haystack.contains(word))
}

fn list(s: &mut State, request: &Request) -> Response {
    if let Err(refusal) = check(s, request, READ_EVENTS, "Events.List") {
        return refusal;
    }
    let bound = |name: &str| -> Result<Option<Timestamp>, Response> {
        match request.param(name) {
            None | Some("") => Ok(None),
            // Google wants RFC 3339 with an offset here; a bare local time is a Bad Request.
            Some(value) => {
                when::parse_instant(value).map(Some).ok_or_else(|| errors::bad_request("Bad Request"))
            }
        }
    };
    let (from, to) = match (bound("timeMin"), bound("timeMax")) {
        (Ok(from), Ok(to)) => (from, to),
        (Err(refusal), _) | (_, Err(refusal)) => return refusal,
    };
    if let (Some(from), Some(to)) = (from, to)
        && to <= from
    {
        return errors::api(400, "The specified time range is empty.", "timeRangeEmpty");
    }
    let single = request.flag("singleEvents");
    match request.param("orderBy") {
        None | Some("updated") => {}
        Some("startTime") if single => {}
        Some("startTime") => {
            return errors::bad_request("The requested ordering is not available for the particular query.");
        }
        Some(other) => return errors::invalid_argument(&format!("Invalid value for orderBy: {other}")),
    }
    let out_zone = match answer_zone(s, request) {
        Ok(zone) => zone,
        Err(refusal) => return refusal,
    };
    let max = match request.param("maxResults") {
        None => 250,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => n.min(2500),
            _ => return errors::invalid_argument("Invalid value for maxResults"),
        },
    };
    let start = match request.param("pageToken") {
        None | Some("") => 0,
        Some(token) => match token.strip_prefix("EjYK").and_then(|t| t.parse::<usize>().ok()) {
            Some(n) => n,
            None => return errors::bad_request("Invalid page token"),
        },
    };
    let show_deleted = request.flag("showDeleted");
    let q = request.param("q").filter(|q| !q.trim().is_empty());
    let calendar_zone = s.calendar.zone();
    let mut items: Vec<when::Instance> = s
        .calendar
        .events
        .iter()
        .filter(|e| show_deleted || e["status"] != "cancelled")
        .filter(|e| q.is_none_or(|q| matches_text(e, q)))
        .flat_map(|e| when::instances(e, &calendar_zone, &out_zone, from, to, single))
        .collect();
    if request.param("orderBy") == Some("updated") {
        items.sort_by(|a, b| a.json["updated"].as_str().cmp(&b.json["updated"].as_str()));
    } else {
        items.sort_by_key(|i| (i.start, i.end));
    }
    let total = items.len();
    let page: Vec<Value> = items.into_iter().skip(start).take(max).map(|i| i.json).collect();
    let updated =
        s.calendar.events.iter().filter_map(|e| e["updated"].as_str()).max().unwrap_or_default().to_owned();
    let mut body = json!({
        "kind": "calendar#events",
        "etag": format!("\"p3{:014}\"", s.calendar.revision),
        "summary": crate::USER_EMAIL,
        "description": "",
        "updated": updated,
        "timeZone": s.calendar.zone_name,
        "accessRole": "owner",
        "defaultReminders": [{ "method": "popup", "minutes": 10 }],
        "items": page,
    });
    if start + max < total {
        body["nextPageToken"] = json!(format!("EjYK{}", start + max));
    } else {
        body["nextSyncToken"] = json!(format!("CPDAlvWDx4EDEPDAlvWDx4EDGAUggICA{}", s.calendar.revision));
    }
    Response::json(200, &body)
}

fn get(s: &mut State, request: &Request, id: &str) -> Response {
    if let Err(refusal) = check(s, request, READ_EVENTS, "Events.Get") {
        return refusal;
    }
    let out_zone = match answer_zone(s, request) {
        Ok(zone) => zone,
        Err(refusal) => return refusal,
    };
    if let Some(i) = s.calendar.position(id) {
        return Response::json(200, &when::render(&s.calendar.events[i], &out_zone));
    }
    // An instance id: `<series id>_<start>`.
    let zone = s.calendar.zone();
    let instance = id.split_once('_').and_then(|(series, _)| {
        let event = s.calendar.events.iter().find(|e| e["id"] == series)?;
        let horizon = Timestamp::now() + SignedDuration::from_hours(24 * 366 * 3);
        when::instances(event, &zone, &out_zone, None, Some(horizon), true)
            .into_iter()
            .find(|i| i.json["id"] == id)
    });
    match instance {
        Some(instance) => Response::json(200, &instance.json),
        None => errors::calendar_not_found(),
    }
}

/// Google's event ids: base32hex (a-v, 0-9), 5 to 1024 characters.
fn valid_id(id: &str) -> bool {
    (5..=1024).contains(&id.len()) && id.bytes().all(|b| matches!(b, b'a'..=b'v' | b'0'..=b'9'))
}

/// Hex is within base32hex, so a fresh hex string is a valid id.
pub(crate) fn new_id(s: &mut State) -> String {
    s.fresh(26)
}

/// Checks what a client sent for an event and fills in attendees' defaults.
fn validate(event: &mut Value) -> Result<(), Response> {
    let (start, _) = when::parse_span(event)?;
    let recurring = event["recurrence"].as_array().is_some_and(|r| !r.is_empty());
    if recurring && matches!(start, When::At(_)) && event["start"]["timeZone"].as_str().is_none() {
        // The zone the series is expanded in: Google requires it for recurring events.
        return Err(errors::required("Missing time zone definition for start time."));
    }
    for line in event["recurrence"].as_array().into_iter().flatten() {
        let line = line.as_str().unwrap_or_default();
        let known = ["RRULE:", "EXRULE:", "RDATE", "EXDATE"].iter().any(|p| line.starts_with(p));
        let rule_ok = !line.starts_with("RRULE:") || line.contains("FREQ=");
        if !known || !rule_ok {
            return Err(errors::api(400, "Invalid recurrence rule.", "invalid"));
        }
    }
    if let Some(attendees) = event["attendees"].as_array_mut() {
        for attendee in attendees {
            let Some(email) = attendee["email"].as_str().map(str::to_owned) else {
                return Err(errors::required("Missing attendee email."));
            };
            if attendee["responseStatus"].is_null() {
                attendee["responseStatus"] = json!("needsAction");
            }
            if email.eq_ignore_ascii_case(crate::USER_EMAIL) {
                attendee["self"] = json!(true);
                attendee["organizer"] = json!(true);
                attendee["responseStatus"] = json!("accepted");
            }
        }
    }
    Ok(())
}

/// A new event with the fields Google fills in.
pub(crate) fn create(s: &mut State, mut event: Value) -> Result<Value, Response> {
    let Some(fields) = event.as_object_mut() else {
        return Err(errors::bad_request("Bad Request"));
    };
    let id = match fields.get("id").and_then(Value::as_str) {
        Some(id) if !valid_id(id) => return Err(errors::api(400, "Invalid resource id value.", "invalid")),
        Some(id) if s.calendar.position(id).is_some() => {
            return Err(errors::api(409, "The requested identifier already exists.", "duplicate"));
        }
        Some(id) => id.to_owned(),
        None => new_id(s),
    };
    for field in SERVER_FIELDS {
        fields.remove(*field);
    }
    validate(&mut event)?;
    let now = when::stamp(Timestamp::now());
    let me = json!({ "email": crate::USER_EMAIL, "self": true });
    let mut stored = Map::new();
    stored.insert("kind".into(), json!("calendar#event"));
    stored.insert("etag".into(), json!(s.calendar.etag()));
    stored.insert("id".into(), json!(id));
    stored.insert("status".into(), json!("confirmed"));
    stored.insert("htmlLink".into(), json!(format!("https://www.google.com/calendar/event?eid={id}")));
    stored.insert("created".into(), json!(now));
    stored.insert("updated".into(), json!(now));
    stored.insert("creator".into(), me.clone());
    stored.insert("organizer".into(), me);
    if let Some(fields) = event.as_object() {
        stored.extend(fields.clone());
    }
    stored.insert("iCalUID".into(), json!(format!("{id}@google.com")));
    stored.insert("sequence".into(), json!(0));
    stored.entry("reminders").or_insert(json!({ "useDefault": true }));
    stored.entry("eventType").or_insert(json!("default"));
    let stored = Value::Object(stored);
    s.calendar.events.push(stored.clone());
    Ok(stored)
}

/// Whether the guests are emailed (`sendUpdates`: `all` and `externalOnly` do, `none` and no
/// value do not, as for Google; anything else is refused).
fn sends_updates(request: &Request) -> Result<bool, Response> {
    match request.param("sendUpdates") {
        None | Some("none") => Ok(false),
        Some("all" | "externalOnly") => Ok(true),
        Some(other) => Err(errors::api(400, &format!("Invalid value for: sendUpdates: {other}"), "invalid")),
    }
}

/// Records the email Google sends `event`'s guests (not the user), if it has any.
fn email_guests(s: &mut State, event: &Value, kind: &str) {
    let to: Vec<String> = event["attendees"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["self"] != true)
        .filter_map(|a| a["email"].as_str().map(str::to_owned))
        .collect();
    if !to.is_empty() {
        let summary = event["summary"].as_str().unwrap_or_default().to_owned();
        s.calendar.emailed.push(crate::GuestEmail { kind: kind.to_owned(), summary, to });
    }
}

fn insert(s: &mut State, request: &Request) -> Response {
    if let Err(refusal) = check(s, request, WRITE_EVENTS, "Events.Insert") {
        return refusal;
    }
    let Some(event) = request.json() else {
        return errors::bad_request("Bad Request");
    };
    let notify = match sends_updates(request) {
        Ok(notify) => notify,
        Err(refusal) => return refusal,
    };
    match create(s, event) {
        Ok(stored) => {
            if notify {
                email_guests(s, &stored, "invitation");
            }
            Response::json(200, &when::render(&stored, &s.calendar.zone()))
        }
        Err(refusal) => refusal,
    }
}

/// RFC 7386: objects merge, `null` clears, anything else replaces.
fn merge(target: &mut Value, patch: &Value) {
    match (target.as_object_mut(), patch.as_object()) {
        (Some(target), Some(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    target.remove(key);
                } else {
                    merge(target.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
        }
        _ => *target = patch.clone(),
    }
}

/// PATCH (`partial`) or PUT.
fn change(s: &mut State, request: &Request, id: &str, partial: bool) -> Response {
    let method = if partial { "Events.Patch" } else { "Events.Update" };
    if let Err(refusal) = check(s, request, WRITE_EVENTS, method) {
        return refusal;
    }
    let Some(i) = s.calendar.position(id) else {
        return errors::calendar_not_found();
    };
    let notify = match sends_updates(request) {
        Ok(notify) => notify,
        Err(refusal) => return refusal,
    };
    let Some(mut body) = request.json().filter(Value::is_object) else {
        return errors::bad_request("Bad Request");
    };
    if let Some(fields) = body.as_object_mut() {
        for field in SERVER_FIELDS {
            fields.remove(*field);
        }
    }
    let old = s.calendar.events[i].clone();
    let mut event = if partial {
        let mut event = old.clone();
        merge(&mut event, &body);
        event
    } else {
        let mut event = body;
        for field in SERVER_FIELDS.iter().chain(&["status"]) {
            if event.get(*field).is_none()
                && let Some(value) = old.get(*field)
            {
                event[*field] = value.clone();
            }
        }
        event
    };
    if let Err(refusal) = validate(&mut event) {
        return refusal;
    }
    let moved =
        event["start"] != old["start"] || event["end"] != old["end"] || event["location"] != old["location"];
    let sequence = old["sequence"].as_u64().unwrap_or(0) + u64::from(moved);
    event["sequence"] = json!(sequence);
    event["updated"] = json!(when::stamp(Timestamp::now()));
    event["etag"] = json!(s.calendar.etag());
    s.calendar.events[i] = event.clone();
    if notify {
        email_guests(s, &event, "change");
    }
    Response::json(200, &when::render(&event, &s.calendar.zone()))
}

fn delete(s: &mut State, request: &Request, id: &str) -> Response {
    if let Err(refusal) = check(s, request, WRITE_EVENTS, "Events.Delete") {
        return refusal;
    }
    let Some(i) = s.calendar.position(id) else {
        return errors::calendar_not_found();
    };
    if s.calendar.events[i]["status"] == "cancelled" {
        return errors::api(410, "Resource has been deleted", "deleted");
    }
    match sends_updates(request) {
        Ok(true) => email_guests(s, &s.calendar.events[i].clone(), "cancellation"),
        Ok(false) => {}
        Err(refusal) => return refusal,
    }
    let etag = s.calendar.etag();
    let event = &mut s.calendar.events[i];
    // A deleted event stays, cancelled, for sync and showDeleted.
    event["status"] = json!("cancelled");
    event["updated"] = json!(when::stamp(Timestamp::now()));
    event["etag"] = json!(etag);
    Response::no_content()
}
