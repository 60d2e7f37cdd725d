//! Times as the user means them and as Google wants them. A date-time without an offset is read in
//! the user's zone (a time skipped by a DST change moves forward, a repeated one takes the first);
//! times are shown in the user's zone; all-day events are dates whose end Google keeps exclusive,
//! shown inclusive.

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan, Zoned};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::GoogleError;

/// A point the user gave: a whole day, or an instant.
#[derive(Debug, Clone, PartialEq)]
pub enum When {
    Day(Date),
    At(Zoned),
}

/// Reads `2026-03-09`, `2026-03-09T09:00` (or with a space), `…:00Z`, `…+01:00`, `today`,
/// `tomorrow` and `now`; local times in `tz`.
pub fn parse_when(input: &str, tz: &TimeZone) -> Result<When, GoogleError> {
    let text = input.trim();
    let today = Zoned::now().with_time_zone(tz.clone()).date();
    match text.to_ascii_lowercase().as_str() {
        "today" => return Ok(When::Day(today)),
        "tomorrow" => return Ok(When::Day(today.tomorrow().map_err(|e| invalid(input, e))?)),
        "now" => return Ok(When::At(Zoned::now().with_time_zone(tz.clone()))),
        _ => {}
    }
    if let Ok(day) =
        text.parse::<Date>().map_err(|_| ()).and_then(|d| if text.len() == 10 { Ok(d) } else { Err(()) })
    {
        return Ok(When::Day(day));
    }
    let normalized = text.replacen(' ', "T", 1);
    if let Ok(ts) = normalized.parse::<Timestamp>() {
        return Ok(When::At(ts.to_zoned(tz.clone())));
    }
    if let Ok(zoned) = normalized.parse::<Zoned>() {
        return Ok(When::At(zoned.with_time_zone(tz.clone())));
    }
    if let Ok(dt) = normalized.parse::<DateTime>() {
        return dt.to_zoned(tz.clone()).map(When::At).map_err(|e| invalid(input, e));
    }
    text.parse::<Date>().map(When::Day).map_err(|e| invalid(input, e))
}

fn invalid(input: &str, e: impl std::fmt::Display) -> GoogleError {
    GoogleError::invalid(format!(
        "{input:?} is not a date or time Perch understands ({e}); write 2026-03-09, 2026-03-09T09:30 \
         or 2026-03-09T09:30:00+01:00"
    ))
}

/// The instant a range bound stands for: a day's start, or (for an end) the start of the next day,
/// so that an end date is included.
pub fn range_bound(when: &When, tz: &TimeZone, is_end: bool) -> Result<Zoned, GoogleError> {
    match when {
        When::At(zoned) => Ok(zoned.clone()),
        When::Day(day) => {
            let day = if is_end { day.tomorrow().map_err(|e| invalid(&day.to_string(), e))? } else { *day };
            day.to_zoned(tz.clone()).map_err(|e| invalid(&day.to_string(), e))
        }
    }
}

/// RFC 3339 with the numeric offset, as Google's `dateTime`, `timeMin` and `timeMax` take it.
pub fn rfc3339(zoned: &Zoned) -> String {
    zoned.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

/// How times are shown: `Mon 2026-03-09 09:00`.
pub fn show(zoned: &Zoned) -> String {
    zoned.strftime("%a %Y-%m-%d %H:%M").to_string()
}

pub fn show_day(day: Date) -> String {
    day.strftime("%a %Y-%m-%d").to_string()
}

/// A Gmail `internalDate` (milliseconds since the epoch, as a string) in the user's zone.
pub fn show_millis(millis: &str, tz: &TimeZone) -> Option<String> {
    let ts = Timestamp::from_millisecond(millis.trim().parse().ok()?).ok()?;
    Some(show(&ts.to_zoned(tz.clone())))
}

/// An event's start or end as Google gives it: `{"date"}` for all-day, else `{"dateTime"}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EventTime {
    pub date: Option<String>,
    pub date_time: Option<String>,
    pub time_zone: Option<String>,
}

impl EventTime {
    pub fn day(&self) -> Option<Date> {
        self.date.as_deref()?.parse().ok()
    }

    pub fn instant(&self, tz: &TimeZone) -> Option<Zoned> {
        let ts: Timestamp = self.date_time.as_deref()?.parse().ok()?;
        Some(ts.to_zoned(tz.clone()))
    }
}

/// When an event happens, in the user's zone; all-day events as dates with the exclusive end made
/// inclusive (`{"date": "2026-03-10"}` as the end of a one-day event on the 9th).
pub fn show_span(start: &EventTime, end: &EventTime, tz: &TimeZone) -> String {
    if let Some(first) = start.day() {
        let last = end.day().and_then(|e| e.yesterday().ok()).filter(|last| *last > first).unwrap_or(first);
        return if last == first {
            format!("{}, all day", show_day(first))
        } else {
            format!("{} – {}, all day", show_day(first), show_day(last))
        };
    }
    match (start.instant(tz), end.instant(tz)) {
        (Some(s), Some(e)) if s.date() == e.date() => format!("{}–{}", show(&s), e.strftime("%H:%M")),
        (Some(s), Some(e)) => format!("{} – {}", show(&s), show(&e)),
        (Some(s), None) => show(&s),
        _ => "(time not given)".into(),
    }
}

