//! Calendar: listing rules, recurrence expansion, the checks on inserted times, patch/update/
//! delete, quickAdd and free/busy.

mod common;

use common::*;
use jiff::civil::{Date, Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use perch_fake_google::{CALENDAR_TIME_ZONE, FakeGoogle, USER_EMAIL};
use serde_json::{Value, json};

const EVENTS_PATH: &str = "/calendar/v3/calendars/primary/events";

fn berlin() -> TimeZone {
    TimeZone::get(CALENDAR_TIME_ZONE).expect("zone")
}

fn today() -> Date {
    Timestamp::now().to_zoned(berlin()).date()
}

/// RFC 3339 for midnight of `date` in Berlin.
fn midnight(date: Date) -> String {
    date.to_zoned(berlin()).expect("zoned").strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

fn q(pairs: &[(&str, &str)]) -> String {
    encode(pairs)
}

async fn list(fake: &FakeGoogle, token: &str, pairs: &[(&str, &str)]) -> (u16, Value) {
    get(fake, token, &format!("{EVENTS_PATH}?{}", q(pairs))).await
}

fn items(body: &Value) -> Vec<Value> {
    body["items"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn listing_rules_are_googles() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&[CALENDAR_READONLY]);
    let (status, setting) = get(&fake, &token, "/calendar/v3/users/me/settings/timezone").await;
    assert_eq!(status, 200);
    assert_eq!(
        (setting["kind"].as_str(), setting["value"].as_str()),
        (Some("calendar#setting"), Some(CALENDAR_TIME_ZONE))
    );

    let (status, body) = list(&fake, &token, &[("timeMin", "2026-01-01T00:00:00")]).await;
    assert_eq!(
        (status, body["error"]["message"].as_str()),
        (400, Some("Bad Request")),
        "timeMin needs an offset"
    );
    let (status, body) = list(&fake, &token, &[("orderBy", "startTime")]).await;
    assert_eq!(status, 400, "orderBy=startTime needs singleEvents");
    assert_eq!(body["error"]["message"], "The requested ordering is not available for the particular query.");

    let from = midnight(today());
    let to = midnight(today().checked_add(14.days()).expect("date"));
    let (status, body) = list(
        &fake,
        &token,
        &[("timeMin", &from), ("timeMax", &to), ("singleEvents", "true"), ("orderBy", "startTime")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["kind"].as_str(), body["timeZone"].as_str()),
        (Some("calendar#events"), Some(CALENDAR_TIME_ZONE))
    );
    let events = items(&body);
    let summaries: Vec<&str> = events.iter().filter_map(|e| e["summary"].as_str()).collect();
    for expected in [
        "Lunch with Grace",
        "Dentist",
        "Call with the New York office",
        "Ana's birthday",
        "Conference in Lisbon",
    ] {
        assert!(summaries.contains(&expected), "{summaries:?} lacks {expected}");
    }
    assert!(!summaries.contains(&"Old planning meeting"), "cancelled events only with showDeleted");
    let starts: Vec<Timestamp> = events
        .iter()
        .map(|e| match e["start"]["dateTime"].as_str() {
            Some(t) => t.parse().expect("rfc3339"),
            None => e["start"]["date"]
                .as_str()
                .expect("date")
                .parse::<Date>()
                .expect("date")
                .to_zoned(berlin())
                .expect("z")
                .timestamp(),
        })
        .collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "ordered by start");
    let conference = events.iter().find(|e| e["summary"] == "Conference in Lisbon").expect("conference");
    let (start, end): (Date, Date) = (
        conference["start"]["date"].as_str().expect("d").parse().expect("d"),
        conference["end"]["date"].as_str().expect("d").parse().expect("d"),
    );
    assert_eq!(start.until(end).expect("span").get_days(), 3, "all-day end is exclusive");
    let event = events.iter().find(|e| e["summary"] == "Lunch with Grace").expect("lunch");
    for field in [
        "kind",
        "id",
        "status",
        "htmlLink",
        "created",
        "updated",
        "creator",
        "organizer",
        "iCalUID",
        "sequence",
        "reminders",
        "eventType",
    ] {
        assert!(!event[field].is_null(), "{field} missing: {event}");
    }
    assert_eq!(event["attendees"][0]["self"], true);

    // The answer's times in the zone asked for.
    let (_, body) = list(
        &fake,
        &token,
        &[("timeMin", &from), ("timeMax", &to), ("q", "new york"), ("timeZone", "America/New_York")],
    )
    .await;
    let call = &items(&body)[0];
    assert!(call["start"]["dateTime"].as_str().expect("dateTime").contains("T15:00:00-0"), "{call}");
    assert_eq!(call["start"]["timeZone"], "America/New_York");

    let (_, body) = list(&fake, &token, &[("showDeleted", "true"), ("q", "planning")]).await;
    assert_eq!(items(&body)[0]["status"], "cancelled");

    let (_, page) = list(
        &fake,
        &token,
        &[("maxResults", "2"), ("singleEvents", "true"), ("timeMin", &from), ("timeMax", &to)],
    )
    .await;
    assert_eq!(items(&page).len(), 2);
    let next = page["nextPageToken"].as_str().expect("next page");
    let (_, rest) = list(
        &fake,
        &token,
        &[("pageToken", next), ("singleEvents", "true"), ("timeMin", &from), ("timeMax", &to)],
    )
    .await;
    assert_eq!(items(&rest).len(), events.len() - 2);
}

#[tokio::test]
async fn recurring_events_expand_into_instances() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&[CALENDAR_EVENTS]);
    let from = midnight(today().checked_sub(35.days()).expect("date"));
    let to = midnight(today().checked_add(35.days()).expect("date"));
    let (_, body) = list(
        &fake,
        &token,
        &[("timeMin", &from), ("timeMax", &to), ("singleEvents", "true"), ("q", "weekly sync")],
    )
    .await;
    let instances = items(&body);
    // From three weeks back to five weeks ahead: Tuesdays, one of them excluded.
    assert!((7..=9).contains(&instances.len()), "{}", instances.len());
    let series = "4weeklysync0berlin0000000a";
    let mut dates = Vec::new();
    for instance in &instances {
        assert_eq!(instance["recurringEventId"], series);
        assert!(instance["id"].as_str().expect("id").starts_with(&format!("{series}_")));
        assert!(instance.get("recurrence").is_none());
        assert_eq!(instance["originalStartTime"], instance["start"]);
        let start: Timestamp = instance["start"]["dateTime"].as_str().expect("dateTime").parse().expect("t");
        let local = start.to_zoned(berlin());
        assert_eq!(
            (local.weekday(), local.time()),
            (Weekday::Tuesday, Time::constant(10, 0, 0, 0)),
            "10:00 local across DST"
        );
        dates.push(local.date());
    }
    let gaps: Vec<i32> = dates.windows(2).map(|w| w[0].until(w[1]).expect("span").get_days()).collect();
    assert_eq!(gaps.iter().filter(|g| **g == 14).count(), 1, "the EXDATE leaves one two-week gap: {gaps:?}");

    // An instance by its id.
    let instance_id = instances[0]["id"].as_str().expect("id");
    let (status, one) = get(&fake, &token, &format!("{EVENTS_PATH}/{instance_id}")).await;
    assert_eq!((status, one["recurringEventId"].as_str()), (200, Some(series)));

    let (_, body) = list(
        &fake,
        &token,
        &[("timeMin", &from), ("timeMax", &to), ("singleEvents", "true"), ("q", "focus")],
    )
    .await;
    assert_eq!(items(&body).len(), 5, "COUNT=5");

    let (_, body) = list(&fake, &token, &[("timeMin", &from), ("timeMax", &to), ("q", "weekly sync")]).await;
    let masters = items(&body);
    assert_eq!(masters.len(), 1, "without singleEvents: the series once");
    assert_eq!(masters[0]["recurrence"][0], "RRULE:FREQ=WEEKLY;BYDAY=TU");
}

