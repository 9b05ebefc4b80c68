//! A game as the service keeps it: the rules record plus seats, clocks and how it ended.
//!
//! The stored form is compact — the start position, the moves, two token digests, the clocks
//! at the start of the current turn — and the rules record is rebuilt from it by replaying the
//! moves, so the history rules (Alcazar's no-repetition) hold across replicas and restarts.
//! Clocks are computed lazily from `turn_started_at`: no timers run anywhere.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::game_id::GameId;
use super::seat_token::SeatToken;
use super::time_control::ValidTimeControl;
use crate::api::{ClockView, GameResult, GameView, Seat, Status, TerminationKind};
use crate::rules::{AnyRecord, GameKind, Outcome, Player, Termination, Winner};
use crate::service::error::{ApiError, ErrorCode};
use crate::service::store::Versioned;

pub fn seat_of(player: Player) -> Seat {
    match player {
        Player::P1 => Seat::P1,
        Player::P2 => Seat::P2,
    }
}

fn player_of(seat: Seat) -> Player {
    match seat {
        Seat::P1 => Player::P1,
        Seat::P2 => Player::P2,
    }
}

fn termination_kind(t: Termination) -> TerminationKind {
    match t {
        Termination::Goal => TerminationKind::Goal,
        Termination::Trap => TerminationKind::Trap,
        Termination::Fortress => TerminationKind::Fortress,
        Termination::NoMoves => TerminationKind::NoMoves,
        Termination::Towers => TerminationKind::Towers,
        Termination::Tiebreak => TerminationKind::Tiebreak,
        Termination::Timeout => TerminationKind::Timeout,
        Termination::Resign => TerminationKind::Resign,
    }
}

/// The persisted record (short field names: it is stored once per game and read on every
/// request).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    #[serde(rename = "g")]
    game: String,
    #[serde(rename = "var", default, skip_serializing_if = "Vec::is_empty")]
    variants: Vec<String>,
    #[serde(rename = "s")]
    start: String,
    #[serde(rename = "m", default)]
    moves: Vec<String>,
    /// SHA-256 of the `p1` and `p2` tokens.
    #[serde(rename = "tok")]
    token_digests: [String; 2],
    /// `[initial_ms, increment_ms]`, absent when untimed.
    #[serde(rename = "tc", default, skip_serializing_if = "Option::is_none")]
    time_control: Option<[u64; 2]>,
    /// Time left per seat at `turn_started_at`.
    #[serde(rename = "rem", default)]
    remaining_ms: [u64; 2],
    #[serde(rename = "ts")]
    turn_started_at: u64,
    #[serde(rename = "end", default, skip_serializing_if = "Option::is_none")]
    end: Option<End>,
    /// Engine levels of the seats the service plays.
    #[serde(rename = "bot", default, skip_serializing_if = "no_bots")]
    bots: [Option<u8>; 2],
}

