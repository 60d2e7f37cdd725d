//! The calendar a test starts from, placed around today (in the calendar's zone) so that "this
//! week" always has something in it: timed events in Berlin and New York, one- and multi-day
//! all-day events, a weekly meeting with an exception (EXDATE), a daily series with COUNT,
//! attendees, and a cancelled event.

use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan};
use serde_json::{Value, json};

use crate::when;

fn local(date: Date, hour: i8, minute: i8) -> String {
    let time = Time::new(hour, minute, 0, 0).unwrap_or_default();
    date.to_datetime(time).strftime("%Y-%m-%dT%H:%M:%S").to_string()
}

fn day(today: Date, offset: i64) -> Date {
    today.checked_add(offset.days()).unwrap_or(today)
}

fn event(id: &str, summary: &str, start: Value, end: Value, created: &str) -> Value {
    json!({
        "kind": "calendar#event",
        "etag": format!("\"3480000000{}\"", id.len() * 1000 + summary.len()),
        "id": id,
        "status": "confirmed",
        "htmlLink": format!("https://www.google.com/calendar/event?eid={id}"),
        "created": created,
        "updated": created,
        "summary": summary,
        "creator": { "email": crate::USER_EMAIL, "self": true },
        "organizer": { "email": crate::USER_EMAIL, "self": true },
        "start": start,
        "end": end,
        "iCalUID": format!("{id}@google.com"),
        "sequence": 0,
        "reminders": { "useDefault": true },
        "eventType": "default",
    })
}

fn attendee(email: &str, name: &str, status: &str) -> Value {
    let mut a = json!({ "email": email, "displayName": name, "responseStatus": status });
    if email == crate::USER_EMAIL {
        a["self"] = json!(true);
        a["organizer"] = json!(true);
    }
    a
}

pub(crate) fn events(zone: &TimeZone) -> Vec<Value> {
    let now = Timestamp::now();
    let today = now.to_zoned(zone.clone()).date();
    let created = when::stamp(now - SignedDuration::from_hours(24 * 30));
    let berlin = crate::CALENDAR_TIME_ZONE;
    let at = |date: Date, h: i8, m: i8, tz: &str| json!({ "dateTime": local(date, h, m), "timeZone": tz });
    let all_day = |date: Date| json!({ "date": date.to_string() });

    // Tuesdays at 10:00, from the Tuesday three weeks back; next week's is cancelled.
    let first_tuesday = {
        let back = i64::from(today.weekday().to_monday_zero_offset() - 1).rem_euclid(7) + 21;
        day(today, -back)
    };
    let skipped = day(first_tuesday, 28);
    let mut weekly = event(
        "4weeklysync0berlin0000000a",
        "Weekly sync",
        at(first_tuesday, 10, 0, berlin),
        at(first_tuesday, 10, 30, berlin),
        &created,
    );
    weekly["recurrence"] = json!([
        "RRULE:FREQ=WEEKLY;BYDAY=TU",
        format!(
            "EXDATE;TZID={berlin}:{}",
            skipped.to_datetime(Time::constant(10, 0, 0, 0)).strftime("%Y%m%dT%H%M%S")
        ),
    ]);
    weekly["location"] = json!("Room 3.14");
    weekly["attendees"] = json!([
        attendee(crate::USER_EMAIL, "Ada Lovelace", "accepted"),
        attendee("grace@example.org", "Grace Hopper", "accepted"),
        attendee("ana@example.org", "Ana Lima", "tentative"),
    ]);

    let mut lunch = event(
        "2lunchgrace000000000000000",
        "Lunch with Grace",
        at(today, 12, 30, berlin),
        at(today, 13, 30, berlin),
        &created,
    );
    lunch["location"] = json!("Café Central, Berlin");
    lunch["attendees"] = json!([
        attendee(crate::USER_EMAIL, "Ada Lovelace", "accepted"),
        attendee("grace@example.org", "Grace Hopper", "accepted"),
    ]);

    let mut dentist = event(
        "3dentist000000000000000000",
        "Dentist",
        json!({ "dateTime": local(day(today, 1), 9, 0) + &offset(zone, day(today, 1), 9) }),
        json!({ "dateTime": local(day(today, 1), 9, 45) + &offset(zone, day(today, 1), 9) }),
        &created,
    );
    dentist["description"] = json!("Check-up. Bring the insurance card.");

    let mut new_york = event(
        "5newyorkcall0000000000000a",
        "Call with the New York office",
        at(day(today, 2), 15, 0, "America/New_York"),
        at(day(today, 2), 16, 0, "America/New_York"),
        &created,
    );
    new_york["attendees"] = json!([
        attendee(crate::USER_EMAIL, "Ada Lovelace", "accepted"),
        attendee("sam@example.com", "Sam Rivera", "needsAction"),
    ]);

    let mut birthday = event(
        "6birthdayana00000000000000",
        "Ana's birthday",
        all_day(day(today, 4)),
        all_day(day(today, 5)),
        &created,
    );
    birthday["transparency"] = json!("transparent");

    let mut conference = event(
        "7conferencelisbon000000000",
        "Conference in Lisbon",
        all_day(day(today, 10)),
        all_day(day(today, 13)),
        &created,
    );
    conference["location"] = json!("Lisbon, Portugal");

    let mut focus = event(
        "8focustime0000000000000000",
        "Focus time",
        at(today, 8, 0, berlin),
        at(today, 9, 0, berlin),
        &created,
    );
    focus["recurrence"] = json!(["RRULE:FREQ=DAILY;COUNT=5"]);

    let mut cancelled = event(
        "9oldplanning00000000000000",
        "Old planning meeting",
        at(day(today, -1), 16, 0, berlin),
        at(day(today, -1), 17, 0, berlin),
        &created,
    );
    cancelled["status"] = json!("cancelled");

    vec![weekly, lunch, dentist, new_york, birthday, conference, focus, cancelled]
}

/// The zone's offset at that local hour, as `+01:00`.
fn offset(zone: &TimeZone, date: Date, hour: i8) -> String {
    let time = Time::new(hour, 0, 0, 0).unwrap_or_default();
    date.to_datetime(time)
        .to_zoned(zone.clone())
        .map(|z| z.strftime("%:z").to_string())
        .unwrap_or_else(|_| "+00:00".to_owned())
}
