//! `events.quickAdd` (a small English subset of Google's text parsing) and `freeBusy.query`.

use jiff::civil::{Date, Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan};
use serde_json::{Value, json};

use super::{CALENDAR, READONLY, WRITE_EVENTS};
use crate::http::{Request, Response};
use crate::when;
use crate::{State, errors};

const FREEBUSY: &[&str] = &[
    READONLY,
    CALENDAR,
    "https://www.googleapis.com/auth/calendar.events.freebusy",
    "https://www.googleapis.com/auth/calendar.freebusy",
];

/// What quickAdd understood in a text.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Parsed {
    pub summary: String,
    pub location: Option<String>,
    pub date: Option<Date>,
    pub start: Option<Time>,
    pub end: Option<Time>,
}

fn weekday(word: &str) -> Option<Weekday> {
    Some(match word {
        "monday" | "mon" => Weekday::Monday,
        "tuesday" | "tue" | "tues" => Weekday::Tuesday,
        "wednesday" | "wed" => Weekday::Wednesday,
        "thursday" | "thu" | "thurs" => Weekday::Thursday,
        "friday" | "fri" => Weekday::Friday,
        "saturday" | "sat" => Weekday::Saturday,
        "sunday" | "sun" => Weekday::Sunday,
        _ => return None,
    })
}

fn month(word: &str) -> Option<i8> {
    const MONTHS: [&str; 12] =
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let position = MONTHS.iter().position(|m| word.starts_with(m) && word.len() <= 9)?;
    i8::try_from(position + 1).ok()
}

fn day_number(word: &str) -> Option<i8> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    digits.parse::<i8>().ok().filter(|d| (1..=31).contains(d))
}

/// `9am`, `9:30pm`, `12:30`, `noon`; `meridiem` is the next word when it is `am` or `pm`.
fn time(word: &str, meridiem: Option<&str>) -> Option<(Time, bool)> {
    if word == "noon" {
        return Some((Time::constant(12, 0, 0, 0), false));
    }
    let (digits, suffix) = match word.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&word[..i], Some(&word[i..])),
        None => (word, None),
    };
    let (suffix, uses_next) = match (suffix, meridiem) {
        (Some(s), _) => (Some(s), false),
        (None, Some(m)) => (Some(m), true),
        (None, None) => (None, false),
    };
    let (hour, minute) = match digits.split_once(':') {
        Some((h, m)) => (h.parse::<i8>().ok()?, m.parse::<i8>().ok()?),
        // A bare number is a time only with am or pm.
        None if suffix.is_some() => (digits.parse::<i8>().ok()?, 0),
        None => return None,
    };
    let hour = match suffix {
        Some("am") if (1..=12).contains(&hour) => hour % 12,
        Some("pm") if (1..=12).contains(&hour) => hour % 12 + 12,
        None if (0..=23).contains(&hour) => hour,
        _ => return None,
    };
    Some((Time::new(hour, minute, 0, 0).ok()?, uses_next))
}

fn next_weekday(today: Date, day: Weekday) -> Date {
    let ahead = (day.to_monday_zero_offset() - today.weekday().to_monday_zero_offset()).rem_euclid(7);
    today.checked_add(i64::from(ahead).days()).unwrap_or(today)
}

