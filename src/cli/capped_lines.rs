//! Lines of at most a given length, read from a pipe another program writes: an engine's
//! output for `match`, a driver's input for `pillarz engine`. `BufRead::lines` buffers a line
//! until its end, so a peer that never writes a newline would fill memory; and it fails on a
//! line that is not UTF-8 as if the input had ended.

use std::io::{BufRead, Read};

/// Why a line was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// Longer than the reader takes (the rest of it is still unread: see [`skip_line`]).
    #[error("a line over {0} bytes")]
    TooLong(usize),
    #[error("a line that is not UTF-8")]
    NotUtf8,
}

/// The next line of `reader`, without its `\n` or `\r\n`, of at most `max` bytes; `None` at the
/// end of the input (or when reading fails).
pub fn next_line(reader: &mut impl BufRead, max: usize) -> Option<Result<String, LineError>> {
    let mut line = Vec::new();
    let read = reader
        .by_ref()
        .take(max as u64 + 1)
        .read_until(b'\n', &mut line)
        .ok()?;
    if read == 0 {
        return None;
    }
    if line.ends_with(b"\n") {
        line.pop();
        if line.ends_with(b"\r") {
            line.pop();
        }
    }
    if line.len() > max {
        return Some(Err(LineError::TooLong(max)));
    }
    Some(String::from_utf8(line).map_err(|_| LineError::NotUtf8))
}

/// Reads and drops the rest of the current line, holding no more of it than `reader`'s buffer.
pub fn skip_line(reader: &mut impl BufRead) {
    loop {
        let Ok(buffer) = reader.fill_buf() else {
            return;
        };
        if buffer.is_empty() {
            return;
        }
        match buffer.iter().position(|&b| b == b'\n') {
            Some(end) => {
                reader.consume(end + 1);
                return;
            }
            None => {
                let all = buffer.len();
                reader.consume(all);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_with_lf_crlf_or_the_input_and_are_capped() {
        let mut input: &[u8] = b"go\r\nstop\n12345678\n123456789\nafter\n\xff\nlast";
        let mut lines = Vec::new();
        while let Some(line) = next_line(&mut input, 8) {
            if line == Err(LineError::TooLong(8)) {
                skip_line(&mut input);
            }
            lines.push(line);
        }
        assert_eq!(
            lines,
            [
                Ok("go".to_string()),
                Ok("stop".to_string()),
                Ok("12345678".to_string()),
                Err(LineError::TooLong(8)),
                Ok("after".to_string()),
                Err(LineError::NotUtf8),
                Ok("last".to_string()),
            ]
        );
    }

    #[test]
    fn skipping_a_line_without_end_reaches_the_end_of_the_input() {
        let long = vec![b'x'; 100_000];
        let mut input = std::io::BufReader::with_capacity(16, &long[..]);
        assert_eq!(next_line(&mut input, 10), Some(Err(LineError::TooLong(10))));
        skip_line(&mut input);
        assert_eq!(next_line(&mut input, 10), None);
    }
}
