//! `strftime_now(format)` for chat templates that put today's date in the system prompt
//! (e.g. `strftime_now("%d %b %Y")`). The common C specifiers, in UTC: the date is
//! context for the model, and a time-zone database is not worth a dependency here.

use std::time::{SystemTime, UNIX_EPOCH};

const MONTHS: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

pub(crate) fn strftime_now(format: &str) -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    strftime(format, secs)
}

/// `format` applied to `secs` since the Unix epoch, UTC. Unknown specifiers are kept as written.
pub(crate) fn strftime(format: &str, secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    let (hour, minute, second) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let weekday = (days + 3).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
    let yday = days - days_from_civil(year, 1, 1) + 1;
    let hour12 = if hour % 12 == 0 { 12 } else { hour % 12 };

    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else {
            out.push('%');
            break;
        };
        let piece = match spec {
            'Y' => year.to_string(),
            'y' => format!("{:02}", year.rem_euclid(100)),
            'm' => format!("{month:02}"),
            'd' => format!("{day:02}"),
            'e' => format!("{day:>2}"),
            'H' => format!("{hour:02}"),
            'I' => format!("{hour12:02}"),
            'M' => format!("{minute:02}"),
            'S' => format!("{second:02}"),
            'p' => if hour < 12 { "AM" } else { "PM" }.into(),
            'B' => MONTHS[month as usize - 1].into(),
            'b' | 'h' => MONTHS[month as usize - 1][..3].into(),
            'A' => WEEKDAYS[weekday].into(),
            'a' => WEEKDAYS[weekday][..3].into(),
            'j' => format!("{yday:03}"),
            'F' => format!("{year}-{month:02}-{day:02}"),
            'D' => format!("{month:02}/{day:02}/{:02}", year.rem_euclid(100)),
            'T' => format!("{hour:02}:{minute:02}:{second:02}"),
            'Z' => "UTC".into(),
            'z' => "+0000".into(),
            '%' => "%".into(),
            other => format!("%{other}"),
        };
        out.push_str(&piece);
    }
    out
}

/// (year, month 1-12, day 1-31) for days since 1970-01-01 (Howard Hinnant's algorithm).
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_a_known_instant() {
        // 2024-02-29 13:05:09 UTC, a Thursday, day 60 of a leap year.
        let t = 1_709_211_909;
        assert_eq!(strftime("%d %b %Y", t), "29 Feb 2024");
        assert_eq!(strftime("%A %B %e, %y %I:%M:%S %p", t), "Thursday February 29, 24 01:05:09 PM");
        assert_eq!(strftime("%F %T %j %Z %% %Q", t), "2024-02-29 13:05:09 060 UTC % %Q");
    }

    #[test]
    fn epoch_and_before() {
        assert_eq!(strftime("%Y-%m-%d %a", 0), "1970-01-01 Thu");
        assert_eq!(strftime("%Y-%m-%d %H", -1), "1969-12-31 23");
    }

    #[test]
    fn now_is_a_plausible_date() {
        let year: i64 = strftime_now("%Y").parse().unwrap();
        assert!(year >= 2024, "{year}");
    }
}
