//! The Calendar tools' work, on the user's primary calendar: requests to Calendar v3 and the
//! answers' text and fields. Times go to Google with an offset and an explicit `timeZone`.

use jiff::{SignedDuration, ToSpan, Zoned};
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::answer::{Answer, Outcome, UNTRUSTED_EVENTS, check_id, clip};
use crate::api::{Api, Google, Request};
use crate::config::UserZone;
use crate::error::GoogleError;
use crate::mime::address::Mailbox;
use crate::scopes::need;
use crate::time::{self, EventTime, When};

pub struct Calendar<'a> {
    pub google: &'a Google,
    pub zone: &'a UserZone,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Event {
    pub id: String,
    pub status: String,
    pub summary: String,
    pub description: String,
    pub location: String,
    pub html_link: String,
    pub start: EventTime,
    pub end: EventTime,
    pub attendees: Vec<Attendee>,
    pub recurring_event_id: Option<String>,
    pub recurrence: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Attendee {
    pub email: String,
    pub display_name: String,
    pub response_status: String,
    pub organizer: bool,
    #[serde(rename = "self")]
    pub is_self: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Events {
    items: Vec<Event>,
}

/// What an event should become; `None` leaves a field as it is (on update) or unset (on create).
#[derive(Debug, Default, Clone)]
pub struct EventFields {
    pub title: Option<String>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub duration_minutes: Option<u32>,
    pub all_day: Option<bool>,
    pub time_zone: Option<String>,
    pub location: Option<String>,
    pub description: Option<String>,
    pub attendees: Option<Vec<String>>,
    pub recurrence: Option<Vec<String>>,
}

fn parse<T: for<'de> Deserialize<'de>>(value: Value) -> Result<T, GoogleError> {
    crate::answer::from_google(value)
}

fn sending(notify: bool) -> &'static str {
    if notify { "all" } else { "none" }
}

