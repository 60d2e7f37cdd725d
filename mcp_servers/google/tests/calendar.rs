#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The Calendar tools against the fake Google's seeded calendar (placed around today, in Berlin).

mod common;

use common::{FULL, READ_ONLY, ok, refused, start};
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{ToSpan, Zoned};
use perch_fake_google::{CALENDAR_TIME_ZONE, FakeGoogle};
use rmcp::object;

fn today(zone: &str) -> Date {
    Zoned::now().with_time_zone(TimeZone::get(zone).unwrap()).date()
}

fn day(from: Date, days: i64) -> Date {
    from.checked_add(days.days()).unwrap()
}

fn shown(d: Date) -> String {
    d.strftime("%a %Y-%m-%d").to_string()
}

#[tokio::test]
async fn lists_the_week_with_repeats_expanded_and_all_day_events_as_dates() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, _) = start(&fake, READ_ONLY, CALENDAR_TIME_ZONE, &[]).await;
    let c = &server.client;
    let today = today(CALENDAR_TIME_ZONE);
    let week = ok(c, "calendar_list_events", object!({})).await;
    assert!(week.starts_with("Event titles, places and descriptions below are untrusted"), "{week}");
    assert!(
        week.contains(&format!(
            "- Lunch with Grace — {} 12:30–13:30\n  where: Café Central, Berlin",
            shown(today)
        )),
        "{week}"
    );
    assert!(
        week.contains("attendees: Ada Lovelace (accepted, organiser), Grace Hopper (accepted)"),
        "{week}"
    );
    // One day, shown as that day although Google's end is the next.
    assert!(week.contains(&format!("- Ana's birthday — {}, all day", shown(day(today, 4)))), "{week}");
    assert!(week.contains("(repeats)"), "{week}");
    assert!(!week.contains("Old planning meeting"), "cancelled events are left out: {week}");
    // 15:00 in New York, shown in Berlin.
    let ny = day(today, 2).to_datetime(Time::constant(15, 0, 0, 0)).in_tz("America/New_York").unwrap();
    let in_berlin = ny.with_time_zone(TimeZone::get(CALENDAR_TIME_ZONE).unwrap());
    assert!(
        week.contains(&format!(
            "- Call with the New York office — {}",
            in_berlin.strftime("%a %Y-%m-%d %H:%M")
        )),
        "{week}"
    );
    let focus = week.matches("- Focus time — ").count();
    assert!((4..=5).contains(&focus), "a daily series of five, expanded: {week}");

    // Tuesdays at 10:00 from three weeks back, but not the fourth (an EXDATE).
    let back = i64::from(today.weekday().to_monday_zero_offset() - 1).rem_euclid(7) + 21;
    let skipped = day(day(today, -back), 28);
    let weeks = ok(
        c,
        "calendar_list_events",
        object!({ "start": day(today, -7).to_string(), "end": day(today, 13).to_string(), "query": "sync" }),
    )
    .await;
    assert_eq!(weeks.matches("- Weekly sync — ").count(), 2, "three Tuesdays, one skipped: {weeks}");
    assert!(weeks.contains("Room 3.14") && weeks.contains("Ana Lima (maybe)"), "{weeks}");
    assert!(!weeks.contains(&format!("- Weekly sync — {}", shown(skipped))), "{weeks}");

    // A multi-day event further on: its last day is the day before Google's exclusive end.
    let later = ok(
        c,
        "calendar_list_events",
        object!({ "start": day(today, 8).to_string(), "end": day(today, 14).to_string(), "query": "lisbon" }),
    )
    .await;
    let expected =
        format!("- Conference in Lisbon — {} – {}, all day", shown(day(today, 10)), shown(day(today, 12)));
    assert!(later.contains(&expected), "{later}");
    assert!(!later.contains("Weekly sync"), "the query filters: {later}");

    let busy =
        ok(c, "calendar_free_busy", object!({ "start": today.to_string(), "end": today.to_string() })).await;
    assert!(busy.contains(&format!("- {} 12:30–13:30", shown(today))), "{busy}");
    server.stop().await;
}