/// Reads a quickAdd text against `today` in the calendar's zone.
pub(crate) fn parse(text: &str, today: Date) -> Parsed {
    let words: Vec<&str> = text.split_whitespace().collect();
    let lower: Vec<String> =
        words.iter().map(|w| w.trim_end_matches([',', '.', '!']).to_lowercase()).collect();
    let mut used = vec![false; words.len()];
    let mut parsed = Parsed::default();
    let mut i = 0;
    while i < words.len() {
        let word = lower[i].as_str();
        let next = lower.get(i + 1).map(String::as_str);
        let meridiem = next.filter(|n| *n == "am" || *n == "pm");
        if parsed.date.is_none() {
            let found = match word {
                "today" => Some((today, 1)),
                "tomorrow" => Some((today.checked_add(1.day()).unwrap_or(today), 1)),
                "next" => next
                    .and_then(weekday)
                    .map(|d| (next_weekday(today.checked_add(1.day()).unwrap_or(today), d), 2)),
                _ => weekday(word)
                    .map(|d| (next_weekday(today, d), 1))
                    .or_else(|| word.parse::<Date>().ok().map(|d| (d, 1)))
                    .or_else(|| {
                        let (m, d) = (month(word)?, day_number(next?)?);
                        let date = Date::new(today.year(), m, d).ok()?;
                        // A date already past this year means next year's.
                        let date = if date < today { Date::new(today.year() + 1, m, d).ok()? } else { date };
                        Some((date, 2))
                    }),
            };
            if let Some((date, width)) = found {
                parsed.date = Some(date);
                used[i..i + width].iter_mut().for_each(|u| *u = true);
                i += width;
                continue;
            }
        }
        if parsed.start.is_none() {
            if let Some((from, to)) = word.split_once('-')
                && let Some((end, _)) = time(to, meridiem)
            {
                let end_suffix = to.ends_with("am").then_some("am").or(to.ends_with("pm").then_some("pm"));
                if let Some((start, _)) = time(from, None).or_else(|| time(from, end_suffix.or(meridiem))) {
                    parsed.start = Some(start);
                    parsed.end = Some(end);
                    let width = if meridiem.is_some() { 2 } else { 1 };
                    used[i..i + width].iter_mut().for_each(|u| *u = true);
                    i += width;
                    continue;
                }
            }
            if let Some((start, uses_next)) = time(word, meridiem) {
                parsed.start = Some(start);
                let width = if uses_next { 2 } else { 1 };
                used[i..i + width].iter_mut().for_each(|u| *u = true);
                i += width;
                continue;
            }
        } else if parsed.end.is_none() && (word == "to" || word == "-" || word == "until") && used[i - 1] {
            let after = lower.get(i + 2).map(String::as_str).filter(|n| *n == "am" || *n == "pm");
            if let Some((end, uses_next)) = next.and_then(|n| time(n, after)) {
                parsed.end = Some(end);
                let width = if uses_next { 3 } else { 2 };
                used[i..i + width].iter_mut().for_each(|u| *u = true);
                i += width;
                continue;
            }
        }
        i += 1;
    }
    // Connectors that led into a date or a time go with it.
    for i in (0..words.len().saturating_sub(1)).rev() {
        if !used[i] && used[i + 1] && matches!(lower[i].as_str(), "on" | "at" | "from" | "by") {
            used[i] = true;
        }
    }
    let rest: Vec<&str> = words.iter().zip(&used).filter(|(_, u)| !**u).map(|(w, _)| *w).collect();
    let rest = rest.join(" ");
    let rest = rest.trim_end_matches([',', ' ']);
    match rest.split_once(" at ") {
        Some((summary, location)) if !summary.is_empty() && !location.is_empty() => {
            parsed.summary = summary.to_owned();
            parsed.location = Some(location.to_owned());
        }
        _ => parsed.summary = if rest.is_empty() { text.trim().to_owned() } else { rest.to_owned() },
    }
    parsed
}

/// `POST calendars/{id}/events/quickAdd?text=...`.
pub(crate) fn quick_add(s: &mut State, request: &Request) -> Response {
    if let Err(refusal) = super::check(s, request, WRITE_EVENTS, "Events.QuickAdd") {
        return refusal;
    }
    let Some(text) = request.param("text").filter(|t| !t.trim().is_empty()) else {
        return errors::required("Required parameter: text");
    };
    let zone = s.calendar.zone();
    let now = Timestamp::now().to_zoned(zone.clone());
    let parsed = parse(text, now.date());
    let at = |date: Date, time: Time| date.to_datetime(time).to_zoned(zone.clone()).map(|z| z.timestamp());
    let (start, end) = match (parsed.date, parsed.start) {
        (Some(date), None) => (
            json!({ "date": date.to_string() }),
            json!({ "date": date.checked_add(1.day()).unwrap_or(date).to_string() }),
        ),
        (date, time) => {
            // With neither date nor time Google's behaviour is undocumented; this fake takes the
            // next full hour today, for an hour.
            let (date, time) = match (date, time) {
                (_, Some(time)) => (date.unwrap_or(now.date()), time),
                (_, None) => {
                    let next_hour = now.timestamp() + SignedDuration::from_hours(1);
                    let next = next_hour.to_zoned(zone.clone());
                    (next.date(), Time::new(next.hour(), 0, 0, 0).unwrap_or_default())
                }
            };
            let Ok(start) = at(date, time) else {
                return errors::bad_request("Bad Request");
            };
            let end = match parsed.end.map(|t| at(date, t)) {
                Some(Ok(end)) if end > start => end,
                _ => start + SignedDuration::from_hours(1),
            };
            (
                json!({ "dateTime": when::format(start, &zone) }),
                json!({ "dateTime": when::format(end, &zone) }),
            )
        }
    };
    let mut event = json!({ "summary": parsed.summary, "start": start, "end": end });
    if let Some(location) = parsed.location {
        event["location"] = json!(location);
    }
    match super::create(s, event) {
        Ok(stored) => Response::json(200, &when::render(&stored, &zone)),
        Err(refusal) => refusal,
    }
}