#[tokio::test]
async fn inserted_times_are_checked_as_google_does() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&[CALENDAR_EVENTS]);
    let post = |body: Value| {
        let fake = &fake;
        let token = token.clone();
        async move { send_json(fake, "POST", &token, EVENTS_PATH, &body).await }
    };
    let (status, body) = post(json!({ "summary": "x", "start": { "dateTime": "2026-05-01T10:00:00" }, "end": { "dateTime": "2026-05-01T11:00:00" } })).await;
    assert_eq!(
        (status, body["error"]["message"].as_str()),
        (400, Some("Missing time zone definition for start time."))
    );
    let (status, body) = post(json!({ "summary": "x", "start": { "dateTime": "2026-05-01T10:00:00+02:00" }, "end": { "dateTime": "2026-05-01T09:00:00+02:00" } })).await;
    assert_eq!(
        (status, body["error"]["message"].as_str()),
        (400, Some("The specified time range is empty."))
    );
    let (status, _) = post(json!({ "summary": "x", "start": { "date": "2026-05-01" }, "end": { "dateTime": "2026-05-01T09:00:00+02:00" } })).await;
    assert_eq!(status, 400, "date and dateTime do not mix");
    let (status, _) =
        post(json!({ "summary": "x", "start": { "dateTime": "2026-05-01T10:00:00+02:00" } })).await;
    assert_eq!(status, 400, "end is required");
    let (status, body) = post(json!({
        "summary": "x",
        "start": { "dateTime": "2026-05-01T10:00:00+02:00" },
        "end": { "dateTime": "2026-05-01T11:00:00+02:00" },
        "recurrence": ["RRULE:FREQ=WEEKLY"],
    }))
    .await;
    assert_eq!(
        (status, body["error"]["message"].as_str()),
        (400, Some("Missing time zone definition for start time.")),
        "recurring events need a zone"
    );

    let (status, event) = post(json!({
        "summary": "Planning",
        "location": "Room 1",
        "start": { "dateTime": "2026-05-01T10:00:00", "timeZone": "Europe/Berlin" },
        "end": { "dateTime": "2026-05-01T11:00:00", "timeZone": "Europe/Berlin" },
        "attendees": [{ "email": "grace@example.org" }, { "email": USER_EMAIL }],
    }))
    .await;
    assert_eq!(status, 200, "{event}");
    assert_eq!(event["start"]["dateTime"], "2026-05-01T10:00:00+02:00");
    assert_eq!(
        (event["status"].as_str(), event["kind"].as_str()),
        (Some("confirmed"), Some("calendar#event"))
    );
    assert_eq!(event["attendees"][0]["responseStatus"], "needsAction");
    assert_eq!(event["attendees"][1]["organizer"], true);
    let id = event["id"].as_str().expect("id").to_owned();
    assert!(fake.events().iter().any(|e| e["id"] == id.as_str()));

    let path = format!("{EVENTS_PATH}/{id}");
    let (status, patched) =
        send_json(&fake, "PATCH", &token, &path, &json!({ "summary": "Planning (moved)" })).await;
    assert_eq!(
        (status, patched["sequence"].as_u64(), patched["location"].as_str()),
        (200, Some(0), Some("Room 1"))
    );
    let (_, patched) = send_json(
        &fake,
        "PATCH",
        &token,
        &path,
        &json!({ "end": { "dateTime": "2026-05-01T12:00:00+02:00" } }),
    )
    .await;
    assert_eq!(patched["sequence"], 1, "a time change bumps the sequence");
    let (status, _) = send_json(
        &fake,
        "PATCH",
        &token,
        &path,
        &json!({ "end": { "dateTime": "2026-05-01T08:00:00+02:00" } }),
    )
    .await;
    assert_eq!(status, 400);
    let (status, updated) = send_json(
        &fake,
        "PUT",
        &token,
        &path,
        &json!({ "summary": "Replaced", "start": { "date": "2026-05-02" }, "end": { "date": "2026-05-03" } }),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert!(updated.get("location").is_none(), "an update replaces the whole event");
    assert_eq!(updated["id"], id.as_str());

    let response =
        client().delete(format!("{}{path}", fake.base_url())).bearer_auth(&token).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 204);
    let (_, body) = list(&fake, &token, &[("q", "Replaced")]).await;
    assert!(items(&body).is_empty());
    let (_, body) = list(&fake, &token, &[("q", "Replaced"), ("showDeleted", "true")]).await;
    assert_eq!(items(&body)[0]["status"], "cancelled");
    let response =
        client().delete(format!("{}{path}", fake.base_url())).bearer_auth(&token).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 410);

    let readonly = fake.mint_access_token(&[CALENDAR_READONLY]);
    assert_eq!(send_json(&fake, "PATCH", &readonly, &path, &json!({ "summary": "no" })).await.0, 403);
    let gmail = fake.mint_access_token(&[GMAIL_READONLY]);
    assert_eq!(get(&fake, &gmail, EVENTS_PATH).await.0, 403);
}

