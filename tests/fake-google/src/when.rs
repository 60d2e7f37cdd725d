//! Event times as Calendar takes and gives them: `{"dateTime", "timeZone"}` or `{"date"}`, the
//! checks Google makes on them, and the concrete instances of an event (recurring ones
//! expanded).

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan};
use serde_json::{Value, json};

use crate::errors;
use crate::http::Response;

#[derive(Clone)]
pub(crate) enum When {
    Date(Date),
    At(Timestamp),
}

impl When {
    /// Where this time begins, all-day dates at midnight in the calendar's zone.
    pub fn instant(&self, calendar_zone: &TimeZone) -> Timestamp {
        match self {
            When::At(instant) => *instant,
            When::Date(date) => {
                date.to_zoned(calendar_zone.clone()).map(|z| z.timestamp()).unwrap_or_default()
            }
        }
    }
}

pub(crate) fn zone(name: &str) -> Option<TimeZone> {
    TimeZone::get(name).ok()
}

/// RFC 3339 with the offset `zone` has at that instant; `Z` in UTC, as Google writes it.
pub(crate) fn format(at: Timestamp, zone: &TimeZone) -> String {
    let zoned = at.to_zoned(zone.clone());
    if zoned.offset() == jiff::tz::Offset::UTC && zone.iana_name() == Some("UTC") {
        zoned.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        zoned.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
    }
}

