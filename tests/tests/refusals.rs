//! Refused connections are logged as a summary at most once a second, with
//! counts, never a line each: a flood of refusals is not a flood of logs.

use std::time::Duration;

use tictactoe_tests::process::ServerProcess;

/// A log line's time (tracing's RFC 3339 UTC stamp, its first word) in
/// seconds since the epoch.
fn stamp(line: &str) -> f64 {
    let word = line.split_whitespace().next().unwrap_or_default();
    let parse = || -> Option<f64> {
        let (date, time) = word.strip_suffix('Z')?.split_once('T')?;
        let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
        let (y, m, day) = (d.next()??, d.next()??, d.next()??);
        let mut t = time.splitn(3, ':');
        let (h, min) = (t.next()?.parse::<f64>().ok()?, t.next()?.parse::<f64>().ok()?);
        let s = t.next()?.parse::<f64>().ok()?;
        // Days from the civil date (Howard Hinnant's algorithm).
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day - 1;
        let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
        Some(days as f64 * 86_400.0 + h * 3600.0 + min * 60.0 + s)
    };
    parse().unwrap_or_else(|| panic!("no time stamp on the log line {line:?}"))
}

/// The `per_ip=` count of a summary line.
fn per_ip(line: &str) -> u64 {
    line.split("per_ip=").nth(1).and_then(|n| n.split_whitespace().next()?.parse().ok()).unwrap_or(0)
}

#[tokio::test]
async fn a_flood_of_refused_connections_is_one_summary_line_a_second() {
    let server = ServerProcess::start(&["--database", "none", "--max-connections-per-ip", "2"]);
    let _held = (server.client().await, server.client().await);
    for _ in 0..300 {
        let refused = tokio_tungstenite::connect_async(server.url()).await;
        assert!(refused.is_err(), "a connection past the cap was let in");
    }
    // Every refusal is counted in a summary within a summary's second (10 s at most).
    let summaries = |log: &[String]| -> Vec<String> {
        log.iter().filter(|l| l.contains("connections refused")).cloned().collect()
    };
    let mut log = server.log();
    for _ in 0..100 {
        if summaries(&log).iter().map(|l| per_ip(l)).sum::<u64>() >= 300 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        log = server.log();
    }
    let summaries = summaries(&log);
    let counted: u64 = summaries.iter().map(|l| per_ip(l)).sum();
    assert_eq!(counted, 300, "{summaries:#?}");
    // Not a line each: every line about a refusal is a summary, and the
    // summaries are a second apart by the server's own clock (less a tick's
    // slack).
    let refused_lines = log.iter().filter(|l| l.contains("refused")).count();
    assert_eq!(refused_lines, summaries.len(), "a line per refusal: {log:#?}");
    let times: Vec<f64> = summaries.iter().map(|l| stamp(l)).collect();
    for (i, gap) in times.windows(2).map(|t| t[1] - t[0]).enumerate() {
        assert!(gap >= 0.9, "two summaries {gap:.3} s apart: {:#?}", &summaries[i..i + 2]);
    }
}

#[test]
fn a_log_line_s_time_stamp_is_read() {
    assert_eq!(stamp("1970-01-02T00:00:01.500000Z  WARN x: y"), 86_401.5);
    let line = "2026-11-25T09:03:52.890000Z  WARN tictactoe_server::session::admission: connections refused";
    assert!((stamp(line) - 1_795_597_432.89).abs() < 1e-3, "{}", stamp(line));
}