/// Busy intervals of the primary calendar within `[from, to)`, merged.
fn busy(s: &State, from: Timestamp, to: Timestamp) -> Vec<(Timestamp, Timestamp)> {
    let zone = s.calendar.zone();
    let declined = |e: &Value| {
        e["attendees"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|a| a["self"] == true && a["responseStatus"] == "declined")
    };
    let mut spans: Vec<(Timestamp, Timestamp)> = s
        .calendar
        .events
        .iter()
        .filter(|e| e["status"] != "cancelled" && e["transparency"] != "transparent" && !declined(e))
        .flat_map(|e| when::instances(e, &zone, &zone, Some(from), Some(to), true))
        .map(|i| (i.start.max(from), i.end.min(to)))
        .filter(|(s, e)| s < e)
        .collect();
    spans.sort();
    let mut merged: Vec<(Timestamp, Timestamp)> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// `POST freeBusy`.
pub(crate) fn free_busy(s: &mut State, request: &Request) -> Response {
    if let Err(refusal) = super::check(s, request, FREEBUSY, "Freebusy.Query") {
        return refusal;
    }
    let Some(body) = request.json().filter(Value::is_object) else {
        return errors::bad_request("Bad Request");
    };
    let bound = |name: &str| match body[name].as_str() {
        None => Err(errors::required(&format!("Missing {name} parameter."))),
        Some(v) => when::parse_instant(v).ok_or_else(|| errors::bad_request("Bad Request")),
    };
    let (from, to) = match (bound("timeMin"), bound("timeMax")) {
        (Ok(from), Ok(to)) => (from, to),
        (Err(refusal), _) | (_, Err(refusal)) => return refusal,
    };
    if to <= from {
        return errors::api(400, "The specified time range is empty.", "timeRangeEmpty");
    }
    let zone = match body["timeZone"].as_str() {
        None => TimeZone::UTC,
        Some(name) => match when::zone(name) {
            Some(zone) => zone,
            None => return errors::bad_request("Invalid time zone definition."),
        },
    };
    let mut calendars = serde_json::Map::new();
    for item in body["items"].as_array().into_iter().flatten() {
        let id = item["id"].as_str().unwrap_or_default();
        let entry = if id == "primary" || id.eq_ignore_ascii_case(crate::USER_EMAIL) {
            let busy: Vec<Value> = busy(s, from, to)
                .into_iter()
                .map(|(start, end)| json!({ "start": when::format(start, &zone), "end": when::format(end, &zone) }))
                .collect();
            json!({ "busy": busy })
        } else {
            json!({ "errors": [{ "domain": "global", "reason": "notFound" }], "busy": [] })
        };
        calendars.insert(id.to_owned(), entry);
    }
    Response::json(
        200,
        &json!({
            "kind": "calendar#freeBusy",
            "timeMin": when::format(from, &TimeZone::UTC),
            "timeMax": when::format(to, &TimeZone::UTC),
            "calendars": calendars,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> Date {
        Date::constant(2026, 3, 4) // a Wednesday
    }

    #[test]
    fn reads_relative_days_and_times() {
        let p = parse("Lunch with Ana tomorrow 12:30", today());
        assert_eq!(p.summary, "Lunch with Ana");
        assert_eq!(p.date, Some(Date::constant(2026, 3, 5)));
        assert_eq!(p.start, Some(Time::constant(12, 30, 0, 0)));
    }

    #[test]
    fn reads_iso_dates_and_am() {
        let p = parse("Dentist on 2026-12-03 at 9am", today());
        assert_eq!((p.summary.as_str(), p.date), ("Dentist", Some(Date::constant(2026, 12, 3))));
        assert_eq!(p.start, Some(Time::constant(9, 0, 0, 0)));
    }

    #[test]
    fn reads_ranges_places_and_month_names() {
        let p = parse("Appointment at Somewhere on June 3rd 10am-10:25am", today());
        assert_eq!(p.summary, "Appointment");
        assert_eq!(p.location.as_deref(), Some("Somewhere"));
        assert_eq!(p.date, Some(Date::constant(2026, 6, 3)));
        assert_eq!((p.start, p.end), (Some(Time::constant(10, 0, 0, 0)), Some(Time::constant(10, 25, 0, 0))));
        let p = parse("Review friday 3 pm to 4pm", today());
        assert_eq!((p.summary.as_str(), p.date), ("Review", Some(Date::constant(2026, 3, 6))));
        assert_eq!((p.start, p.end), (Some(Time::constant(15, 0, 0, 0)), Some(Time::constant(16, 0, 0, 0))));
    }

    #[test]
    fn a_date_alone_and_nothing_at_all() {
        let p = parse("Holiday on 2026-08-10", today());
        assert_eq!((p.date, p.start), (Some(Date::constant(2026, 8, 10)), None));
        let p = parse("Call the bank", today());
        assert_eq!(p, Parsed { summary: "Call the bank".into(), ..Parsed::default() });
    }
}
