//! A game as the service keeps it: its rules state plus seats, clocks and how it ended.
//!
//! The stored form has four parts: the header (what never changes: game, variants, start, seat
//! token digests, time control, engine seats), the live part (position, ply, clocks, end), the
//! moves so far, and the repetition keys of the earlier positions (Alcazar only). A request
//! rebuilds the rules state from the position and those keys, never by replaying moves, so its
//! cost does not grow with the game's length; every change appends one move and one key at
//! most, so the store can append instead of rewriting. A store may keep the moves as its event
//! log (a move's event carries the move) and answer a reader with only what is newer than the
//! version it holds ([`Logged`]): the reader's copy plus that is the game.
//!
//! Clocks are computed lazily from `turn_started_at`: no timers run here. Every change is one
//! [`Event`], and the live part after a version follows from that version's event alone (with
//! the moves before it), which is how an old answer can be rebuilt exactly.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::event::Event;
use super::game_id::GameId;
use super::seat_token::SeatToken;
use super::time_control::ValidTimeControl;
use crate::api::{ChangeKind, ClockView, GameEvent, GameView, Status};
use crate::rules::{AnyState, GameKind, Outcome, Player, Termination, Variant, Variants, Winner};
use crate::service::error::{ApiError, Cause, ErrorCode};

/// What never changes after creation (short field names: stored once per game).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Header {
    #[serde(rename = "g")]
    game: GameKind,
    #[serde(rename = "var", default, skip_serializing_if = "Vec::is_empty")]
    variants: Vec<Variant>,
    #[serde(rename = "s")]
    start: String,
    /// Digests of the `p1` and `p2` tokens.
    #[serde(rename = "tok")]
    token_digests: [String; 2],
    /// `[initial_ms, increment_ms]`, absent when untimed.
    #[serde(rename = "tc", default, skip_serializing_if = "Option::is_none")]
    time_control: Option<[u64; 2]>,
    /// Engine levels of the seats the service plays.
    #[serde(rename = "eng", default, skip_serializing_if = "no_engines")]
    engine_seats: [Option<u8>; 2],
    /// When the game was created (epoch ms); event times count from it.
    #[serde(rename = "t0")]
    created_at: u64,
    /// Who pays for the engine seats' thinking, out of its analysis quota: the caller that
    /// created the game (absent without engine seats, or with quotas off).
    #[serde(rename = "pay", default, skip_serializing_if = "Option::is_none")]
    payer: Option<String>,
}

fn no_engines(seats: &[Option<u8>; 2]) -> bool {
    seats.iter().all(Option::is_none)
}

/// What changes with every version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Live {
    #[serde(rename = "p")]
    position: String,
    #[serde(rename = "n")]
    ply: u64,
    /// Time left per seat at `turn_started_at`.
    #[serde(rename = "rem", default)]
    remaining_ms: [u64; 2],
    /// When the running clock started (for a finished game: when the clocks stopped).
    #[serde(rename = "ts")]
    turn_started_at: u64,
    #[serde(rename = "end", default, skip_serializing_if = "Option::is_none")]
    end: Option<End>,
    /// When this version was made.
    #[serde(rename = "at")]
    changed_at: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct End {
    #[serde(rename = "r")]
    result: Winner,
    #[serde(rename = "t")]
    termination: Termination,
    #[serde(rename = "at")]
    at: u64,
}

/// A game in the store's terms: opaque parts the store keeps and appends to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub version: u64,
    /// The header, as JSON (written once).
    pub header: String,
    /// The live part, as JSON (replaced by every change).
    pub live: String,
    /// The moves, canonically, each followed by a space (appended by every move).
    pub moves: String,
    /// The repetition keys of the earlier positions, 8 bytes each, little-endian (appended by
    /// every move of a game that forbids repetition).
    pub history: Vec<u8>,
}

/// A game from the store's event log: what changed after version `after` (0: everything),
/// so that a reader who holds version `after` receives only that, whatever the game's length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    pub version: u64,
    pub after: u64,
    /// The stored event of version `after` (when it is not 0): the reader's copy must show it,
    /// or the copy is not the store's version `after` (a store that lost writes and took others
    /// under the same numbers) and only the whole game will do.
    pub held: Option<String>,
    /// The header: present exactly when `after` is 0.
    pub header: Option<String>,
    /// The live part of `version`, as JSON.
    pub live: String,
    /// The stored events of versions `after + 1 ..= version`, oldest first (a move's event
    /// carries the move: the log is the move list).
    pub events: Vec<String>,
    /// The repetition keys added after `after`, 8 bytes each, little-endian.
    pub history: Vec<u8>,
}