/// An event's start or end as Google takes it: a date for all-day events, else the instant with
/// its offset and the zone it was meant in (which recurring events need to follow DST).
pub fn event_time(when: &When, zone_name: &str) -> Value {
    match when {
        When::Day(day) => json!({ "date": day.to_string() }),
        When::At(zoned) => json!({ "dateTime": rfc3339(zoned), "timeZone": zone_name }),
    }
}

/// The exclusive end date Google requires for an all-day event whose last day is `last`.
pub fn exclusive_end(last: Date) -> Result<Date, GoogleError> {
    last.checked_add(1.day()).map_err(|e| invalid(&last.to_string(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tz(name: &str) -> TimeZone {
        TimeZone::get(name).unwrap()
    }

    fn at(s: &str) -> EventTime {
        EventTime { date_time: Some(s.into()), ..EventTime::default() }
    }

    fn day(s: &str) -> EventTime {
        EventTime { date: Some(s.into()), ..EventTime::default() }
    }

    #[test]
    fn all_day_events_show_their_last_day_not_googles_exclusive_end() {
        let paris = tz("Europe/Paris");
        assert_eq!(show_span(&day("2026-03-09"), &day("2026-03-10"), &paris), "Mon 2026-03-09, all day");
        assert_eq!(
            show_span(&day("2026-03-09"), &day("2026-03-12"), &paris),
            "Mon 2026-03-09 – Wed 2026-03-11, all day"
        );
        assert_eq!(exclusive_end("2026-02-28".parse().unwrap()).unwrap().to_string(), "2026-03-01");
    }

    #[test]
    fn a_zoned_time_is_shown_in_the_users_zone() {
        let paris = tz("Europe/Paris");
        let span = show_span(&at("2026-03-09T09:00:00-04:00"), &at("2026-03-09T10:30:00-04:00"), &paris);
        assert_eq!(span, "Mon 2026-03-09 14:00–15:30");
        let overnight =
            show_span(&at("2026-03-09T22:00:00Z"), &at("2026-03-10T01:00:00Z"), &tz("Asia/Tokyo"));
        assert_eq!(overnight, "Tue 2026-03-10 07:00–10:00");
        assert_eq!(show_millis("1773046800000", &paris).unwrap(), "Mon 2026-03-09 10:00");
    }

    #[test]
    fn a_time_without_offset_is_read_in_the_users_zone() {
        let ny = tz("America/New_York");
        let When::At(z) = parse_when("2026-03-09T09:30", &ny).unwrap() else { panic!() };
        assert_eq!(rfc3339(&z), "2026-03-09T09:30:00-04:00");
        let When::At(spaced) = parse_when("2026-01-09 09:30", &ny).unwrap() else { panic!() };
        assert_eq!(rfc3339(&spaced), "2026-01-09T09:30:00-05:00");
        let When::At(given) = parse_when("2026-03-09T09:30:00Z", &ny).unwrap() else { panic!() };
        assert_eq!(rfc3339(&given), "2026-03-09T05:30:00-04:00", "an explicit offset is kept as the instant");
        assert_eq!(parse_when("2026-03-09", &ny).unwrap(), When::Day("2026-03-09".parse().unwrap()));
        assert!(parse_when("next tuesday-ish", &ny).unwrap_err().to_string().contains("2026-03-09T09:30"));
    }

    #[test]
    fn dst_gaps_move_forward_and_overlaps_take_the_first() {
        let berlin = tz("Europe/Berlin");
        let When::At(gap) = parse_when("2026-03-29T02:30", &berlin).unwrap() else { panic!() };
        assert_eq!(rfc3339(&gap), "2026-03-29T03:30:00+02:00");
        let When::At(fold) = parse_when("2026-10-25T02:30", &berlin).unwrap() else { panic!() };
        assert_eq!(rfc3339(&fold), "2026-10-25T02:30:00+02:00");
        // A day's range across the spring change is 23 hours long.
        let d = When::Day("2026-03-29".parse().unwrap());
        let (start, end) =
            (range_bound(&d, &berlin, false).unwrap(), range_bound(&d, &berlin, true).unwrap());
        assert_eq!(
            (rfc3339(&start), rfc3339(&end)),
            ("2026-03-29T00:00:00+01:00".into(), "2026-03-30T00:00:00+02:00".into())
        );
        assert_eq!(event_time(&When::At(gap), "Europe/Berlin")["timeZone"], "Europe/Berlin");
    }
}