impl Calendar<'_> {
    /// The instants a range covers: from `start` (default today) to `end` (an end date included;
    /// default a week after the start).
    fn range(&self, start: Option<&str>, end: Option<&str>) -> Result<(Zoned, Zoned), GoogleError> {
        let tz = &self.zone.tz;
        let start = start.map_or(Ok(When::Day(Zoned::now().with_time_zone(tz.clone()).date())), |s| {
            time::parse_when(s, tz)
        })?;
        let from = time::range_bound(&start, tz, false)?;
        let to = match end {
            Some(end) => time::range_bound(&time::parse_when(end, tz)?, tz, true)?,
            None => from.checked_add(7.days()).map_err(|e| GoogleError::invalid(e.to_string()))?,
        };
        if to <= from {
            return Err(GoogleError::invalid("the end of the range is not after its start"));
        }
        Ok((from, to))
    }

    pub async fn list(
        &self,
        start: Option<&str>,
        end: Option<&str>,
        query: Option<&str>,
        max: usize,
    ) -> Outcome {
        let (from, to) = self.range(start, end)?;
        let path = ["calendars", "primary", "events"];
        let mut request = Request::get(Api::Calendar, &path, need::READ_EVENTS)
            .query("timeMin", time::rfc3339(&from))
            .query("timeMax", time::rfc3339(&to))
            .query("singleEvents", "true")
            .query("orderBy", "startTime")
            .query("maxResults", max.to_string())
            .query("timeZone", self.zone.name.clone());
        if let Some(q) = query.map(str::trim).filter(|q| !q.is_empty()) {
            request = request.query("q", q);
        }
        let events: Events = parse(self.google.call(request).await?)?;
        let events: Vec<&Event> = events.items.iter().filter(|e| e.status != "cancelled").collect();
        let span = format!("{} to {} ({})", time::show(&from), time::show(&to), self.zone.name);
        let matching = query.map(|q| format!(" matching {q:?}")).unwrap_or_default();
        if events.is_empty() {
            let text = format!("No events{matching} from {span}.");
            return Ok(Answer::new(
                text,
                json!({ "from": time::rfc3339(&from), "to": time::rfc3339(&to), "events": [] }),
            ));
        }
        let mut text = format!("{UNTRUSTED_EVENTS}\n\n{} event(s){matching} from {span}:\n", events.len());
        let mut rows = Vec::new();
        for event in &events {
            text.push_str(&format!("\n{}", self.describe(event)));
            rows.push(self.fields(event));
        }
        if events.len() >= max {
            text.push_str(&format!(
                "\n[Only the first {max} are shown; ask for a shorter range or more results.]"
            ));
        }
        Ok(Answer::new(
            text,
            json!({ "from": time::rfc3339(&from), "to": time::rfc3339(&to), "events": rows }),
        ))
    }

    /// An event as lines: title and when, then place, people, notes and id.
    fn describe(&self, e: &Event) -> String {
        let title = if e.summary.is_empty() { "(no title)" } else { &e.summary };
        let mut text = format!("- {title} — {}\n", time::show_span(&e.start, &e.end, &self.zone.tz));
        if !e.location.is_empty() {
            text.push_str(&format!("  where: {}\n", e.location));
        }
        if !e.attendees.is_empty() {
            let people: Vec<String> = e.attendees.iter().map(attendee).collect();
            text.push_str(&format!("  attendees: {}\n", people.join(", ")));
        }
        if !e.description.is_empty() {
            let one_line = e.description.split_whitespace().collect::<Vec<_>>().join(" ");
            text.push_str(&format!("  notes: {}\n", clip(&one_line, 200)));
        }
        let repeats =
            if e.recurring_event_id.is_some() || !e.recurrence.is_empty() { " (repeats)" } else { "" };
        text.push_str(&format!("  id: {}{repeats}\n", e.id));
        text
    }

    fn fields(&self, e: &Event) -> Value {
        let all_day = e.start.date.is_some();
        let (start, end) = if all_day {
            let last = e.end.day().and_then(|d| d.yesterday().ok()).map(|d| d.to_string());
            (e.start.date.clone(), last.or_else(|| e.start.date.clone()))
        } else {
            (
                e.start.instant(&self.zone.tz).map(|z| time::rfc3339(&z)),
                e.end.instant(&self.zone.tz).map(|z| time::rfc3339(&z)),
            )
        };
        let attendees: Vec<Value> = e
            .attendees
            .iter()
            .map(|a| json!({ "email": a.email, "name": a.display_name, "response": a.response_status, "organizer": a.organizer }))
            .collect();
        json!({
            "id": e.id, "title": e.summary, "allDay": all_day, "start": start,
            "end": end, "when": time::show_span(&e.start, &e.end, &self.zone.tz), "location": e.location,
            "description": e.description, "attendees": attendees, "recurringEventId": e.recurring_event_id,
            "recurrence": e.recurrence, "link": e.html_link,
        })
    }

    pub async fn free_busy(&self, start: Option<&str>, end: Option<&str>) -> Outcome {
        let (from, to) = self.range(start, end)?;
        let body = json!({
            "timeMin": time::rfc3339(&from), "timeMax": time::rfc3339(&to),
            "timeZone": self.zone.name, "items": [{ "id": "primary" }],
        });
        let request = Request::post(Api::Calendar, &["freeBusy"], body, need::FREE_BUSY).repeatable();
        let answer = self.google.call(request).await?;
        let calendar = &answer["calendars"]["primary"];
        if let Some(reason) = calendar["errors"][0]["reason"].as_str() {
            return Err(GoogleError::BadRequest { message: format!("free/busy not available ({reason})") });
        }
        let busy: Vec<(EventTime, EventTime)> = calendar["busy"]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|b| {
                        let at = |key: &str| EventTime {
                            date_time: b[key].as_str().map(str::to_owned),
                            ..EventTime::default()
                        };
                        (at("start"), at("end"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let span = format!("{} to {} ({})", time::show(&from), time::show(&to), self.zone.name);
        let mut text = if busy.is_empty() {
            format!("Free for the whole range, {span}.")
        } else {
            format!("Busy times from {span}:\n")
        };
        for (s, e) in &busy {
            text.push_str(&format!("- {}\n", time::show_span(s, e, &self.zone.tz)));
        }
        let rows: Vec<Value> =
            busy.iter().map(|(s, e)| json!({ "start": s.date_time, "end": e.date_time })).collect();
        Ok(Answer::new(text, json!({ "from": time::rfc3339(&from), "to": time::rfc3339(&to), "busy": rows })))
    }

    /// The event's zone: the one asked for, else the user's.
    fn event_zone(&self, asked: Option<&str>) -> Result<UserZone, GoogleError> {
        match asked.map(str::trim).filter(|z| !z.is_empty()) {
            Some(name) => UserZone::named(name).map_err(GoogleError::Invalid),
            None => Ok(self.zone.clone()),
        }
    }

    /// The `start` and `end` Google takes for these fields; `current` is the event being changed
    /// (its length is kept when only the start moves).
    fn times(&self, f: &EventFields, current: Option<&Event>) -> Result<Option<(Value, Value)>, GoogleError> {
        if f.start.is_none() && f.end.is_none() && f.duration_minutes.is_none() && f.all_day.is_none() {
            return Ok(None);
        }
        let zone = self.event_zone(f.time_zone.as_deref())?;
        let tz = &zone.tz;
        let current_start =
            current.and_then(|e| e.start.day().map(When::Day).or_else(|| e.start.instant(tz).map(When::At)));
        let current_end =
            current.and_then(|e| e.end.day().map(When::Day).or_else(|| e.end.instant(tz).map(When::At)));
        let start = match &f.start {
            Some(s) => time::parse_when(s, tz)?,
            None => current_start.clone().ok_or_else(|| GoogleError::invalid("give the event's start"))?,
        };
        let all_day = f.all_day.unwrap_or(matches!(start, When::Day(_)));
        if all_day {
            let first = match &start {
                When::Day(d) => *d,
                When::At(z) => z.date(),
            };
            let last = match (&f.end, f.start.is_some(), current_start, current_end) {
                (Some(end), ..) => match time::parse_when(end, tz)? {
                    When::Day(d) => d,
                    When::At(z) => z.date(),
                },
                // Moved: keep the number of days (Google's end is exclusive).
                (None, true, Some(When::Day(old_start)), Some(When::Day(old_end))) => {
                    let days =
                        old_start.until(old_end).map_err(|e| GoogleError::invalid(e.to_string()))?.get_days();
                    first
                        .checked_add((days.max(1) - 1).days())
                        .map_err(|e| GoogleError::invalid(e.to_string()))?
                }
                (None, false, _, Some(When::Day(old_end))) => {
                    old_end.yesterday().map_err(|e| GoogleError::invalid(e.to_string()))?
                }
                _ => first,
            };
            if last < first {
                return Err(GoogleError::invalid("the event's last day is before its first"));
            }
            let end = time::exclusive_end(last)?;
            return Ok(Some((
                time::event_time(&When::Day(first), &zone.name),
                time::event_time(&When::Day(end), &zone.name),
            )));
        }
        let When::At(start) = start else {
            return Err(GoogleError::invalid("a timed event needs a start time, such as 2026-03-09T09:30"));
        };
        let end = if let Some(end) = &f.end {
            match time::parse_when(end, tz)? {
                When::At(z) => z,
                When::Day(_) => {
                    return Err(GoogleError::invalid("give the end as a time too, such as 2026-03-09T10:30"));
                }
            }
        } else if let Some(minutes) = f.duration_minutes {
            start
                .checked_add(SignedDuration::from_mins(i64::from(minutes)))
                .map_err(|e| GoogleError::invalid(e.to_string()))?
        } else if let (true, Some(When::At(old_start)), Some(When::At(old_end))) =
            (f.start.is_some(), &current_start, &current_end)
        {
            start
                .checked_add(old_start.duration_until(old_end))
                .map_err(|e| GoogleError::invalid(e.to_string()))?
        } else if let (false, Some(When::At(old_end))) = (f.start.is_some(), &current_end) {
            old_end.clone()
        } else {
            start
                .checked_add(SignedDuration::from_hours(1))
                .map_err(|e| GoogleError::invalid(e.to_string()))?
        };
        if end <= start {
            return Err(GoogleError::invalid("the event's end is not after its start"));
        }
        Ok(Some((
            time::event_time(&When::At(start), &zone.name),
            time::event_time(&When::At(end), &zone.name),
        )))
    }

    /// The event body for the given fields (only those given, so a patch changes only them).
    fn body(&self, f: &EventFields, current: Option<&Event>) -> Result<Value, GoogleError> {
        let mut body = Map::new();
        if let Some(title) = &f.title {
            body.insert("summary".into(), json!(title.trim()));
        }
        if let Some((start, end)) = self.times(f, current)? {
            body.insert("start".into(), start);
            body.insert("end".into(), end);
        }
        if let Some(location) = &f.location {
            body.insert("location".into(), json!(location));
        }
        if let Some(description) = &f.description {
            body.insert("description".into(), json!(description));
        }
        if let Some(attendees) = &f.attendees {
            let list = attendees
                .iter()
                .map(|a| Mailbox::parse(a).map(|m| json!({ "email": m.address })))
                .collect::<Result<Vec<_>, _>>()?;
            body.insert("attendees".into(), Value::Array(list));
        }
        if let Some(lines) = &f.recurrence {
            body.insert("recurrence".into(), json!(recurrence(lines)?));
        }
        Ok(Value::Object(body))
    }

    pub async fn create(&self, f: &EventFields, notify: bool) -> Outcome {
        if f.title.as_deref().is_none_or(|t| t.trim().is_empty()) {
            return Err(GoogleError::invalid("give the event a title"));
        }
        if f.start.is_none() {
            return Err(GoogleError::invalid(
                "give the event's start (a date for an all-day event, else a date and time)",
            ));
        }
        let body = self.body(f, None)?;
        let path = ["calendars", "primary", "events"];
        let request = Request::post(Api::Calendar, &path, body, need::WRITE_EVENTS)
            .query("sendUpdates", sending(notify));
        let event: Event = parse(self.google.call(request).await?)?;
        Ok(self.done("Created", &event))
    }

    pub async fn update(&self, event_id: &str, f: &EventFields, notify: bool) -> Outcome {
        let id = check_id("event", event_id)?;
        let path = ["calendars", "primary", "events", id.as_str()];
        let moves =
            f.start.is_some() || f.end.is_some() || f.duration_minutes.is_some() || f.all_day.is_some();
        let current: Option<Event> = if moves {
            Some(parse(self.google.call(Request::get(Api::Calendar, &path, need::WRITE_EVENTS)).await?)?)
        } else {
            None
        };
        let body = self.body(f, current.as_ref())?;
        if body.as_object().is_some_and(Map::is_empty) {
            return Err(GoogleError::invalid(
                "say what to change (title, start, end, location, description, attendees)",
            ));
        }
        let request = Request::post(Api::Calendar, &path, body, need::WRITE_EVENTS)
            .method(Method::PATCH)
            .repeatable()
            .query("sendUpdates", sending(notify));
        let event: Event = parse(self.google.call(request).await?)?;
        Ok(self.done("Updated", &event))
    }

    pub async fn delete(&self, event_id: &str, notify: bool) -> Outcome {
        let id = check_id("event", event_id)?;
        let path = ["calendars", "primary", "events", id.as_str()];
        let request = Request::get(Api::Calendar, &path, need::WRITE_EVENTS)
            .method(Method::DELETE)
            .query("sendUpdates", sending(notify));
        self.google.call(request).await?;
        Ok(Answer::new(format!("Deleted event {id}."), json!({ "id": id, "deleted": true })))
    }

    pub async fn quick_add(&self, text: &str) -> Outcome {
        if text.trim().is_empty() {
            return Err(GoogleError::invalid("say what to add, such as \"Lunch with Ana tomorrow at 1pm\""));
        }
        let path = ["calendars", "primary", "events", "quickAdd"];
        let request = Request::get(Api::Calendar, &path, need::WRITE_EVENTS)
            .method(Method::POST)
            .query("text", text.trim())
            .query("sendUpdates", "none");
        let event: Event = parse(self.google.call(request).await?)?;
        Ok(self.done("Added", &event))
    }

    fn done(&self, verb: &str, event: &Event) -> Answer {
        let mut text = format!("{verb} the event (times in {}):\n{}", self.zone.name, self.describe(event));
        if !event.html_link.is_empty() {
            text.push_str(&format!("  link: {}\n", event.html_link));
        }
        Answer::new(text, self.fields(event))
    }
}

fn attendee(a: &Attendee) -> String {
    let who = if a.display_name.is_empty() { a.email.clone() } else { a.display_name.clone() };
    let answer = match a.response_status.as_str() {
        "accepted" => "accepted",
        "declined" => "declined",
        "tentative" => "maybe",
        _ => "not answered",
    };
    let role = if a.organizer {
        ", organiser"
    } else if a.is_self {
        ", you"
    } else {
        ""
    };
    format!("{who} ({answer}{role})")
}

/// RRULE, EXRULE, RDATE and EXDATE lines as Google takes them; a bare `FREQ=…` is an RRULE.
fn recurrence(lines: &[String]) -> Result<Vec<String>, GoogleError> {
    lines
        .iter()
        .map(|line| {
            let line = line.trim();
            if line.contains(['\r', '\n']) {
                return Err(GoogleError::invalid("put each recurrence rule in its own list item"));
            }
            let upper = line.to_ascii_uppercase();
            if upper.starts_with("FREQ=") {
                return Ok(format!("RRULE:{line}"));
            }
            if ["RRULE:", "EXRULE:", "RDATE", "EXDATE"].iter().any(|p| upper.starts_with(p)) {
                Ok(line.to_owned())
            } else {
                Err(GoogleError::invalid(format!(
                    "{line:?} is not a recurrence rule; write for example RRULE:FREQ=WEEKLY;BYDAY=MO,WE"
                )))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recurrence_lines_are_checked() {
        let lines =
            vec!["FREQ=WEEKLY;BYDAY=MO".to_owned(), "EXDATE;TZID=Europe/Berlin:20260316T090000".to_owned()];
        assert_eq!(recurrence(&lines).unwrap()[0], "RRULE:FREQ=WEEKLY;BYDAY=MO");
        assert!(recurrence(&["every monday".to_owned()]).is_err());
        assert!(recurrence(&["RRULE:FREQ=DAILY\r\nX".to_owned()]).is_err());
    }
}