/// A newer version of a game than its reader held, in whichever form the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Newer {
    /// The whole game (the embedded store keeps games so).
    Whole(Snapshot),
    /// The game's log since the reader's version (the Redis store).
    Logged(Logged),
}

/// What a reader holds of a game, for the store to answer with only what is newer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    pub version: u64,
    /// How many repetition keys the history holds (`None`: the game keeps no history).
    pub history_keys: Option<usize>,
}

/// What one change adds to a game, besides its new live part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub event: Event,
    /// The move to append to the move list, canonically.
    pub mv: Option<String>,
    /// The repetition key to append to the history.
    pub history_key: Option<u64>,
}

/// A loaded game.
#[derive(Clone, Debug)]
pub struct StoredGame {
    id: GameId,
    version: u64,
    kind: GameKind,
    header: Arc<Header>,
    live: Live,
    /// Every move, each followed by a space.
    moves: String,
    rules: AnyState,
}

/// A borrowed [`GameView`] up to its move list: the same fields, in the same order, serialized
/// the same way. The view is this object, its move list (written by [`write_moves`]) and
/// [`ViewTail`].
#[derive(Serialize)]
struct ViewHead<'a> {
    id: Display<'a, GameId>,
    game: GameKind,
    variants: &'a [Variant],
    start_position: &'a str,
    position: &'a str,
    turn: Player,
    ply: u64,
    version: u64,
    status: Status,
    result: Option<Winner>,
    termination: Option<Termination>,
}

/// The fields of a [`GameView`] after its move list.
#[derive(Serialize)]
struct ViewTail {
    clock: Option<ClockView>,
    engine_seats: BTreeMap<Player, u8>,
}

/// Serializes as a string through `Display`.
struct Display<'a, T>(&'a T);

impl<T: std::fmt::Display> Serialize for Display<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
    }
}

/// Appends the stored move list (each move followed by a space) as a JSON array of strings.
/// Canonical move names hold nothing JSON escapes, so the list is copied byte by byte, each
/// space closing a name: a few instructions a byte instead of the escaper's pass per string,
/// which made up most of a long game's view (and every move's answer is one). A list that
/// would need escaping (only a corrupt store could hold one) goes through the escaper.
fn write_moves(out: &mut Vec<u8>, moves: &str) {
    let start = out.len();
    out.reserve(2 * moves.len() + 2);
    out.push(b'[');
    let mut in_name = false;
    for &b in moves.as_bytes() {
        if b == b' ' {
            if in_name {
                out.push(b'"');
                in_name = false;
            }
        } else if b.is_ascii_graphic() && b != b'"' && b != b'\\' {
            if !in_name {
                if out.len() > start + 1 {
                    out.push(b',');
                }
                out.push(b'"');
                in_name = true;
            }
            out.push(b);
        } else {
            out.truncate(start);
            let names: Vec<&str> = moves.split_ascii_whitespace().collect();
            serde_json::to_writer(out, &names).expect("strings serialize");
            return;
        }
    }
    if in_name {
        out.push(b'"');
    }
    out.push(b']');
}

fn corrupt(id: GameId, why: impl std::fmt::Display) -> ApiError {
    ApiError {
        cause: Some(Cause::StoreCorrupt(format!("game {id}: {why}"))),
        ..ApiError::new(ErrorCode::Internal, "the stored game could not be read")
    }
}

/// Stored repetition keys (8 bytes each, little-endian).
fn keys(id: GameId, bytes: &[u8]) -> Result<Vec<u64>, ApiError> {
    if !bytes.len().is_multiple_of(8) {
        return Err(corrupt(id, "history is not a whole number of keys"));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|k| u64::from_le_bytes(k.try_into().expect("8 bytes")))
        .collect())
}

impl StoredGame {
    /// A new game (version 1) whose seats take these tokens. `engine_seats` are the engine
    /// levels of the seats the service plays (their tokens are never handed out).
    pub fn create(
        id: GameId,
        rules: AnyState,
        time_control: Option<ValidTimeControl>,
        engine_seats: [Option<u8>; 2],
        tokens: &[SeatToken; 2],
        now: u64,
    ) -> StoredGame {
        let header = Header {
            game: rules.kind(),
            variants: rules.variants().iter().collect(),
            start: rules.position(),
            token_digests: [tokens[0].digest(), tokens[1].digest()],
            time_control: time_control.map(|tc| [tc.initial_ms, tc.increment_ms]),
            engine_seats,
            created_at: now,
            payer: None,
        };
        let live = Live {
            position: rules.position(),
            ply: 0,
            remaining_ms: time_control.map_or([0, 0], |tc| [tc.initial_ms; 2]),
            turn_started_at: now,
            end: None,
            changed_at: now,
        };
        let mut game = StoredGame {
            id,
            version: 1,
            kind: rules.kind(),
            header: Arc::new(header),
            live,
            moves: String::new(),
            rules,
        };
        game.end_by_rules(now);
        game
    }

