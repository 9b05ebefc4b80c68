//! A square's name, `a1`-style: its file's letter and its rank's digit, as every game names
//! its squares (Alcazar its lattice points). Written with one `write_str`: the service names
//! every legal move of a position in its legal-moves answer, and a `write!` of two characters
//! went through the formatting machinery twice per square (callgrind: the naming was most of
//! that answer's work).

use std::fmt;
use std::fmt::Write;

/// Writes the name of file `file` (0 = `a`) and rank `rank` (0 = `1`).
pub(crate) fn write(f: &mut fmt::Formatter<'_>, file: u8, rank: u8) -> fmt::Result {
    let name = [b'a'.wrapping_add(file), b'1'.wrapping_add(rank)];
    match std::str::from_utf8(&name) {
        Ok(name) => f.write_str(name),
        // No square of any board: only a point off Alcazar's lattice (in a debug message).
        Err(_) => name.iter().try_for_each(|&b| f.write_char(char::from(b))),
    }
}