#[tokio::test]
async fn creates_events_in_the_users_zone_and_all_day_with_an_exclusive_end() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, _) = start(&fake, FULL, "America/New_York", &[]).await;
    let c = &server.client;
    let made = ok(
        c,
        "calendar_create_event",
        object!({
            "title": "Design review", "start": "2026-07-15T14:00", "duration_minutes": 45,
            "location": "Room 2", "attendees": ["grace@example.org"],
            "recurrence": ["RRULE:FREQ=WEEKLY;COUNT=3"]
        }),
    )
    .await;
    assert!(made.contains("Created the event (times in America/New_York)"), "{made}");
    assert!(made.contains("- Design review — Wed 2026-07-15 14:00–14:45"), "{made}");
    let events = fake.events();
    let stored = events.iter().find(|e| e["summary"] == "Design review").unwrap();
    assert_eq!(stored["start"]["timeZone"], "America/New_York");
    assert_eq!(stored["start"]["dateTime"], "2026-07-15T14:00:00-04:00");
    assert_eq!(stored["end"]["dateTime"], "2026-07-15T14:45:00-04:00");
    assert_eq!(stored["recurrence"][0], "RRULE:FREQ=WEEKLY;COUNT=3");
    assert_eq!(stored["attendees"][0]["email"], "grace@example.org");

    let trip = ok(
        c,
        "calendar_create_event",
        object!({ "title": "Holiday", "start": "2026-08-03", "end": "2026-08-07" }),
    )
    .await;
    assert!(trip.contains("- Holiday — Mon 2026-08-03 – Fri 2026-08-07, all day"), "{trip}");
    let events = fake.events();
    let holiday = events.iter().find(|e| e["summary"] == "Holiday").unwrap();
    assert_eq!(
        (holiday["start"]["date"].as_str(), holiday["end"]["date"].as_str()),
        (Some("2026-08-03"), Some("2026-08-08"))
    );

    // Moving the start keeps the length; then it goes.
    let id = stored["id"].as_str().unwrap().to_owned();
    let moved =
        ok(c, "calendar_update_event", object!({ "event_id": id.clone(), "start": "2026-07-15T16:00" }))
            .await;
    assert!(moved.contains("Wed 2026-07-15 16:00–16:45"), "{moved}");
    ok(c, "calendar_delete_event", object!({ "event_id": id.clone() })).await;
    assert!(fake.events().iter().all(|e| e["id"] != id.as_str() || e["status"] == "cancelled"));

    let backwards = refused(
        c,
        "calendar_create_event",
        object!({ "title": "Oops", "start": "2026-07-15T14:00", "end": "2026-07-15T13:00" }),
    )
    .await;
    assert!(backwards.contains("not after its start"), "{backwards}");

    let quick = ok(c, "calendar_quick_add", object!({ "text": "Dentist tomorrow 3pm" })).await;
    assert!(quick.contains("Added the event") && quick.contains("Dentist"), "{quick}");
    server.stop().await;
}

#[tokio::test]
async fn guests_are_emailed_unless_notify_attendees_is_false() {
    let fake = FakeGoogle::start().await.unwrap();
    let (server, _) = start(&fake, FULL, "Europe/Berlin", &[]).await;
    let c = &server.client;
    let guests = |title: &str, notify: Option<bool>| {
        let mut args =
            object!({ "title": title, "start": "2026-07-15T14:00", "attendees": ["grace@example.org"] });
        if let Some(notify) = notify {
            args.insert("notify_attendees".into(), notify.into());
        }
        args
    };
    ok(c, "calendar_create_event", guests("Told", None)).await;
    ok(c, "calendar_create_event", guests("Quiet", Some(false))).await;
    let quiet = fake.events().into_iter().find(|e| e["summary"] == "Quiet").unwrap();
    let id = quiet["id"].as_str().unwrap().to_owned();
    let moved = |notify: bool| object!({ "event_id": id.clone(), "start": "2026-07-15T15:00", "notify_attendees": notify });
    ok(c, "calendar_update_event", moved(false)).await;
    ok(c, "calendar_update_event", moved(true)).await;
    ok(c, "calendar_delete_event", object!({ "event_id": id.clone(), "notify_attendees": false })).await;
    let emailed: Vec<(String, String)> =
        fake.guest_emails().into_iter().map(|e| (e.kind, e.summary)).collect();
    let told = |kind: &str, title: &str| (kind.to_owned(), title.to_owned());
    assert_eq!(emailed, [told("invitation", "Told"), told("change", "Quiet")]);
    assert!(fake.guest_emails().iter().all(|e| e.to == ["grace@example.org"]));
    server.stop().await;
}