    /// This new game with its engine seats' thinking paid for by the caller `payer` (see
    /// [`crate::service::quota`]).
    pub fn paid_by(mut self, payer: String) -> StoredGame {
        Arc::make_mut(&mut self.header).payer = Some(payer);
        self
    }

    /// The caller who pays for the engine seats' thinking, if any.
    pub fn payer(&self) -> Option<&str> {
        self.header.payer.as_deref()
    }

    /// Rebuilds a game from the store: parses its position and history, replays nothing.
    pub fn decode(id: GameId, stored: &Snapshot) -> Result<StoredGame, ApiError> {
        let header: Header = serde_json::from_str(&stored.header).map_err(|e| corrupt(id, e))?;
        StoredGame::assemble(
            id,
            stored.version,
            Arc::new(header),
            &stored.live,
            stored.moves.clone(),
            keys(id, &stored.history)?,
        )
    }

    /// The game as the store answered a reader who held `known` (if anything); `None` when
    /// the answer follows from a version that is not the reader's copy (see
    /// [`Logged::held`]): then the reader must ask for the whole game.
    pub fn from_newer(
        id: GameId,
        known: Option<&StoredGame>,
        newer: &Newer,
    ) -> Result<Option<StoredGame>, ApiError> {
        match newer {
            Newer::Whole(snapshot) => StoredGame::decode(id, snapshot).map(Some),
            Newer::Logged(logged) => {
                if let (Some(held), Some(known)) = (&logged.held, known)
                    && !known.shows(held)
                {
                    return Ok(None);
                }
                StoredGame::from_log(id, known, logged).map(Some)
            }
        }
    }

    /// Whether this copy shows the stored event `line` as its own version's: for a move, the
    /// same move at the same time (other changes end the game, which then changes no more).
    fn shows(&self, line: &str) -> bool {
        match self.decode_event(self.version, line) {
            Some(Event::Moved { at, mv, .. }) => {
                at == self.live.changed_at && self.last_move() == Some(mv.as_str())
            }
            Some(_) => true,
            None => false,
        }
    }

    /// A game from its log: the whole game (`after` 0, with its header), or `known` (which
    /// must be version `after`) followed by what changed since. Either way nothing is
    /// replayed: the moves are read off the events, the rules state is rebuilt from the live
    /// position and the history, as [`StoredGame::decode`] does.
    pub fn from_log(
        id: GameId,
        known: Option<&StoredGame>,
        logged: &Logged,
    ) -> Result<StoredGame, ApiError> {
        let (header, mut moves, mut history) = match (&logged.header, known) {
            (Some(header), _) if logged.after == 0 => {
                let header: Header = serde_json::from_str(header).map_err(|e| corrupt(id, e))?;
                (Arc::new(header), String::new(), Vec::new())
            }
            (None, Some(known)) if known.version == logged.after => (
                known.header.clone(),
                known.moves.clone(),
                known.rules.history().to_vec(),
            ),
            _ => {
                return Err(corrupt(
                    id,
                    "a log that follows no version the reader holds",
                ));
            }
        };
        if logged.after + logged.events.len() as u64 != logged.version {
            return Err(corrupt(id, "the log misses versions"));
        }
        for line in &logged.events {
            if let Some(mv) = Event::move_of(line).map_err(|e| corrupt(id, e))? {
                moves.push_str(mv);
                moves.push(' ');
            }
        }
        history.extend(keys(id, &logged.history)?);
        StoredGame::assemble(id, logged.version, header, &logged.live, moves, history)
    }

    fn assemble(
        id: GameId,
        version: u64,
        header: Arc<Header>,
        live: &str,
        moves: String,
        history: Vec<u64>,
    ) -> Result<StoredGame, ApiError> {
        let live: Live = serde_json::from_str(live).map_err(|e| corrupt(id, e))?;
        let kind = header.game;
        let variants = kind
            .with_variants(&header.variants)
            .map_err(|e| corrupt(id, e))?;
        let rules = AnyState::resume(kind, variants, Some(&live.position), history)
            .map_err(|e| corrupt(id, e))?;
        Ok(StoredGame {
            id,
            version,
            kind,
            header,
            live,
            moves,
            rules,
        })
    }

    /// What a reader holding this game knows of it (see [`Known`]).
    pub fn known(&self) -> Known {
        Known {
            version: self.version,
            history_keys: self
                .rules
                .keeps_history()
                .then(|| self.rules.history().len()),
        }
    }

