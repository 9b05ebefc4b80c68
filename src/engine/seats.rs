//! The engines of computer seats, kept between their moves. The service asks for one move at a
//! time, with the whole game record and nothing else; a seat's engine (its table and history)
//! from its last move is found again here when the record continues the game it last saw, so
//! each move starts from what the previous one learned instead of an empty table.
//!
//! A handful of engines are kept (the most recently used); a record that continues none of
//! them gets a fresh engine, which then takes the place of the oldest.

use std::sync::Mutex;

use super::any::AnyEngine;
use crate::rules::{AnyRecord, GameKind, Variants};

/// How many seats' engines are kept, each with a table of `2^SEAT_TT_BITS` entries.
const KEPT: usize = 8;
const SEAT_TT_BITS: u32 = 18;

/// A kept engine and the game it last moved in.
struct Seat {
    kind: GameKind,
    variants: Variants,
    level: u8,
    start: String,
    moves: Vec<String>,
    engine: AnyEngine,
}

impl Seat {
    /// Whether `record` is the game this seat last moved in, gone on.
    fn continued_by(&self, record: &AnyRecord, level: u8) -> bool {
        self.kind == record.kind()
            && self.variants == record.variants()
            && self.level == level
            && self.start == record.start_position()
            && record.moves().starts_with(&self.moves)
    }
}

static SEATS: Mutex<Vec<Seat>> = Mutex::new(Vec::new());

/// Runs `think` with the engine of the seat playing `record` at `level`: the kept one if
/// `record` continues its game, else a fresh one. The engine is kept afterwards.
pub fn with_seat_engine<T>(
    record: &AnyRecord,
    level: u8,
    think: impl FnOnce(&mut AnyEngine) -> T,
) -> T {
    let kept = {
        let mut seats = SEATS.lock().unwrap_or_else(|e| e.into_inner());
        seats
            .iter()
            .position(|s| s.continued_by(record, level))
            .map(|i| seats.remove(i))
    };
    let mut seat = kept.unwrap_or_else(|| Seat {
        kind: record.kind(),
        variants: record.variants(),
        level,
        start: record.start_position(),
        moves: Vec::new(),
        engine: AnyEngine::new(record.kind(), SEAT_TT_BITS),
    });
    let answer = think(&mut seat.engine);
    seat.moves = record.moves();
    let mut seats = SEATS.lock().unwrap_or_else(|e| e.into_inner());
    if seats.len() >= KEPT {
        seats.remove(0);
    }
    seats.push(seat);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Caps, FrozenClock, Limit, Params};

    fn nodes(engine: &mut AnyEngine, record: &AnyRecord) -> u64 {
        let params = Params {
            limit: Limit::Depth(4),
            caps: Caps::NONE,
            multipv: 1,
            clock: &FrozenClock,
            stop: None,
            tt_bits: SEAT_TT_BITS,
            contempt: 0,
        };
        engine.analyse(record, &params).expect("same game").nodes
    }

    #[test]
    fn a_seat_finds_its_engine_again_when_its_game_goes_on() {
        let start = "00000/00o00x0/00000/00x00o0/00000 1";
        let record = AnyRecord::new(GameKind::Pillarz, Variants::NONE, Some(start)).unwrap();
        // Level 99 keeps this test's seats apart from any other's.
        let first = with_seat_engine(&record, 99, |e| nodes(e, &record));
        let again = with_seat_engine(&record, 99, |e| nodes(e, &record));
        assert!(again < first, "{again} vs {first}: the table was not kept");
        let other = AnyRecord::new(GameKind::Pillarz, Variants::NONE, None).unwrap();
        let mut after = record.clone();
        after.play("b2-b3^b2").unwrap();
        // Another game (another start) gets an engine of its own.
        with_seat_engine(&other, 99, |e| nodes(e, &other));
        let continued = with_seat_engine(&after, 99, |e| nodes(e, &record));
        assert!(
            continued < first,
            "the game went on: its engine is found again"
        );
    }
}
