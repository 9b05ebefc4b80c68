//! Durations on the command line: `500ms`, `3s`, `5m`, `1h`, and clocks like `5m+3s`.

/// Milliseconds in `text` (`500ms`, `3s`, `5m`, `1h`; a bare number is seconds).
pub fn parse_ms(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = t.split_at(
        t.find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(t.len()),
    );
    let value: f64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (like 500ms, 3s, 5m)"))?;
    let factor = match unit {
        "ms" => 1.0,
        "" | "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (use ms, s, m or h)"
            ));
        }
    };
    Ok((value * factor).round() as u64)
}

/// A Fischer clock `initial+increment`, e.g. `5m+3s` → (300000, 3000); no `+` means no
/// increment.
pub fn parse_clock(text: &str) -> Result<(u64, u64), String> {
    match text.split_once('+') {
        Some((initial, increment)) => Ok((parse_ms(initial)?, parse_ms(increment)?)),
        None => Ok((parse_ms(text)?, 0)),
    }
}

/// `mm:ss.t` for a clock display.
pub fn show_ms(ms: u64) -> String {
    format!("{}:{:02}.{}", ms / 60_000, ms / 1000 % 60, ms / 100 % 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_clocks() {
        assert_eq!(parse_ms("500ms"), Ok(500));
        assert_eq!(parse_ms("3s"), Ok(3000));
        assert_eq!(parse_ms("1.5s"), Ok(1500));
        assert_eq!(parse_ms("5m"), Ok(300_000));
        assert_eq!(parse_ms("2"), Ok(2000));
        assert!(parse_ms("5 parsecs").is_err());
        assert!(parse_ms("").is_err());
        assert_eq!(parse_clock("5m+3s"), Ok((300_000, 3000)));
        assert_eq!(parse_clock("10s"), Ok((10_000, 0)));
        assert_eq!(show_ms(65_432), "1:05.4");
    }
}