/// `updated`/`created` timestamps: UTC with milliseconds.
pub(crate) fn stamp(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// An RFC 3339 time that must carry its offset (query parameters such as timeMin).
pub(crate) fn parse_instant(value: &str) -> Option<Timestamp> {
    value.parse::<Timestamp>().ok()
}

/// Reads `start` or `end` (`which`) of an event as Google does.
pub(crate) fn parse(value: &Value, which: &str) -> Result<When, Response> {
    if !value.is_object() {
        return Err(errors::required(&format!("Missing {which} time.")));
    }
    let zone_field = value["timeZone"].as_str();
    let zone = match zone_field {
        Some(name) => Some(zone(name).ok_or_else(|| {
            errors::api(400, &format!("Invalid time zone definition for {which} time."), "invalid")
        })?),
        None => None,
    };
    let invalid = || errors::api(400, &format!("Invalid {which} time."), "invalid");
    match (value["date"].as_str(), value["dateTime"].as_str()) {
        (Some(_), Some(_)) => Err(invalid()),
        (Some(date), None) => date.parse::<Date>().map(When::Date).map_err(|_| invalid()),
        (None, Some(date_time)) => {
            if let Some(instant) = parse_instant(date_time) {
                return Ok(When::At(instant));
            }
            let local: DateTime = date_time.parse().map_err(|_| invalid())?;
            let Some(zone) = zone else {
                return Err(errors::required(&format!("Missing time zone definition for {which} time.")));
            };
            let instant = local.to_zoned(zone.clone()).map_err(|_| invalid())?.timestamp();
            Ok(When::At(instant))
        }
        (None, None) => Err(errors::required(&format!("Missing {which} time."))),
    }
}

/// `start` and `end` checked together: both present, of one kind, and not backwards.
pub(crate) fn parse_span(event: &Value) -> Result<(When, When), Response> {
    let start = parse(&event["start"], "start")?;
    let end = parse(&event["end"], "end")?;
    let backwards = match (&start, &end) {
        (When::Date(s), When::Date(e)) => e < s,
        (When::At(s), When::At(e)) => e < s,
        _ => {
            return Err(errors::bad_request(
                "Start and end times must either both be date or both be dateTime.",
            ));
        }
    };
    if backwards {
        return Err(errors::api(400, "The specified time range is empty.", "timeRangeEmpty"));
    }
    Ok((start, end))
}

/// One concrete occurrence of an event.
pub(crate) struct Instance {
    pub start: Timestamp,
    pub end: Timestamp,
    pub json: Value,
}

fn render_time(field: &Value, when: &When, out_zone: &TimeZone) -> Value {
    match when {
        When::Date(date) => json!({ "date": date.to_string() }),
        When::At(instant) => {
            let mut out = json!({ "dateTime": format(*instant, out_zone) });
            if let Some(name) = field["timeZone"].as_str() {
                out["timeZone"] = json!(name);
            }
            out
        }
    }
}

/// The event as an answer shows it: times in `out_zone`.
pub(crate) fn render(event: &Value, out_zone: &TimeZone) -> Value {
    let mut out = event.clone();
    for which in ["start", "end"] {
        if let Ok(when) = parse(&event[which], which) {
            out[which] = render_time(&event[which], &when, out_zone);
        }
    }
    out
}

/// The instances of `event` that overlap `[from, to)`: the event itself, or, for a recurring
/// event with `expand`, each occurrence with Google's instance fields.
pub(crate) fn instances(
    event: &Value,
    calendar_zone: &TimeZone,
    out_zone: &TimeZone,
    from: Option<Timestamp>,
    to: Option<Timestamp>,
    expand: bool,
) -> Vec<Instance> {
    let Ok((start, end)) = parse_span(event) else {
        return Vec::new();
    };
    let overlaps = |s: Timestamp, e: Timestamp| {
        from.is_none_or(|f| e > f || (s == e && s >= f)) && to.is_none_or(|t| s < t)
    };
    let recurrence: Vec<String> = event["recurrence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    let (s0, e0) = (start.instant(calendar_zone), end.instant(calendar_zone));
    if recurrence.is_empty() {
        return if overlaps(s0, e0) {
            vec![Instance { start: s0, end: e0, json: render(event, out_zone) }]
        } else {
            Vec::new()
        };
    }
    let series_zone =
        event["start"]["timeZone"].as_str().and_then(zone).unwrap_or_else(|| calendar_zone.clone());
    let first = s0.to_zoned(series_zone.clone()).datetime();
    let horizon = to.unwrap_or_else(|| s0.max(Timestamp::now()) + SignedDuration::from_hours(24 * 366));
    let all_day = matches!(start, When::Date(_));
    let days = match (&start, &end) {
        (When::Date(s), When::Date(e)) => s.until(*e).map(|span| span.get_days()).unwrap_or(1),
        _ => 0,
    };
    let duration = s0.duration_until(e0);
    let mut out = Vec::new();
    let mut master_shown = false;
    for local in crate::recur::expand(first, &series_zone, all_day, &recurrence, horizon) {
        let (when_start, when_end) = if all_day {
            let date = local.date();
            let end_date = date.checked_add(i64::from(days).days()).unwrap_or(date);
            (When::Date(date), When::Date(end_date))
        } else {
            let Ok(at) = local.to_zoned(series_zone.clone()) else { continue };
            let at = at.timestamp();
            (When::At(at), When::At(at + duration))
        };
        let (s, e) = (when_start.instant(calendar_zone), when_end.instant(calendar_zone));
        if !overlaps(s, e) {
            continue;
        }
        if !expand {
            if !master_shown {
                out.push(Instance { start: s0, end: e0, json: render(event, out_zone) });
                master_shown = true;
            }
            continue;
        }
        let mut json = render(event, out_zone);
        if let Some(map) = json.as_object_mut() {
            map.remove("recurrence");
        }
        let id = event["id"].as_str().unwrap_or_default();
        let suffix = match &when_start {
            When::Date(date) => date.strftime("%Y%m%d").to_string(),
            When::At(instant) => instant.strftime("%Y%m%dT%H%M%SZ").to_string(),
        };
        json["id"] = json!(format!("{id}_{suffix}"));
        json["recurringEventId"] = json!(id);
        json["start"] = render_time(&event["start"], &when_start, out_zone);
        json["end"] = render_time(&event["end"], &when_end, out_zone);
        json["originalStartTime"] = json["start"].clone();
        out.push(Instance { start: s, end: e, json });
    }
    out
}
