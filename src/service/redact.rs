//! Keeping a Redis URL's password out of logs, console output and error bodies.
//!
//! `--redis` may carry credentials (`redis://user:password@host`, or `?pass=`/`?password=` in a
//! `redis+unix://` URL). What the service prints of it is [`redact_url`]; what it relays of a
//! Redis error passes through [`scrub`] with the URL's [`secrets`].

/// The parts of a URL that hold a password: `(start, end)` byte ranges.
fn secret_ranges(url: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let Some(scheme_end) = url.find("://") else {
        return ranges;
    };
    let rest_start = scheme_end + 3;
    let rest = &url[rest_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    if let Some(at) = authority.rfind('@') {
        let userinfo = &authority[..at];
        match userinfo.find(':') {
            // `user:password@`: the password.
            Some(colon) => ranges.push((rest_start + colon + 1, rest_start + at)),
            // `secret@`: redis-rs reads a lone userinfo as a user name, but it may well be a
            // password: hide it too.
            None => ranges.push((rest_start, rest_start + at)),
        }
    }
    if let Some(q) = url.find('?') {
        let mut offset = q + 1;
        for pair in url[q + 1..].split('&') {
            if let Some((name, _)) = pair.split_once('=')
                && matches!(
                    name.to_ascii_lowercase().as_str(),
                    "pass" | "password" | "user" | "username"
                )
            {
                ranges.push((offset + name.len() + 1, offset + pair.len()));
            }
            offset += pair.len() + 1;
        }
    }
    ranges.retain(|(start, end)| end > start);
    ranges
}

/// One URL (or several comma-separated node URLs) with every password replaced by `***`.
pub fn redact_url(urls: &str) -> String {
    urls.split(',')
        .map(|url| {
            let mut out = url.to_string();
            let mut ranges = secret_ranges(url);
            ranges.sort_unstable();
            for (start, end) in ranges.into_iter().rev() {
                out.replace_range(start..end, "***");
            }
            out
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The passwords in `urls` as written, and percent-decoded.
pub fn secrets(urls: &str) -> Vec<String> {
    let mut found = Vec::new();
    for url in urls.split(',') {
        for (start, end) in secret_ranges(url) {
            let raw = &url[start..end];
            found.push(raw.to_string());
            let decoded = percent_decode(raw);
            if decoded != raw {
                found.push(decoded);
            }
        }
    }
    found.retain(|s| !s.is_empty());
    found
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` with every one of `secrets` replaced by `***`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets {
        out = out.replace(secret.as_str(), "***");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redact_url("redis://:s3cret@10.0.0.1:6379/0"),
            "redis://:***@10.0.0.1:6379/0"
        );
        assert_eq!(
            redact_url("rediss://user:p%40ss@h:1,redis://u:two@h:2"),
            "rediss://user:***@h:1,redis://u:***@h:2"
        );
        assert_eq!(redact_url("redis://lone@h"), "redis://***@h");
        assert_eq!(
            redact_url("redis+unix:///tmp/r.sock?db=1&pass=xyz"),
            "redis+unix:///tmp/r.sock?db=1&pass=***"
        );
        assert_eq!(
            redact_url("redis://127.0.0.1:6379"),
            "redis://127.0.0.1:6379"
        );
        assert_eq!(secrets("redis://u:p%40ss@h"), ["p%40ss", "p@ss"]);
        assert_eq!(
            scrub("auth p@ss failed", &secrets("redis://u:p%40ss@h")),
            "auth *** failed"
        );
    }
}