#[tokio::test]
async fn quick_add_and_free_busy() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = fake.mint_access_token(&[CALENDAR]);
    let url = format!(
        "{}{EVENTS_PATH}/quickAdd?{}",
        fake.base_url(),
        q(&[("text", "Lunch with Ana tomorrow 12:30")])
    );
    let response = client().post(url).bearer_auth(&token).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 200);
    let event: Value = response.json().await.expect("json");
    assert_eq!(event["summary"], "Lunch with Ana");
    let start: Timestamp = event["start"]["dateTime"].as_str().expect("dateTime").parse().expect("t");
    let tomorrow = today().checked_add(1.day()).expect("date");
    assert_eq!(start.to_zoned(berlin()).datetime(), tomorrow.to_datetime(Time::constant(12, 30, 0, 0)));

    // A date of its own, derived from today and past the free/busy week below: a fixed date
    // would one day fall on a seeded event inside that week (it did, on 2026-11-29).
    let dentist = today().checked_add(30.days()).expect("date");
    let text = format!("Dentist on {dentist}");
    let url = format!("{}{EVENTS_PATH}/quickAdd?{}", fake.base_url(), q(&[("text", text.as_str())]));
    let event: Value =
        client().post(url).bearer_auth(&token).send().await.expect("send").json().await.expect("json");
    let next_day = dentist.checked_add(1.day()).expect("date").to_string();
    assert_eq!(
        (event["start"]["date"].as_str(), event["end"]["date"].as_str()),
        (Some(dentist.to_string().as_str()), Some(next_day.as_str()))
    );

    let from = midnight(today());
    let to = midnight(today().checked_add(7.days()).expect("date"));
    let body = json!({ "timeMin": from, "timeMax": to, "timeZone": CALENDAR_TIME_ZONE, "items": [{ "id": "primary" }, { "id": "bob@example.org" }] });
    let (status, answer) = send_json(&fake, "POST", &token, "/calendar/v3/freeBusy", &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["kind"], "calendar#freeBusy");
    assert_eq!(answer["calendars"]["bob@example.org"]["errors"][0]["reason"], "notFound");
    let busy: Vec<(Timestamp, Timestamp)> = answer["calendars"]["primary"]["busy"]
        .as_array()
        .expect("busy")
        .iter()
        .map(|b| {
            (
                b["start"].as_str().expect("s").parse().expect("t"),
                b["end"].as_str().expect("e").parse().expect("t"),
            )
        })
        .collect();
    let at = |date: Date, h: i8, m: i8| {
        date.to_datetime(Time::constant(h, m, 0, 0)).to_zoned(berlin()).expect("z").timestamp()
    };
    let covered = |t: Timestamp| busy.iter().any(|(s, e)| *s <= t && t < *e);
    assert!(covered(at(today(), 12, 45)), "lunch is busy: {busy:?}");
    assert!(covered(at(tomorrow, 12, 45)), "the quick-added lunch is busy");
    assert!(
        covered(at(today().checked_add(2.days()).expect("d"), 8, 30)),
        "the daily focus series is expanded"
    );
    let birthday = today().checked_add(4.days()).expect("date");
    assert!(!covered(at(birthday, 15, 0)), "a transparent all-day event is free: {busy:?}");
    assert!(busy.windows(2).all(|w| w[0].1 < w[1].0), "merged and ordered");

    let (status, _) = send_json(
        &fake,
        "POST",
        &token,
        "/calendar/v3/freeBusy",
        &json!({ "timeMin": "2026-01-01T00:00:00", "timeMax": to, "items": [] }),
    )
    .await;
    assert_eq!(status, 400);
    let freebusy_only = fake.mint_access_token(&["https://www.googleapis.com/auth/calendar.freebusy"]);
    assert_eq!(send_json(&fake, "POST", &freebusy_only, "/calendar/v3/freeBusy", &body).await.0, 200);
    assert_eq!(get(&fake, &freebusy_only, EVENTS_PATH).await.0, 403);
}
