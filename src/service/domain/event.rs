//! One change of a game, as its event log keeps it: the change itself, never the whole game
//! again, so a game's log grows by a few dozen bytes per ply.
//!
//! The stored form is one line of space-separated fields (canonical moves contain no spaces):
//! - `c`: the game was created;
//! - `m <dt> <move> <p1 ms> <p2 ms> [<result> <termination>]`: a move (and, if it ended the
//!   game, how);
//! - `r <dt> <seat> <p1 ms> <p2 ms>`: a resignation;
//! - `t <dt> <seat>`: the seat's clock ran out.
//!
//! `dt` is the time since the game was created, in milliseconds; clocks are the time left
//! after the change (`-` when untimed). The ply is not stored: every change before the last is
//! a move, so the move of version `v` is ply `v - 1`. A version's event says everything that
//! changed at that version, so the log alone (with the game's start) is the game's record.

use std::fmt::Write;

use crate::rules::{Player, Termination, Winner};

/// A change, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Created {
        at: u64,
    },
    Moved {
        at: u64,
        /// The ply after the move.
        ply: u64,
        mv: String,
        clocks: Option<[u64; 2]>,
        /// Set when the move ended the game (by the rules or the service's ply cap).
        end: Option<(Winner, Termination)>,
    },
    Resigned {
        at: u64,
        seat: Player,
        clocks: Option<[u64; 2]>,
    },
    TimedOut {
        at: u64,
        seat: Player,
    },
}

fn write_clocks(out: &mut String, clocks: Option<[u64; 2]>) {
    match clocks {
        Some([a, b]) => {
            let _ = write!(out, " {a} {b}");
        }
        None => out.push_str(" - -"),
    }
}

fn parse_clocks(a: &str, b: &str) -> Option<Option<[u64; 2]>> {
    match (a, b) {
        ("-", "-") => Some(None),
        _ => Some(Some([a.parse().ok()?, b.parse().ok()?])),
    }
}

impl Event {
    /// When the change was made (epoch ms).
    pub fn at(&self) -> u64 {
        match self {
            Event::Created { at }
            | Event::Moved { at, .. }
            | Event::Resigned { at, .. }
            | Event::TimedOut { at, .. } => *at,
        }
    }

    /// The stored line, for a game created at `t0`.
    pub fn encode(&self, t0: u64) -> String {
        let mut out = String::with_capacity(32);
        let dt = self.at().saturating_sub(t0);
        match self {
            Event::Created { .. } => out.push('c'),
            Event::Moved {
                mv, clocks, end, ..
            } => {
                let _ = write!(out, "m {dt} {mv}");
                write_clocks(&mut out, *clocks);
                if let Some((result, termination)) = end {
                    let _ = write!(out, " {} {}", result.as_str(), termination.as_str());
                }
            }
            Event::Resigned { seat, clocks, .. } => {
                let _ = write!(out, "r {dt} {}", seat.as_str());
                write_clocks(&mut out, *clocks);
            }
            Event::TimedOut { seat, .. } => {
                let _ = write!(out, "t {dt} {}", seat.as_str());
            }
        }
        out
    }

    /// The move a stored line records, if it records one, read without decoding the rest
    /// (how a game's move list is read off its log).
    pub fn move_of(line: &str) -> Result<Option<&str>, String> {
        match line.split_once(' ') {
            Some(("m", rest)) => match rest.split(' ').nth(1) {
                Some(mv) if !mv.is_empty() => Ok(Some(mv)),
                _ => Err(format!("a move event without its move: {line:?}")),
            },
            _ => Ok(None),
        }
    }

    /// Reads back the stored line of `version` of a game created at `t0`; `None` if it is
    /// not one.
    pub fn decode(line: &str, version: u64, t0: u64) -> Option<Event> {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields == ["c"] {
            return Some(Event::Created { at: t0 });
        }
        let at = t0 + fields.get(1)?.parse::<u64>().ok()?;
        match (fields[0], fields.len()) {
            ("m", 5 | 7) => Some(Event::Moved {
                at,
                ply: version.checked_sub(1)?,
                mv: fields[2].to_string(),
                clocks: parse_clocks(fields[3], fields[4])?,
                end: match fields.get(5..7) {
                    Some([r, t]) => Some((Winner::parse(r)?, Termination::parse(t)?)),
                    _ => None,
                },
            }),
            ("r", 5) => Some(Event::Resigned {
                at,
                seat: Player::parse(fields[2])?,
                clocks: parse_clocks(fields[3], fields[4])?,
            }),
            ("t", 3) => Some(Event::TimedOut {
                at,
                seat: Player::parse(fields[2])?,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_764_571_234_567;

    #[test]
    fn every_kind_of_event_reads_back_as_written() {
        let events = [
            (1, Event::Created { at: T0 }),
            (
                4,
                Event::Moved {
                    at: T0 + 5,
                    ply: 3,
                    mv: "b2-c3^d4".into(),
                    clocks: Some([297_512, 300_000]),
                    end: None,
                },
            ),
            (
                41,
                Event::Moved {
                    at: T0 + 6,
                    ply: 40,
                    mv: "c2-c3".into(),
                    clocks: None,
                    end: Some((Winner::Player(Player::P1), Termination::Goal)),
                },
            ),
            (
                2001,
                Event::Moved {
                    at: T0 + 6,
                    ply: 2000,
                    mv: "Kd8".into(),
                    clocks: None,
                    end: Some((Winner::Draw, Termination::MoveLimit)),
                },
            ),
            (
                9,
                Event::Resigned {
                    at: T0 + 7,
                    seat: Player::P2,
                    clocks: Some([1, 0]),
                },
            ),
            (
                9,
                Event::TimedOut {
                    at: T0 + 8,
                    seat: Player::P1,
                },
            ),
        ];
        for (version, event) in events {
            let line = event.encode(T0);
            assert!(line.len() < 40, "short: {line}");
            assert_eq!(Event::decode(&line, version, T0), Some(event.clone()));
        }
    }

    #[test]
    fn lines_that_are_not_events_are_refused() {
        for line in [
            "",
            "x 1",
            "m 1 2",
            "c 1",
            "t x p1",
            "t 1 p3",
            "m 1 a - 5",
            "r 1 p1 - -  ",
        ] {
            assert_eq!(Event::decode(line, 2, T0), None, "{line:?}");
        }
    }
}
