//! Text from the server on its way to a terminal. A terminal obeys the control sequences in
//! what it prints: an OSC can retitle the window or (on some terminals) set the clipboard, a
//! CSI can clear the screen, move the cursor or hide text. A hostile or compromised server
//! could put them in a problem's `detail` or a game's moves and forge what the user sees, so
//! human output shows every control character escaped, as `char::escape_default` writes it
//! (`\u{1b}`). The bidirectional formatting characters (`U+202E` and its kin) are escaped
//! too: they control no terminal, but they reorder the text around them as it is shown, so
//! that what a user reads is not what the server sent (the "Trojan Source" trick). JSON
//! escapes the C0 controls in its strings itself but allows DEL, the C1 controls (`U+009B` is
//! a CSI to many terminals) and the bidirectional characters raw: [`escape_json_controls`]
//! escapes those.

use std::borrow::Cow;

/// Whether `c` changes how a terminal shows the text around it rather than being shown: a
/// control character (C0, DEL, C1) or a bidirectional formatting character (the marks
/// `U+061C`, `U+200E`, `U+200F`, the embeddings and overrides `U+202A`–`U+202E`, the isolates
/// `U+2066`–`U+2069`).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every [hidden](is_hidden) character escaped; newlines are kept when
/// `keep_newlines` (several lines of output), escaped otherwise (a one-line message).
pub fn escape_controls(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let escaped = |c: char| is_hidden(c) && !(keep_newlines && c == '\n');
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Valid JSON text without a raw [hidden](is_hidden) character but its newlines, and of the
/// same value: DEL, the C1 controls and the bidirectional characters in its strings are written
/// as `\uXXXX` escapes, and a tab or a
/// carriage return (in valid JSON only whitespace between tokens: strings hold C0 controls
/// escaped) becomes a space.
pub fn escape_json_controls(json: &str) -> Cow<'_, str> {
    let raw = |c: char| is_hidden(c) && c != '\n';
    if !json.chars().any(raw) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if !raw(c) {
            out.push(c);
        } else if c < '\u{7f}' {
            out.push(' ');
        } else {
            out.push_str(&format!("\\u{:04x}", c as u32));
        }
    }
    Cow::Owned(out)
}