fn no_bots(bots: &[Option<u8>; 2]) -> bool {
    bots.iter().all(Option::is_none)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct End {
    /// `p1`, `p2` or `draw`.
    #[serde(rename = "r")]
    result: GameResult,
    #[serde(rename = "t")]
    termination: TerminationKind,
    #[serde(rename = "at")]
    at: u64,
}

/// A loaded game: its stored record, its version and the replayed rules record.
#[derive(Clone, Debug)]
pub struct StoredGame {
    id: GameId,
    version: u64,
    stored: Record,
    rules: AnyRecord,
}

impl StoredGame {
    /// A new game (version 1) and its two seat tokens. `bots` are the engine levels of the
    /// seats the service plays (their tokens are never handed out).
    pub fn create(
        id: GameId,
        rules: AnyRecord,
        time_control: Option<ValidTimeControl>,
        bots: [Option<u8>; 2],
        now: u64,
    ) -> (StoredGame, [SeatToken; 2]) {
        let tokens = [SeatToken::generate(), SeatToken::generate()];
        let stored = Record {
            game: rules.kind().as_str().to_string(),
            variants: rules
                .variants()
                .names()
                .into_iter()
                .map(String::from)
                .collect(),
            start: rules.start_position(),
            moves: Vec::new(),
            token_digests: [tokens[0].digest(), tokens[1].digest()],
            time_control: time_control.map(|tc| [tc.initial_ms, tc.increment_ms]),
            remaining_ms: time_control.map_or([0, 0], |tc| [tc.initial_ms; 2]),
            turn_started_at: now,
            end: None,
            bots,
        };
        let mut game = StoredGame {
            id,
            version: 1,
            stored,
            rules,
        };
        game.end_by_rules(now);
        (game, tokens)
    }

    /// Rebuilds a game from the store.
    pub fn decode(id: GameId, stored: &Versioned) -> Result<StoredGame, ApiError> {
        let corrupt = |why: String| {
            tracing::error!(game = %id, %why, "stored game cannot be read");
            ApiError::new(ErrorCode::Internal, "the stored game could not be read")
        };
        let record: Record =
            serde_json::from_str(&stored.data).map_err(|e| corrupt(e.to_string()))?;
        let kind: GameKind = record.game.parse().map_err(|e| corrupt(format!("{e}")))?;
        let variants = kind
            .variants(&record.variants)
            .map_err(|e| corrupt(e.to_string()))?;
        let rules = AnyRecord::replay(kind, variants, &record.start, &record.moves)
            .map_err(|e| corrupt(e.to_string()))?;
        Ok(StoredGame {
            id,
            version: stored.version,
            stored: record,
            rules,
        })
    }

    /// The stored form.
    pub fn encode(&self) -> Versioned {
        Versioned {
            version: self.version,
            data: serde_json::to_string(&self.stored).expect("a record serializes"),
        }
    }

    /// Moves to the next version: call once per change, before saving it.
    pub fn bump_version(&mut self) {
        self.version += 1;
    }

    pub fn id(&self) -> GameId {
        self.id
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn ply(&self) -> u64 {
        self.rules.ply() as u64
    }

    pub fn rules(&self) -> &AnyRecord {
        &self.rules
    }

    pub fn is_finished(&self) -> bool {
        self.stored.end.is_some()
    }

    /// The engine seat to move and its level, if the game is on and an engine is to move.
    pub fn computer_to_move(&self) -> Option<(Seat, u8)> {
        if self.is_finished() {
            return None;
        }
        let turn = self.rules.turn();
        self.stored.bots[turn.index()].map(|level| (seat_of(turn), level))
    }

    /// Whether the service's engine plays `seat`.
    pub fn is_engine_seat(&self, seat: Seat) -> bool {
        self.stored.bots[player_of(seat).index()].is_some()
    }

    /// Time left for the side to move at `now`, if the game is timed.
    pub fn time_left_to_move(&self, now: u64) -> Option<u64> {
        self.stored
            .time_control
            .map(|_| self.remaining_at(self.rules.turn(), now))
    }

    /// Which seat a bearer token holds in this game, if any.
    pub fn seat_for(&self, token: &SeatToken) -> Option<Seat> {
        let digest = token.digest();
        [Seat::P1, Seat::P2]
            .into_iter()
            .find(|s| self.stored.token_digests[player_of(*s).index()] == digest)
    }

    /// Time left for `seat` at `now` (its clock runs only while it is to move).
    fn remaining_at(&self, player: Player, now: u64) -> u64 {
        let base = self.stored.remaining_ms[player.index()];
        if self.is_finished() || self.rules.turn() != player {
            base
        } else {
            base.saturating_sub(now.saturating_sub(self.stored.turn_started_at))
        }
    }

    /// Ends the game on time if the side to move has run out. Returns whether it changed.
    pub fn settle_clock(&mut self, now: u64) -> bool {
        if self.is_finished() || self.stored.time_control.is_none() {
            return false;
        }
        let mover = self.rules.turn();
        let left = self.stored.remaining_ms[mover.index()];
        if now.saturating_sub(self.stored.turn_started_at) < left {
            return false;
        }
        self.stored.remaining_ms[mover.index()] = 0;
        self.stored.end = Some(End {
            result: GameResult::from(Winner::Player(mover.other())),
            termination: TerminationKind::Timeout,
            at: self.stored.turn_started_at + left,
        });
        true
    }

    /// Stops the running clock at `now` (the mover's time is charged; the increment is added
    /// when `increment` is set).
    fn charge_clock(&mut self, now: u64, increment: bool) {
        let Some([_, inc]) = self.stored.time_control else {
            self.stored.turn_started_at = now;
            return;
        };
        let mover = self.rules.turn().index();
        let elapsed = now.saturating_sub(self.stored.turn_started_at);
        let left = self.stored.remaining_ms[mover].saturating_sub(elapsed);
        self.stored.remaining_ms[mover] = left + if increment { inc } else { 0 };
        self.stored.turn_started_at = now;
    }

    fn end_by_rules(&mut self, now: u64) {
        if let Some(Outcome {
            winner,
            termination,
        }) = self.rules.outcome()
        {
            self.stored.end = Some(End {
                result: winner.into(),
                termination: termination_kind(termination),
                at: now,
            });
        }
    }

    /// Plays `input` for `seat` at `now`; the clock must have been settled first.
    /// Returns the move's canonical notation.
    pub fn play(&mut self, seat: Seat, input: &str, now: u64) -> Result<String, ApiError> {
        if self.is_finished() {
            return Err(ApiError::new(ErrorCode::GameOver, "the game is over"));
        }
        if seat_of(self.rules.turn()) != seat {
            return Err(ApiError::new(
                ErrorCode::NotYourTurn,
                format!("it is {}'s turn", self.rules.turn()),
            ));
        }
        let canonical = self.rules.check(input)?;
        self.charge_clock(now, true);
        self.rules.play(&canonical)?;
        self.stored.moves.push(canonical.clone());
        self.end_by_rules(now);
        Ok(canonical)
    }

    /// Ends an ongoing game as a draw by `move_limit` once it has `max_plies` plies (the
    /// service's cap, not a rule). Returns whether it ended it.
    pub fn end_at_move_limit(&mut self, max_plies: u64, now: u64) -> bool {
        if self.is_finished() || self.ply() < max_plies {
            return false;
        }
        self.stored.end = Some(End {
            result: GameResult::Draw,
            termination: TerminationKind::MoveLimit,
            at: now,
        });
        true
    }

    /// `seat` resigns at `now`.
    pub fn resign(&mut self, seat: Seat, now: u64) -> Result<(), ApiError> {
        if self.is_finished() {
            return Err(ApiError::new(ErrorCode::GameOver, "the game is over"));
        }
        self.charge_clock(now, false);
        self.stored.end = Some(End {
            result: GameResult::from(Winner::Player(player_of(seat).other())),
            termination: TerminationKind::Resign,
            at: now,
        });
        Ok(())
    }

    /// The event of this version: the full view, as JSON.
    pub fn event(&self, now: u64) -> String {
        serde_json::to_string(&self.view(now)).expect("a view serializes")
    }

    pub fn clock_view(&self, now: u64) -> Option<ClockView> {
        let [initial_ms, increment_ms] = self.stored.time_control?;
        let remaining_ms: BTreeMap<Seat, u64> = Player::BOTH
            .into_iter()
            .map(|p| (seat_of(p), self.remaining_at(p, now)))
            .collect();
        Some(ClockView {
            initial_ms,
            increment_ms,
            remaining_ms,
            running: (!self.is_finished()).then(|| seat_of(self.rules.turn())),
            turn_started_at: self.stored.turn_started_at,
            server_now: now,
        })
    }

    pub fn view(&self, now: u64) -> GameView {
        GameView {
            id: self.id.to_string(),
            game: self.stored.game.clone(),
            variants: self.stored.variants.clone(),
            start_position: self.stored.start.clone(),
            position: self.rules.position(),
            turn: seat_of(self.rules.turn()),
            ply: self.ply(),
            version: self.version,
            status: if self.is_finished() {
                Status::Finished
            } else {
                Status::Ongoing
            },
            result: self.stored.end.map(|e| e.result),
            termination: self.stored.end.map(|e| e.termination),
            moves: self.stored.moves.clone(),
            clock: self.clock_view(now),
            engine_seats: Player::BOTH
                .into_iter()
                .filter_map(|p| self.stored.bots[p.index()].map(|level| (seat_of(p), level)))
                .collect(),
        }
    }
}

impl From<Winner> for GameResult {
    fn from(w: Winner) -> GameResult {
        match w {
            Winner::Player(Player::P1) => GameResult::P1,
            Winner::Player(Player::P2) => GameResult::P2,
            Winner::Draw => GameResult::Draw,
        }
    }
}
