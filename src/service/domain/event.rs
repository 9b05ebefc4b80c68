//! One change of a game, as its event log keeps it: the change itself, never the whole game
//! again, so a game's log grows by a few dozen bytes per ply.
//!
//! The stored form is one line of space-separated fields (canonical moves contain no spaces):
//! - `c <at>`: the game was created;
//! - `m <at> <ply> <move> <p1 ms> <p2 ms> [<result> <termination>]`: a move (and, if it ended
//!   the game, how);
//! - `r <at> <seat> <p1 ms> <p2 ms>`: a resignation;
//! - `t <at> <seat>`: the seat's clock ran out.
//!
//! Times are epoch milliseconds; clocks are the time left after the change (`-` when untimed).
//! A version's event says everything that changed at that version, so the log alone (with the
//! game's start) is the game's record.

use std::fmt::Write;

use crate::api::{GameResult, Seat, TerminationKind};

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
        end: Option<(GameResult, TerminationKind)>,
    },
    Resigned {
        at: u64,
        seat: Seat,
        clocks: Option<[u64; 2]>,
    },
    TimedOut {
        at: u64,
        seat: Seat,
    },
}

fn seat_name(seat: Seat) -> &'static str {
    match seat {
        Seat::P1 => "p1",
        Seat::P2 => "p2",
    }
}

fn parse_seat(s: &str) -> Option<Seat> {
    match s {
        "p1" => Some(Seat::P1),
        "p2" => Some(Seat::P2),
        _ => None,
    }
}

fn result_name(r: GameResult) -> &'static str {
    match r {
        GameResult::P1 => "p1",
        GameResult::P2 => "p2",
        GameResult::Draw => "draw",
    }
}

fn parse_result(s: &str) -> Option<GameResult> {
    match s {
        "p1" => Some(GameResult::P1),
        "p2" => Some(GameResult::P2),
        "draw" => Some(GameResult::Draw),
        _ => None,
    }
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

    /// The stored line.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(48);
        match self {
            Event::Created { at } => {
                let _ = write!(out, "c {at}");
            }
            Event::Moved {
                at,
                ply,
                mv,
                clocks,
                end,
            } => {
                let _ = write!(out, "m {at} {ply} {mv}");
                write_clocks(&mut out, *clocks);
                if let Some((result, termination)) = end {
                    let _ = write!(
                        out,
                        " {} {}",
                        result_name(*result),
                        termination_name(*termination)
                    );
                }
            }
            Event::Resigned { at, seat, clocks } => {
                let _ = write!(out, "r {at} {}", seat_name(*seat));
                write_clocks(&mut out, *clocks);
            }
            Event::TimedOut { at, seat } => {
                let _ = write!(out, "t {at} {}", seat_name(*seat));
            }
        }
        out
    }

    /// Reads a stored line back; `None` if it is not one.
    pub fn decode(line: &str) -> Option<Event> {
        let fields: Vec<&str> = line.split(' ').collect();
        let at = fields.get(1)?.parse().ok()?;
        match (fields[0], fields.len()) {
            ("c", 2) => Some(Event::Created { at }),
            ("m", 6 | 8) => Some(Event::Moved {
                at,
                ply: fields[2].parse().ok()?,
                mv: fields[3].to_string(),
                clocks: parse_clocks(fields[4], fields[5])?,
                end: match fields.get(6..8) {
                    Some([r, t]) => Some((parse_result(r)?, parse_termination(t)?)),
                    _ => None,
                },
            }),
            ("r", 5) => Some(Event::Resigned {
                at,
                seat: parse_seat(fields[2])?,
                clocks: parse_clocks(fields[3], fields[4])?,
            }),
            ("t", 3) => Some(Event::TimedOut {
                at,
                seat: parse_seat(fields[2])?,
            }),
            _ => None,
        }
    }
}

/// A termination's API name (also its stored name).
pub fn termination_name(t: TerminationKind) -> &'static str {
    match t {
        TerminationKind::Goal => "goal",
        TerminationKind::Trap => "trap",
        TerminationKind::Fortress => "fortress",
        TerminationKind::NoMoves => "no_moves",
        TerminationKind::Towers => "towers",
        TerminationKind::Tiebreak => "tiebreak",
        TerminationKind::Timeout => "timeout",
        TerminationKind::Resign => "resign",
        TerminationKind::MoveLimit => "move_limit",
    }
}

fn parse_termination(s: &str) -> Option<TerminationKind> {
    [
        TerminationKind::Goal,
        TerminationKind::Trap,
        TerminationKind::Fortress,
        TerminationKind::NoMoves,
        TerminationKind::Towers,
        TerminationKind::Tiebreak,
        TerminationKind::Timeout,
        TerminationKind::Resign,
        TerminationKind::MoveLimit,
    ]
    .into_iter()
    .find(|t| termination_name(*t) == s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_event_reads_back_as_written() {
        let events = [
            Event::Created {
                at: 1_764_571_234_567,
            },
            Event::Moved {
                at: 5,
                ply: 3,
                mv: "b2-c3^d4".into(),
                clocks: Some([297_512, 300_000]),
                end: None,
            },
            Event::Moved {
                at: 6,
                ply: 40,
                mv: "c2-c3".into(),
                clocks: None,
                end: Some((GameResult::P1, TerminationKind::Goal)),
            },
            Event::Moved {
                at: 6,
                ply: 2000,
                mv: "Kd8".into(),
                clocks: None,
                end: Some((GameResult::Draw, TerminationKind::MoveLimit)),
            },
            Event::Resigned {
                at: 7,
                seat: Seat::P2,
                clocks: Some([1, 0]),
            },
            Event::TimedOut {
                at: 8,
                seat: Seat::P1,
            },
        ];
        for event in events {
            assert_eq!(Event::decode(&event.encode()), Some(event.clone()));
        }
    }

    #[test]
    fn lines_that_are_not_events_are_refused() {
        for line in [
            "",
            "x 1",
            "m 1 2",
            "c",
            "c x",
            "t 1 p3",
            "m 1 2 a - 5",
            "r 1 p1 - -  ",
        ] {
            assert_eq!(Event::decode(line), None, "{line:?}");
        }
    }
}
