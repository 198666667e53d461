//! `Retry-After` (RFC 9110): a number of seconds, or an HTTP date.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `Retry-After` in seconds (a number of seconds or an HTTP date), at most a day.
pub(crate) fn seconds(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    let text = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    let seconds = if let Ok(seconds) = text.parse::<u64>() {
        seconds
    } else {
        let when = httpdate(text)?;
        when.duration_since(SystemTime::now())
            .map_or(0, |d| d.as_secs())
    };
    Some(seconds.min(86_400))
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form `Retry-After` dates take.
fn httpdate(text: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month: i64 = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .zip(1..)
    .find_map(|(m, n)| (m == month).then_some(n))?;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let mut hms = time.split(':').map(str::parse::<u64>);
    let (h, m, s) = (hms.next()?.ok()?, hms.next()?.ok()?, hms.next()?.ok()?);
    let days = days_from_civil(year, month, day);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + s;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::RETRY_AFTER, "120".parse().expect("header"));
        assert_eq!(seconds(&headers), Some(120));
        headers.insert(
            reqwest::header::RETRY_AFTER,
            "Sun, 06 Nov 1994 08:49:37 GMT".parse().expect("header"),
        );
        assert_eq!(seconds(&headers), Some(0));
        assert_eq!(
            httpdate("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(UNIX_EPOCH + Duration::from_secs(784_111_777))
        );
        headers.insert(
            reqwest::header::RETRY_AFTER,
            "soon".parse().expect("header"),
        );
        assert_eq!(seconds(&headers), None);
    }
}
