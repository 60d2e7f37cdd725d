//! RFC 5545 recurrence, the subset Calendar events use most: `RRULE` with FREQ=DAILY, WEEKLY,
//! MONTHLY or YEARLY, INTERVAL, COUNT, UNTIL and BYDAY (weekly and daily), and `EXDATE`.
//! Instances keep their local time in the event's zone, so a weekly 10:00 stays 10:00 across DST.

use jiff::civil::{Date, DateTime, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Freq {
    Daily,
    Weekly,
    Monthly,
    Yearly,
}

enum Until {
    Date(Date),
    Instant(Timestamp),
    Local(DateTime),
}

struct Rule {
    freq: Freq,
    interval: i32,
    count: Option<usize>,
    until: Option<Until>,
    by_day: Vec<Weekday>,
}

enum Exdate {
    Date(Date),
    Instant(Timestamp),
    Local(DateTime, Option<TimeZone>),
}

/// `YYYYMMDD`, `YYYYMMDDTHHMMSS` or `YYYYMMDDTHHMMSSZ`.
fn basic(value: &str) -> Option<(Date, Option<(DateTime, bool)>)> {
    let digits = |from: usize, len: usize| value.get(from..from + len)?.parse::<i16>().ok();
    let date = Date::new(digits(0, 4)?, i8::try_from(digits(4, 2)?).ok()?, i8::try_from(digits(6, 2)?).ok()?)
        .ok()?;
    if value.len() == 8 {
        return Some((date, None));
    }
    if value.as_bytes().get(8) != Some(&b'T') {
        return None;
    }
    let time = jiff::civil::Time::new(
        i8::try_from(digits(9, 2)?).ok()?,
        i8::try_from(digits(11, 2)?).ok()?,
        i8::try_from(digits(13, 2)?).ok()?,
        0,
    )
    .ok()?;
    Some((date, Some((date.to_datetime(time), value.ends_with('Z')))))
}

fn weekday(code: &str) -> Option<Weekday> {
    // A numeric prefix (`1MO`, monthly rules) is not supported; the day alone is used.
    let code = code.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
    Some(match code {
        "MO" => Weekday::Monday,
        "TU" => Weekday::Tuesday,
        "WE" => Weekday::Wednesday,
        "TH" => Weekday::Thursday,
        "FR" => Weekday::Friday,
        "SA" => Weekday::Saturday,
        "SU" => Weekday::Sunday,
        _ => return None,
    })
}

fn parse_rule(text: &str) -> Option<Rule> {
    let mut rule = Rule { freq: Freq::Daily, interval: 1, count: None, until: None, by_day: Vec::new() };
    let mut freq = None;
    for (key, value) in text.split(';').filter_map(|p| p.split_once('=')) {
        match key {
            "FREQ" => {
                freq = Some(match value {
                    "DAILY" => Freq::Daily,
                    "WEEKLY" => Freq::Weekly,
                    "MONTHLY" => Freq::Monthly,
                    "YEARLY" => Freq::Yearly,
                    _ => return None,
                })
            }
            "INTERVAL" => rule.interval = value.parse().ok().filter(|i| *i > 0)?,
            "COUNT" => rule.count = Some(value.parse().ok()?),
            "UNTIL" => {
                rule.until = Some(match basic(value)? {
                    (date, None) => Until::Date(date),
                    (_, Some((dt, true))) => Until::Instant(dt.to_zoned(TimeZone::UTC).ok()?.timestamp()),
                    (_, Some((dt, false))) => Until::Local(dt),
                })
            }
            "BYDAY" => rule.by_day = value.split(',').filter_map(weekday).collect(),
            _ => {}
        }
    }
    rule.freq = freq?;
    Some(rule)
}

fn parse_exdates(line: &str) -> Vec<Exdate> {
    let Some((params, values)) = line.split_once(':') else {
        return Vec::new();
    };
    let zone =
        params.split(';').find_map(|p| p.strip_prefix("TZID=")).and_then(|name| TimeZone::get(name).ok());
    values
        .split(',')
        .filter_map(|v| basic(v.trim()))
        .filter_map(|parsed| match parsed {
            (date, None) => Some(Exdate::Date(date)),
            (_, Some((dt, true))) => dt.to_zoned(TimeZone::UTC).ok().map(|z| Exdate::Instant(z.timestamp())),
            (_, Some((dt, false))) => Some(Exdate::Local(dt, zone.clone())),
        })
        .collect()
}

fn instant(dt: DateTime, zone: &TimeZone) -> Option<Timestamp> {
    dt.to_zoned(zone.clone()).ok().map(|z| z.timestamp())
}

/// The dates the rule's k-th period yields, in order (before BYDAY filtering for daily rules).
fn period_dates(rule: &Rule, first: Date, k: i32) -> Vec<Date> {
    let step = k * rule.interval;
    match rule.freq {
        Freq::Daily => first.checked_add(i64::from(step).days()).ok().into_iter().collect(),
        Freq::Weekly => {
            let days = if rule.by_day.is_empty() { vec![first.weekday()] } else { rule.by_day.clone() };
            let monday = first.checked_sub(i64::from(first.weekday().to_monday_zero_offset()).days()).ok();
            let Some(week) = monday.and_then(|m| m.checked_add(i64::from(step * 7).days()).ok()) else {
                return Vec::new();
            };
            let mut dates: Vec<Date> = days
                .iter()
                .filter_map(|d| week.checked_add(i64::from(d.to_monday_zero_offset()).days()).ok())
                .filter(|d| *d >= first)
                .collect();
            dates.sort();
            dates.dedup();
            dates
        }
        // The same day of the month (or year); months without that day are skipped, as RFC 5545 says.
        Freq::Monthly => {
            let months = i32::from(first.month()) - 1 + step;
            let year = i32::from(first.year()) + months.div_euclid(12);
            let month = months.rem_euclid(12) + 1;
            match (i16::try_from(year), i8::try_from(month)) {
                (Ok(y), Ok(m)) => Date::new(y, m, first.day()).ok().into_iter().collect(),
                _ => Vec::new(),
            }
        }
        Freq::Yearly => i16::try_from(i32::from(first.year()) + step)
            .ok()
            .and_then(|y| Date::new(y, first.month(), first.day()).ok())
            .into_iter()
            .collect(),
    }
}

/// The local start of every instance before `horizon`, for an event whose first instance starts
/// at `first` in `zone` (midnight for all-day events), EXDATEs removed.
pub(crate) fn expand(
    first: DateTime,
    zone: &TimeZone,
    all_day: bool,
    recurrence: &[String],
    horizon: Timestamp,
) -> Vec<DateTime> {
    let rule = recurrence.iter().find_map(|line| line.strip_prefix("RRULE:")).and_then(parse_rule);
    let exdates: Vec<Exdate> =
        recurrence.iter().filter(|l| l.starts_with("EXDATE")).flat_map(|l| parse_exdates(l)).collect();
    let Some(rule) = rule else {
        return vec![first];
    };
    let excluded = |dt: DateTime| {
        exdates.iter().any(|ex| match ex {
            Exdate::Date(date) => dt.date() == *date,
            Exdate::Instant(at) => !all_day && instant(dt, zone) == Some(*at),
            Exdate::Local(local, ex_zone) => {
                let ex_zone = ex_zone.as_ref().unwrap_or(zone);
                if all_day {
                    local.date() == dt.date()
                } else {
                    instant(*local, ex_zone) == instant(dt, zone)
                }
            }
        })
    };
    let past_until = |dt: DateTime| match &rule.until {
        None => false,
        Some(Until::Date(date)) => dt.date() > *date,
        Some(Until::Local(local)) => dt > *local,
        Some(Until::Instant(at)) => instant(dt, zone).is_some_and(|t| t > *at),
    };
    let mut out = Vec::new();
    let mut generated = 0usize;
    // A bound on periods, so that a rule that never yields (BYDAY on a daily rule, say) ends.
    for k in 0..20_000 {
        for date in period_dates(&rule, first.date(), k) {
            if rule.freq == Freq::Daily && !rule.by_day.is_empty() && !rule.by_day.contains(&date.weekday()) {
                continue;
            }
            let dt = date.to_datetime(first.time());
            if past_until(dt) || rule.count.is_some_and(|c| generated >= c) {
                return out;
            }
            if instant(dt, zone).is_none_or(|t| t >= horizon) {
                return out;
            }
            generated += 1;
            if !excluded(dt) {
                out.push(dt);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn berlin() -> TimeZone {
        TimeZone::get("Europe/Berlin").expect("zone")
    }

    fn run(first: &str, rules: &[&str]) -> Vec<String> {
        let first: DateTime = first.parse().expect("datetime");
        let horizon: Timestamp = "2027-01-01T00:00:00Z".parse().expect("ts");
        let rules: Vec<String> = rules.iter().map(|r| (*r).to_owned()).collect();
        expand(first, &berlin(), false, &rules, horizon)
            .iter()
            .map(|d| d.strftime("%a %Y-%m-%d %H:%M").to_string())
            .collect()
    }

    #[test]
    fn weekly_with_interval_byday_and_count() {
        let got = run("2026-03-02T09:00", &["RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;COUNT=5"]);
        assert_eq!(
            got,
            [
                "Mon 2026-03-02 09:00",
                "Thu 2026-03-05 09:00",
                "Mon 2026-03-16 09:00",
                "Thu 2026-03-19 09:00",
                "Mon 2026-03-30 09:00"
            ]
        );
    }

    #[test]
    fn until_is_inclusive_and_local_time_survives_dst() {
        // Berlin moves to summer time on 2026-03-29.
        let got = run("2026-03-26T10:00", &["RRULE:FREQ=DAILY;UNTIL=20260330T080000Z"]);
        assert_eq!(got.len(), 5, "{got:?}");
        assert_eq!(got.last().map(String::as_str), Some("Mon 2026-03-30 10:00"));
        let first: DateTime = "2026-03-26T10:00".parse().expect("dt");
        let horizon: Timestamp = "2027-01-01T00:00:00Z".parse().expect("ts");
        let offsets: Vec<String> =
            expand(first, &berlin(), false, &["RRULE:FREQ=DAILY;COUNT=5".to_owned()], horizon)
                .into_iter()
                .map(|d| d.to_zoned(berlin()).expect("z").strftime("%:z").to_string())
                .collect();
        assert_eq!(offsets, ["+01:00", "+01:00", "+01:00", "+02:00", "+02:00"]);
    }

    #[test]
    fn exdates_in_any_form_remove_instances_but_count_towards_count() {
        let got = run(
            "2026-01-06T10:00",
            &[
                "RRULE:FREQ=WEEKLY;COUNT=4",
                "EXDATE;TZID=Europe/Berlin:20260113T100000",
                "EXDATE:20260120T090000Z",
            ],
        );
        assert_eq!(got, ["Tue 2026-01-06 10:00", "Tue 2026-01-27 10:00"]);
        let all_day = expand(
            "2026-01-01T00:00".parse().expect("dt"),
            &berlin(),
            true,
            &["RRULE:FREQ=DAILY;COUNT=3".to_owned(), "EXDATE;VALUE=DATE:20260102".to_owned()],
            "2027-01-01T00:00:00Z".parse().expect("ts"),
        );
        assert_eq!(all_day.len(), 2);
    }

    #[test]
    fn monthly_skips_months_without_the_day_and_the_horizon_ends_open_series() {
        let got = run("2026-01-31T08:00", &["RRULE:FREQ=MONTHLY;COUNT=4"]);
        assert_eq!(
            got,
            ["Sat 2026-01-31 08:00", "Tue 2026-03-31 08:00", "Sun 2026-05-31 08:00", "Fri 2026-07-31 08:00"]
        );
        assert_eq!(run("2026-12-28T08:00", &["RRULE:FREQ=DAILY"]).len(), 4, "until the horizon");
        assert_eq!(
            run("2026-12-28T08:00", &["RRULE:FREQ=BOGUS"]).len(),
            1,
            "an unknown rule: the event alone"
        );
    }
}
