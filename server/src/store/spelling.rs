//! How the store spells what it keeps, whatever the backend: times, end
//! reasons and ratings, as rows hold them and the API shows them.

use tictactoe_protocol::EndReason;

/// `reason` as the wire spells it.
pub(crate) fn reason(r: EndReason) -> String {
    serde_json::to_value(r).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// A reason as [`reason`] spells it, read back.
pub(crate) fn parse_reason(text: &str) -> Option<EndReason> {
    EndReason::ALL.into_iter().find(|&r| reason(r) == text)
}

/// A rating as the answers show it: a whole number.
pub(crate) fn rounded(rating: f64) -> i64 {
    rating.round() as i64
}

/// Milliseconds since the epoch as RFC 3339, UTC, to the millisecond
/// (`2026-11-25T06:31:29.123Z`), as SQLite's `strftime('%Y-%m-%dT%H:%M:%fZ')`
/// writes them.
pub(crate) fn rfc3339(ms: i64) -> String {
    let (days, ms_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) =
        (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60, ms_of_day / 1000 % 60, ms_of_day % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

#[cfg(test)]
mod tests {
    #[test]
    fn reasons_read_back_as_written() {
        for r in tictactoe_protocol::EndReason::ALL {
            assert_eq!(super::parse_reason(&super::reason(r)), Some(r));
        }
        assert_eq!(super::parse_reason("nope"), None);
    }
}