    /// The whole stored form (for creating the game).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            version: self.version,
            header: serde_json::to_string(&*self.header).expect("a header serializes"),
            live: self.live_json(),
            moves: self.moves.clone(),
            history: self
                .rules
                .history()
                .iter()
                .flat_map(|k| k.to_le_bytes())
                .collect(),
        }
    }

    /// The live part as stored.
    pub fn live_json(&self) -> String {
        serde_json::to_string(&self.live).expect("the live part serializes")
    }

    /// About how many bytes this game holds, inline and on the heap (its header counted
    /// whole, though versions of one game share it), for bounding caches.
    pub fn weight(&self) -> usize {
        let header = &*self.header;
        let heap = [
            std::mem::size_of::<Header>(),
            header.start.capacity(),
            header.token_digests.iter().map(String::capacity).sum(),
            header.variants.capacity() * std::mem::size_of::<Variant>(),
            header.payer.as_ref().map_or(0, String::capacity),
            self.moves.capacity(),
            self.live.position.capacity(),
            self.rules.heap_size(),
        ];
        // Each allocation also costs the allocator's rounding and bookkeeping.
        std::mem::size_of::<StoredGame>() + heap.iter().map(|&bytes| bytes + 16).sum::<usize>()
    }

    pub fn id(&self) -> GameId {
        self.id
    }

    pub fn kind(&self) -> GameKind {
        self.kind
    }

    pub fn variants(&self) -> Variants {
        self.rules.variants()
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn ply(&self) -> u64 {
        self.live.ply
    }

    /// The plies left before `max_plies` (the service's cap) draws the game (see
    /// [`StoredGame::play`]): what its searches must know. 0 once the cap has ended it; at
    /// least 1 while it goes on, since the cap is applied after a move (a game past a cap
    /// lowered since still plays its next move, and a win by it counts).
    pub fn plies_to_limit(&self, max_plies: u64) -> u32 {
        if self.termination() == Some(Termination::MoveLimit) {
            return 0;
        }
        u32::try_from(max_plies.saturating_sub(self.live.ply))
            .unwrap_or(u32::MAX)
            .max(1)
    }

    pub fn rules(&self) -> &AnyState {
        &self.rules
    }

    pub fn start_position(&self) -> &str {
        &self.header.start
    }

    /// The moves played, canonically. (Split on ASCII whitespace, which no move's notation
    /// holds: a byte scan, where splitting on a `char` searches and compares per move — this
    /// runs for every move of every view answered.)
    pub fn moves(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.moves.split_ascii_whitespace()
    }

    /// The last move played, if any.
    pub fn last_move(&self) -> Option<&str> {
        self.moves().next_back()
    }

    pub fn is_finished(&self) -> bool {
        self.live.end.is_some()
    }

    /// When this version was made.
    pub fn changed_at(&self) -> u64 {
        self.live.changed_at
    }

    /// When the game was created.
    pub fn created_at(&self) -> u64 {
        self.header.created_at
    }

    /// The stored line of `event`.
    pub fn encode(&self, event: &Event) -> String {
        event.encode(self.header.created_at)
    }

    /// The event of `version` from its stored line.
    pub fn decode_event(&self, version: u64, line: &str) -> Option<Event> {
        Event::decode(line, version, self.header.created_at)
    }

    /// The engine seat to move and its level, if the game is on and an engine is to move.
    pub fn engine_to_move(&self) -> Option<(Player, u8)> {
        if self.is_finished() {
            return None;
        }
        let turn = self.rules.turn();
        self.header.engine_seats[turn.index()].map(|level| (turn, level))
    }

    /// Whether both seats are played by the service's engine.
    pub fn engines_only(&self) -> bool {
        self.header.engine_seats.iter().all(Option::is_some)
    }

    /// Whether the service's engine plays `seat`.
    pub fn is_engine_seat(&self, seat: Player) -> bool {
        self.header.engine_seats[seat.index()].is_some()
    }

    /// Time left for the side to move at `now`, if the game is timed.
    pub fn time_left_to_move(&self, now: u64) -> Option<u64> {
        self.header
            .time_control
            .map(|_| self.remaining_at(self.rules.turn(), now))
    }

    /// When the game next needs the service without anyone asking: at once when an engine is
    /// to move, when the running clock falls otherwise; never once it is over.
    pub fn due(&self) -> Option<u64> {
        if self.is_finished() {
            return None;
        }
        if self.engine_to_move().is_some() {
            return Some(self.live.turn_started_at);
        }
        self.header
            .time_control
            .map(|_| self.live.turn_started_at + self.live.remaining_ms[self.rules.turn().index()])
    }

    /// Which seat a bearer token holds in this game, if any.
    pub fn seat_for(&self, token: &SeatToken) -> Option<Player> {
        let digest = token.digest();
        [Player::P1, Player::P2]
            .into_iter()
            .find(|s| self.header.token_digests[s.index()] == digest)
    }

    /// Time left for `player` at `now` (its clock runs only while it is to move).
    fn remaining_at(&self, player: Player, now: u64) -> u64 {
        let base = self.live.remaining_ms[player.index()];
        if self.is_finished() || self.rules.turn() != player {
            base
        } else {
            base.saturating_sub(now.saturating_sub(self.live.turn_started_at))
        }
    }

    fn clocks(&self) -> Option<[u64; 2]> {
        self.header.time_control.map(|_| self.live.remaining_ms)
    }

    /// Moves to the next version at `now`: call once per change, after making it.
    fn next_version(&mut self, now: u64) {
        self.version += 1;
        self.live.changed_at = now;
    }

    /// Whether the game is on and the side to move has run out of time by `now`.
    pub fn flag_fell(&self, now: u64) -> bool {
        !self.is_finished()
            && self.header.time_control.is_some()
            && now.saturating_sub(self.live.turn_started_at)
                >= self.live.remaining_ms[self.rules.turn().index()]
    }

    /// Ends the game on time if the side to move has run out by `now`: the change, if any.
    pub fn settle_clock(&mut self, now: u64) -> Option<Change> {
        if !self.flag_fell(now) {
            return None;
        }
        let mover = self.rules.turn();
        let left = self.live.remaining_ms[mover.index()];
        let flag = self.live.turn_started_at + left;
        self.live.remaining_ms[mover.index()] = 0;
        self.live.turn_started_at = flag;
        self.live.end = Some(End {
            result: Winner::Player(mover.other()),
            termination: Termination::Timeout,
            at: flag,
        });
        self.next_version(now);
        Some(Change {
            event: Event::TimedOut {
                at: flag,
                seat: mover,
            },
            mv: None,
            history_key: None,
        })
    }

    /// Stops `mover`'s running clock at `now` (its time is charged; the increment is added when
    /// `increment` is set).
    fn charge_clock(&mut self, mover: Player, now: u64, increment: bool) {
        if let Some([_, inc]) = self.header.time_control {
            let mover = mover.index();
            let elapsed = now.saturating_sub(self.live.turn_started_at);
            let left = self.live.remaining_ms[mover].saturating_sub(elapsed);
            self.live.remaining_ms[mover] = left + if increment { inc } else { 0 };
        }
        self.live.turn_started_at = now;
    }

    fn end_by_rules(&mut self, now: u64) {
        if let Some(Outcome {
            winner,
            termination,
        }) = self.rules.outcome()
        {
            self.live.end = Some(End {
                result: winner,
                termination,
                at: now,
            });
        }
    }

    /// Plays `input` for `seat` at `now`; the clock must have been settled first. A game that
    /// reaches `max_plies` ends as a draw by `move_limit` (the service's cap, not a rule).
    pub fn play(
        &mut self,
        seat: Player,
        input: &str,
        now: u64,
        max_plies: u64,
    ) -> Result<Change, ApiError> {
        if self.is_finished() {
            return Err(ApiError::new(ErrorCode::GameOver, "the game is over"));
        }
        if self.rules.turn() != seat {
            return Err(ApiError::new(
                ErrorCode::NotYourTurn,
                format!("it is {}'s turn", self.rules.turn()),
            ));
        }
        let mover = self.rules.turn();
        let (canonical, history_key) = self.rules.play(input)?;
        self.charge_clock(mover, now, true);
        self.moves.push_str(&canonical);
        self.moves.push(' ');
        self.live.ply += 1;
        self.live.position = self.rules.position();
        self.end_by_rules(now);
        if self.live.end.is_none() && self.live.ply >= max_plies {
            self.live.end = Some(End {
                result: Winner::Draw,
                termination: Termination::MoveLimit,
                at: now,
            });
        }
        self.next_version(now);
        Ok(Change {
            event: Event::Moved {
                at: now,
                ply: self.live.ply,
                mv: canonical.clone(),
                clocks: self.clocks(),
                end: self.live.end.map(|e| (e.result, e.termination)),
            },
            mv: Some(canonical),
            history_key,
        })
    }

    /// `seat` resigns at `now`.
    pub fn resign(&mut self, seat: Player, now: u64) -> Result<Change, ApiError> {
        if self.is_finished() {
            return Err(ApiError::new(ErrorCode::GameOver, "the game is over"));
        }
        self.charge_clock(self.rules.turn(), now, false);
        self.live.end = Some(End {
            result: Winner::Player(seat.other()),
            termination: Termination::Resign,
            at: now,
        });
        self.next_version(now);
        Ok(Change {
            event: Event::Resigned {
                at: now,
                seat,
                clocks: self.clocks(),
            },
            mv: None,
            history_key: None,
        })
    }

    /// The game's ply after `event`, one of its earlier events: the plies [`StoredGame::as_of`]
    /// replays.
    pub fn ply_as_of(&self, event: &Event) -> u64 {
        match event {
            Event::Created { .. } => 0,
            Event::Moved { ply, .. } => *ply,
            Event::Resigned { .. } | Event::TimedOut { .. } => self.ply(),
        }
    }

    /// The game as it was at an earlier `version`, whose event is `event`: its moves are a
    /// prefix of these, and its live part follows from the event. Replays that prefix (this is
    /// for rare look-backs, such as rebuilding an old answer, never for a plain request).
    pub fn as_of(&self, version: u64, event: &Event) -> Result<StoredGame, ApiError> {
        let ply = self.ply_as_of(event);
        let variants = self.variants();
        let mut rules = AnyState::new(self.kind, variants, Some(&self.header.start))
            .map_err(|e| corrupt(self.id, e))?;
        let mut moves = String::new();
        for mv in self.moves().take(ply as usize) {
            rules.play(mv).map_err(|e| corrupt(self.id, e))?;
            moves.push_str(mv);
            moves.push(' ');
        }
        let initial = self
            .header
            .time_control
            .map_or([0, 0], |[initial, _]| [initial; 2]);
        let at = event.at();
        let (remaining_ms, end) = match event {
            Event::Created { .. } => (initial, None),
            Event::Moved { clocks, end, .. } => (
                clocks.unwrap_or([0, 0]),
                end.map(|(result, termination)| End {
                    result,
                    termination,
                    at,
                }),
            ),
            Event::Resigned { seat, clocks, .. } => (
                clocks.unwrap_or([0, 0]),
                Some(End {
                    result: Winner::Player(seat.other()),
                    termination: Termination::Resign,
                    at,
                }),
            ),
            Event::TimedOut { seat, .. } => {
                let mut remaining = self.live.remaining_ms;
                remaining[seat.index()] = 0;
                (
                    remaining,
                    Some(End {
                        result: Winner::Player(seat.other()),
                        termination: Termination::Timeout,
                        at,
                    }),
                )
            }
        };
        let mut game = StoredGame {
            id: self.id,
            version,
            kind: self.kind,
            header: self.header.clone(),
            live: Live {
                position: rules.position(),
                ply,
                remaining_ms,
                turn_started_at: at,
                end,
                changed_at: at,
            },
            moves,
            rules,
        };
        if let Event::Created { .. } = event
            && game.live.end.is_none()
        {
            game.end_by_rules(at);
        }
        Ok(game)
    }

    /// Follows the change `event` made at `version` (the next version): how a watcher keeps
    /// its copy of the game current from the event log. Returns the change as the API shows
    /// it.
    pub fn apply(&mut self, version: u64, event: &Event) -> Result<GameEvent, ApiError> {
        let mover = self.rules.turn();
        let (kind, seat, mv) = match event {
            Event::Created { .. } => return Err(corrupt(self.id, "a second creation")),
            Event::Moved {
                at,
                ply,
                mv,
                clocks,
                end,
            } => {
                let (canonical, _) = self.rules.play(mv).map_err(|e| corrupt(self.id, e))?;
                self.moves.push_str(&canonical);
                self.moves.push(' ');
                self.live.ply = *ply;
                self.live.position = self.rules.position();
                self.live.remaining_ms = clocks.unwrap_or([0, 0]);
                self.live.end = end.map(|(result, termination)| End {
                    result,
                    termination,
                    at: *at,
                });
                (ChangeKind::Move, mover, Some(canonical))
            }
            Event::Resigned { at, seat, clocks } => {
                self.live.remaining_ms = clocks.unwrap_or([0, 0]);
                self.live.end = Some(End {
                    result: Winner::Player(seat.other()),
                    termination: Termination::Resign,
                    at: *at,
                });
                (ChangeKind::Resign, *seat, None)
            }
            Event::TimedOut { at, seat } => {
                self.live.remaining_ms[seat.index()] = 0;
                self.live.end = Some(End {
                    result: Winner::Player(seat.other()),
                    termination: Termination::Timeout,
                    at: *at,
                });
                (ChangeKind::Timeout, *seat, None)
            }
        };
        let at = event.at();
        self.live.turn_started_at = at;
        self.live.changed_at = at;
        self.version = version;
        Ok(GameEvent {
            version,
            kind,
            at,
            seat,
            mv,
            ply: self.ply(),
            position: self.live.position.clone(),
            turn: self.rules.turn(),
            status: self.status(),
            result: self.result(),
            termination: self.termination(),
            clock: self.clock_view(at),
        })
    }

    pub fn clock_view(&self, now: u64) -> Option<ClockView> {
        let [initial_ms, increment_ms] = self.header.time_control?;
        let remaining_ms: BTreeMap<Player, u64> = Player::BOTH
            .into_iter()
            .map(|p| (p, self.remaining_at(p, now)))
            .collect();
        Some(ClockView {
            initial_ms,
            increment_ms,
            remaining_ms,
            running: (!self.is_finished()).then(|| self.rules.turn()),
            turn_started_at: self.live.turn_started_at,
            server_now: now,
        })
    }

    pub fn status(&self) -> Status {
        if self.is_finished() {
            Status::Finished
        } else {
            Status::Ongoing
        }
    }

    pub fn result(&self) -> Option<Winner> {
        self.live.end.map(|e| e.result)
    }

    pub fn termination(&self) -> Option<Termination> {
        self.live.end.map(|e| e.termination)
    }

    /// [`StoredGame::view`] as JSON, written straight from the game (no intermediate view to
    /// allocate: this is every read's and every move's answer). The same bytes as serializing
    /// the view, which a test holds it to.
    pub fn view_json(&self, now: u64) -> String {
        let head = ViewHead {
            id: Display(&self.id),
            game: self.header.game,
            variants: &self.header.variants,
            start_position: &self.header.start,
            position: &self.live.position,
            turn: self.rules.turn(),
            ply: self.ply(),
            version: self.version,
            status: self.status(),
            result: self.result(),
            termination: self.termination(),
        };
        let tail = ViewTail {
            clock: self.clock_view(now),
            engine_seats: Player::BOTH
                .into_iter()
                .filter_map(|p| self.header.engine_seats[p.index()].map(|level| (p, level)))
                .collect(),
        };
        // The head without its closing brace, `,"moves":[…],`, the tail without its opening one.
        // `write_moves` reserves room for the list itself.
        let mut out = Vec::with_capacity(512);
        serde_json::to_writer(&mut out, &head).expect("a view serializes");
        out.pop();
        out.extend_from_slice(b",\"moves\":");
        write_moves(&mut out, &self.moves);
        out.push(b',');
        let start = out.len();
        serde_json::to_writer(&mut out, &tail).expect("a view serializes");
        out.remove(start);
        String::from_utf8(out).expect("serde_json writes UTF-8")
    }

    pub fn view(&self, now: u64) -> GameView {
        GameView {
            id: self.id.to_string(),
            game: self.header.game,
            variants: self.header.variants.clone(),
            start_position: self.header.start.clone(),
            position: self.live.position.clone(),
            turn: self.rules.turn(),
            ply: self.ply(),
            version: self.version,
            status: self.status(),
            result: self.result(),
            termination: self.termination(),
            moves: self.moves().map(String::from).collect(),
            clock: self.clock_view(now),
            engine_seats: Player::BOTH
                .into_iter()
                .filter_map(|p| self.header.engine_seats[p.index()].map(|level| (p, level)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variants;

    fn game(kind: GameKind, timed: bool) -> StoredGame {
        let tokens = [SeatToken::generate(), SeatToken::generate()];
        let time_control = timed.then_some(ValidTimeControl {
            initial_ms: 60_000,
            increment_ms: 500,
        });
        let state = AnyState::new(kind, Variants::NONE, None).unwrap();
        StoredGame::create(
            GameId::new_random(),
            state,
            time_control,
            [None, Some(3)],
            &tokens,
            1_000,
        )
    }

    #[test]
    fn the_plies_to_the_cap_are_never_0_while_the_game_goes_on() {
        let mut g = game(GameKind::Alcazar, false);
        assert_eq!(g.plies_to_limit(2), 2);
        g.play(Player::P1, "Kd8", 1_000, 2000).unwrap();
        assert_eq!(g.plies_to_limit(2), 1);
        // Played on under a higher cap, then read under a lower one: its next move is still
        // played (the cap is applied after it).
        g.play(Player::P2, "Kf2", 1_000, 2000).unwrap();
        g.play(Player::P1, "Kb8", 1_000, 2000).unwrap();
        assert_eq!(g.plies_to_limit(2), 1);
        // Ended by the cap: nothing is left.
        let next = g.rules().legal_moves()[0].clone();
        g.play(Player::P2, &next, 1_000, 4).unwrap();
        assert_eq!(g.termination(), Some(Termination::MoveLimit));
        assert_eq!(g.plies_to_limit(4), 0);
        assert_eq!(g.plies_to_limit(2000), 0);
    }

    #[test]
    fn a_move_list_is_the_serialized_list_also_when_it_needs_escaping() {
        for moves in [
            "",
            " ",
            "a1+b2 ",
            " a1 b2",
            "b2-c3^d4 e8d9  Kd8 ",
            "a1\tb2 ",
            "a\"b c\\d e\u{1}f \u{e9} ",
        ] {
            let mut out = Vec::new();
            write_moves(&mut out, moves);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&moves.split_ascii_whitespace().collect::<Vec<_>>()).unwrap(),
                "{moves:?}"
            );
        }
    }

    #[test]
    fn the_view_json_is_the_serialized_view() {
        for kind in GameKind::ALL {
            for timed in [false, true] {
                let mut game = game(kind, timed);
                for ply in 0..12 {
                    let now = 1_000 + 700 * ply;
                    assert_eq!(
                        game.view_json(now + 50),
                        serde_json::to_string(&game.view(now + 50)).unwrap(),
                        "{kind} at ply {ply}"
                    );
                    let Some(mv) = game.rules().legal_moves().into_iter().next() else {
                        break;
                    };
                    let seat = game.rules().turn();
                    game.play(seat, &mv, now, 2000).unwrap();
                }
                game.resign(Player::P1, 99_999).unwrap();
                assert_eq!(
                    game.view_json(100_000),
                    serde_json::to_string(&game.view(100_000)).unwrap()
                );
            }
        }
    }

    /// The log of `game` after version `after`, as a store keeps it.
    fn log_after(game: &StoredGame, events: &[(u64, Event)], after: u64) -> Logged {
        let history = game.rules.history();
        let earlier = events.iter().filter(|(v, _)| *v <= after).count();
        let keys_before = if game.rules.keeps_history() {
            earlier.saturating_sub(1)
        } else {
            0
        };
        Logged {
            version: game.version,
            after,
            held: events
                .iter()
                .find(|(v, _)| after > 0 && *v == after)
                .map(|(_, e)| game.encode(e)),
            header: (after == 0).then(|| serde_json::to_string(&*game.header).unwrap()),
            live: game.live_json(),
            events: events
                .iter()
                .filter(|(v, _)| *v > after)
                .map(|(_, e)| game.encode(e))
                .collect(),
            history: history[keys_before.min(history.len())..]
                .iter()
                .flat_map(|k| k.to_le_bytes())
                .collect(),
        }
    }

    #[test]
    fn a_game_from_its_log_is_the_game_from_any_version_on() {
        for kind in GameKind::ALL {
            let mut game = game(kind, true);
            let mut versions = vec![game.clone()];
            let mut events = vec![(1, Event::Created { at: 1_000 })];
            for ply in 0..10 {
                let moves = game.rules().legal_moves();
                let Some(mv) = moves.get(ply % moves.len().max(1)) else {
                    break;
                };
                let change = game
                    .play(game.rules().turn(), mv, 2_000 + ply as u64, 2000)
                    .unwrap();
                events.push((game.version(), change.event));
                versions.push(game.clone());
            }
            for held in &versions {
                let logged = log_after(&game, &events, held.version());
                let read = StoredGame::from_log(game.id(), Some(held), &logged).unwrap();
                assert_eq!(
                    read.snapshot(),
                    game.snapshot(),
                    "{kind} from {}",
                    held.version()
                );
            }
            let whole = log_after(&game, &events, 0);
            let read = StoredGame::from_log(game.id(), None, &whole).unwrap();
            assert_eq!(read.snapshot(), game.snapshot(), "{kind} whole");
        }
    }

    #[test]
    fn a_log_that_does_not_follow_the_held_version_is_refused() {
        let mut game = game(GameKind::Pillarz, false);
        let held = game.clone();
        let mut events = vec![(1, Event::Created { at: 1_000 })];
        for ply in 0..3 {
            let mv = game.rules().legal_moves()[0].clone();
            let change = game
                .play(game.rules().turn(), &mv, 2_000 + ply, 2000)
                .unwrap();
            events.push((game.version(), change.event));
        }
        let mut missing = log_after(&game, &events, 1);
        missing.events.remove(1);
        assert!(StoredGame::from_log(game.id(), Some(&held), &missing).is_err());
        let other = log_after(&game, &events, 2);
        assert!(
            StoredGame::from_log(game.id(), Some(&held), &other).is_err(),
            "a log after version 2 cannot follow version 1"
        );
        assert!(
            StoredGame::from_log(game.id(), None, &other).is_err(),
            "no header"
        );
    }
}
