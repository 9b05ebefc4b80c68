//! The HTTP API's request and response types, shared by the server and the CLI client so the
//! two cannot drift. Field docs here become the OpenAPI text.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

mod record_text;
mod unique_keys;
mod whole;

/// The rules' own types, under the API's names where they differ (the OpenAPI schema names):
/// the API speaks the rules' vocabulary without converting it, as it speaks the engine's
/// `Score` and `Limit`.
pub use crate::rules::{
    GameKind, Player as Seat, Termination as TerminationKind, Variant, Winner as GameResult,
};

/// Whether a game is still being played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ongoing,
    Finished,
}

/// A Fischer time control: every player starts with `initial_ms` and gains `increment_ms`
/// after each of their moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"initial_ms": 300000, "increment_ms": 3000}))]
pub struct TimeControl {
    /// Starting time per player, in milliseconds (1 to 86,400,000).
    #[serde(deserialize_with = "whole::u64")]
    #[schema(minimum = 1, maximum = 86_400_000)]
    pub initial_ms: u64,
    /// Time added after each move, in milliseconds (0 to 3,600,000).
    #[serde(deserialize_with = "whole::u64")]
    #[schema(minimum = 0, maximum = 3_600_000)]
    pub increment_ms: u64,
}

/// `POST /v1/games`: a new game.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"game": "pillarz", "time_control": {"initial_ms": 300000, "increment_ms": 3000}}))]
pub struct CreateGame {
    /// Which game to play.
    pub game: GameKind,
    /// Rules variants: `size-8` and `jumpers` (Pilastri only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<Variant>,
    /// Absent for an untimed game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
    /// Start from this position (the game's notation) instead of the initial one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// Seats played by the service's engine, e.g. `{"p2": {"engine": {"level": 3}}}`.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "unique_keys::map"
    )]
    #[schema(example = json!({"p2": {"engine": {"level": 3}}}))]
    pub seats: BTreeMap<Seat, SeatSpec>,
}

/// Who plays a seat. A seat not listed is played by a person holding its token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatSpec {
    /// The service's engine plays this seat.
    pub engine: EngineSpec,
}

/// A computer opponent. Levels in pillarz, Pilastri and Alcazar: 1 (20 ms, depth 1, margin 250),
/// 2 (40 ms, depth 2, margin 150), 3 (60 ms, depth 3, margin 80), 4 (100 ms, depth 4, margin
/// 40), 5 (200 ms, 15,000 nodes), 6 (400 ms, 60,000 nodes), 7 (800 ms, 250,000 nodes), 8
/// (1.5 s, no cap). Pyrga, which is solved exactly sooner, has its own table: 1 (depth 1,
/// margin 1,000), 2 (depth 2, margin 1,600), 3 (depth 2, margin 600), 4 (depth 3, margin
/// 320), 5 (depth 4, margin 160), 6 (depth 6), 7 (depth 9), 8 (1.5 s, no cap). A level with a
/// margin plays one of the engine's near-best moves (within the margin of the best score, in
/// the game's evaluation units); every level plays a proven win. Its clock runs like anyone's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EngineSpec {
    /// 1 (weakest) to 8 (strongest).
    #[serde(deserialize_with = "whole::u8")]
    #[schema(minimum = 1, maximum = 8)]
    pub level: u8,
}

/// The clocks of a timed game. Only the side to move has a running clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ClockView {
    /// The starting time per player, in milliseconds.
    pub initial_ms: u64,
    /// The time added after each move, in milliseconds.
    pub increment_ms: u64,
    /// Time left per seat as of `server_now`, in milliseconds.
    #[schema(example = json!({"p1": 297512, "p2": 300000}))]
    pub remaining_ms: BTreeMap<Seat, u64>,
    /// The seat whose clock is running, or null when the game is over.
    pub running: Option<Seat>,
    /// When the running clock started, in epoch milliseconds.
    pub turn_started_at: u64,
    /// The server's time when this view was made, in epoch milliseconds.
    pub server_now: u64,
}

/// A game as everyone may see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({
    "id": "7b0d5c8e-3f51-4a8e-9a8c-2c1a0e3f9d11", "game": "pillarz", "variants": [],
    "start_position": "00000/00000/00000/00000/00000 1",
    "position": "00000/00000/00000/00000/00x00x0 2", "turn": "p2", "ply": 1, "version": 2,
    "status": "ongoing", "result": null, "termination": null, "moves": ["b1+d1"], "clock": null,
    "engine_seats": {}
}))]
pub struct GameView {
    /// The game's id (a UUID).
    pub id: String,
    /// Which game is played.
    pub game: GameKind,
    /// Variants in force.
    pub variants: Vec<Variant>,
    /// The position the game started from.
    pub start_position: String,
    /// The current position, in the game's notation.
    pub position: String,
    /// The seat to move (in a finished game: the seat that would move next).
    pub turn: Seat,
    /// Moves played so far.
    pub ply: u64,
    /// Increases with every change; also sent as the `ETag`.
    pub version: u64,
    /// `ongoing` or `finished`.
    pub status: Status,
    /// Set when the game is finished.
    pub result: Option<GameResult>,
    /// Set when the game is finished.
    pub termination: Option<TerminationKind>,
    /// Every move played, in canonical notation.
    pub moves: Vec<String>,
    /// Null for an untimed game.
    pub clock: Option<ClockView>,
    /// The seats the service's engine plays, with their levels.
    #[serde(default)]
    pub engine_seats: BTreeMap<Seat, u8>,
}

/// What kind of change an event reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A move was played (it may have ended the game).
    Move,
    /// A seat resigned.
    Resign,
    /// A seat's clock ran out.
    Timeout,
}

/// One change of a game, as its events stream reports it: what happened, and the game's
/// state right after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({
    "version": 3, "kind": "move", "at": 1_764_571_234_567_u64, "seat": "p2", "move": "b4+d2",
    "ply": 2, "position": "00000/00o000/00000/0000o0/00x00x0 1", "turn": "p1",
    "status": "ongoing", "result": null, "termination": null, "clock": null
}))]
pub struct GameEvent {
    /// The game's version after the change (also the SSE `id`).
    pub version: u64,
    /// What happened.
    pub kind: ChangeKind,
    /// When, in epoch milliseconds.
    pub at: u64,
    /// Who moved, resigned or ran out of time.
    pub seat: Seat,
    /// The move played, canonically (for `kind` `move`).
    #[serde(rename = "move")]
    pub mv: Option<String>,
    /// Moves played so far.
    pub ply: u64,
    /// The position after the change, in the game's notation.
    pub position: String,
    /// The seat to move next.
    pub turn: Seat,
    /// `ongoing` or `finished`.
    pub status: Status,
    /// Set when the game is finished.
    pub result: Option<GameResult>,
    /// Set when the game is finished.
    pub termination: Option<TerminationKind>,
    /// The clocks right after the change (`server_now` is `at`); null for an untimed game.
    pub clock: Option<ClockView>,
}

/// One line of the NDJSON events stream (`Accept: application/x-ndjson`); the SSE stream sends
/// the same `game` and `change` payloads as `data`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum StreamLine {
    /// The whole game: the first line, or after a gap the log could not fill.
    Game { version: u64, game: GameView },
    /// One change.
    Change { version: u64, change: GameEvent },
    /// Nothing happened for a while.
    Heartbeat,
}

impl GameView {
    /// Follows one change of the events stream.
    pub fn apply(&mut self, change: &GameEvent) {
        self.version = change.version;
        self.ply = change.ply;
        self.position = change.position.clone();
        self.turn = change.turn;
        self.status = change.status;
        self.result = change.result;
        self.termination = change.termination;
        self.clock = change.clock.clone();
        if let Some(mv) = &change.mv {
            self.moves.push(mv.clone());
        }
    }
}

/// The answer to `POST /v1/games`: the game and its seat tokens, shown only this once.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct CreatedGame {
    /// The new game.
    pub game: GameView,
    /// One secret bearer token per seat played by a person: send it as
    /// `Authorization: Bearer <token>` to move or resign for that seat.
    #[schema(example = json!({"p1": "9f2c…", "p2": "41ab…"}))]
    pub tokens: BTreeMap<Seat, String>,
}

/// `POST /v1/games/{id}/moves`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"move": "b2-c3^d4", "expected_ply": 4}))]
pub struct SubmitMove {
    /// The move in the game's notation; any case and spaces are accepted.
    #[serde(rename = "move")]
    pub mv: String,
    /// If given, the move is refused with `409 stale_version` unless exactly this many moves
    /// have been played.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_u64"
    )]
    pub expected_ply: Option<u64>,
}

/// The legal moves of a game's current position.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct LegalMoves {
    /// Moves played so far.
    pub ply: u64,
    /// The seat to move.
    pub turn: Seat,
    /// Every legal move in canonical notation; empty when the game is over.
    #[schema(example = json!(["Kb6", "Kd8", "e8d9"]))]
    pub moves: Vec<String>,
}

/// One game of the catalog.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct CatalogGame {
    /// The name used in requests.
    pub game: GameKind,
    /// The game's display name.
    pub title: String,
    /// The variants it accepts.
    pub variants: Vec<CatalogVariant>,
    /// The seats, in turn order.
    pub seats: Vec<CatalogSeat>,
    /// The initial position, in the game's notation.
    pub start_position: String,
    /// How positions are written.
    pub position_notation: String,
    /// How moves are written.
    pub move_notation: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct CatalogVariant {
    /// The name used in requests.
    pub name: String,
    /// What the variant changes.
    pub description: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct CatalogSeat {
    /// The seat's API name.
    pub seat: Seat,
    /// What the rules call this side.
    pub name: String,
    /// The colour of its pieces.
    pub colour: String,
}

/// Everything the service plays.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct Catalog {
    /// The four games.
    pub games: Vec<CatalogGame>,
    /// The accepted time controls.
    pub time_controls: TimeControlLimits,
    /// The largest analysis this service runs (a larger request runs capped to these).
    pub analysis_limits: AnalysisLimits,
}

/// The caps on one analysis, from the service's configuration.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct AnalysisLimits {
    /// Largest `movetime_ms`.
    pub max_movetime_ms: u64,
    /// Largest `depth`.
    pub max_depth: u32,
    /// Largest `nodes`.
    pub max_nodes: u64,
    /// Largest `multipv`.
    pub max_multipv: usize,
}

/// The time controls accepted at creation (or none, for an untimed game).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct TimeControlLimits {
    /// Smallest `initial_ms`.
    pub min_initial_ms: u64,
    /// Largest `initial_ms`.
    pub max_initial_ms: u64,
    /// Largest `increment_ms`.
    pub max_increment_ms: u64,
}

/// An error, as `application/problem+json` (RFC 9457).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({
    "type": "/problems/illegal_move", "title": "Illegal move", "status": 422,
    "code": "illegal_move", "detail": "b2-c3^d4 is not legal here: c3 is occupied",
    "request_id": "0f0e4f7a-2b1d-4a39-8a36-1f6fb2a9d0c1"
}))]
pub struct Problem {
    /// A URI reference naming the kind of problem: `/problems/<code>`, relative to the
    /// service, where a page explains it.
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary of the problem kind.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// The stable, machine-readable error code.
    pub code: String,
    /// What exactly went wrong, for people.
    pub detail: String,
    /// The id of the request, also in the server's logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A health check's answer.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`, or what is wrong.
    pub status: String,
}

/// `POST /v1/analysis`: analyse any position.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"game": "pillarz", "position": "00000/00o00x0/00000/00x00o0/00000 1",
    "limits": {"movetime_ms": 500}, "multipv": 3}))]
pub struct AnalysisRequest {
    /// Which game the position is of.
    pub game: GameKind,
    /// Rules variants (Pilastri: `size-8`, `jumpers`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<Variant>,
    /// The position, in the game's notation.
    pub position: String,
    /// One limit: `{"depth": N}`, `{"nodes": N}` or `{"movetime_ms": N}`; capped by the server.
    #[serde(deserialize_with = "whole::limit")]
    #[schema(value_type = LimitSchema)]
    pub limits: crate::engine::Limit,
    /// How many best moves to report (default 1, at most 16).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_usize"
    )]
    #[schema(minimum = 1, maximum = 16)]
    pub multipv: Option<usize>,
}

/// `POST /v1/games/{id}/analysis`: analyse a stored game's current position (its history
/// counts, e.g. for Alcazar's no-repetition rule).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"limits": {"depth": 6}, "multipv": 2}))]
pub struct GameAnalysisRequest {
    /// As for `POST /v1/analysis`.
    #[serde(deserialize_with = "whole::limit")]
    #[schema(value_type = LimitSchema)]
    pub limits: crate::engine::Limit,
    /// How many best moves to report (default 1, at most 16).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::opt_usize"
    )]
    #[schema(minimum = 1, maximum = 16)]
    pub multipv: Option<usize>,
}

/// The schema of an analysis's `limits` (a [`crate::engine::Limit`]): exactly one of the three
/// keys, each a whole number from 1 to its maximum ([`whole::LIMIT_MAX`]); the server then caps
/// it by its own `--analysis-max-…` settings.
pub struct LimitSchema;

impl utoipa::PartialSchema for LimitSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, OneOfBuilder, Type};
        let mut one_of = OneOfBuilder::new().description(Some(
            "The limit of one search: `{\"depth\": 6}`, `{\"nodes\": 100000}` or \
             `{\"movetime_ms\": 500}`, capped by the server.",
        ));
        for (key, max, text, title) in whole::LIMIT_MAX {
            one_of = one_of.item(
                ObjectBuilder::new()
                    .title(Some(title))
                    .property(
                        key,
                        ObjectBuilder::new()
                            .schema_type(Type::Integer)
                            .minimum(Some(1usize))
                            .maximum(Some(max as usize))
                            .description(Some(text)),
                    )
                    .required(key)
                    .additional_properties(Some(AdditionalProperties::FreeForm(false)))
                    .description(Some(text)),
            );
        }
        utoipa::openapi::schema::Schema::OneOf(one_of.build()).into()
    }
}

impl ToSchema for LimitSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        "Limit".into()
    }
}

/// A winner's wire form is its name, not serde's shape of an enum with data.
const GAME_RESULTS: [&str; 3] = ["p1", "p2", "draw"];

impl Serialize for GameResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GameResult {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        GameResult::parse(&name)
            .ok_or_else(|| serde::de::Error::unknown_variant(&name, &GAME_RESULTS))
    }
}

impl utoipa::PartialSchema for GameResult {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("Who won a finished game."))
            .enum_values(Some(GAME_RESULTS))
            .into()
    }
}

impl ToSchema for GameResult {
    fn name() -> std::borrow::Cow<'static, str> {
        "GameResult".into()
    }
}

/// One of the best moves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AnalysisLineView {
    /// The move, canonically.
    #[serde(rename = "move")]
    pub mv: String,
    /// Its score for the side to move.
    pub score: crate::engine::Score,
    /// The expected continuation, starting with the move.
    pub pv: Vec<String>,
}

/// The engine's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"best_move": "c2-c3^d4", "score": {"value": 35},
    "pv": ["c2-c3^d4", "d4-d3^c4"], "lines": [{"move": "c2-c3^d4", "score": {"value": 35},
    "pv": ["c2-c3^d4", "d4-d3^c4"]}], "depth": 7, "nodes": 181234, "time_ms": 500}))]
pub struct AnalysisView {
    /// Null when the position has no legal move (the game is over).
    pub best_move: Option<String>,
    /// From the side to move's view: `{"value": v}` (heuristic), or `{"win_in": n}` /
    /// `{"loss_in": n}` plies, or `"draw"`, when proven.
    pub score: crate::engine::Score,
    /// The principal variation of the best move.
    pub pv: Vec<String>,
    /// The `multipv` best moves, best first: fewer when the limits ended the search before
    /// its first depth was done (only the moves it searched have a score; at least one).
    pub lines: Vec<AnalysisLineView>,
    /// The last fully searched depth.
    pub depth: u32,
    /// Positions searched.
    pub nodes: u64,
    /// Time spent, in milliseconds.
    pub time_ms: u64,
}

/// A game's record: everything needed to replay and archive it (`GET /v1/games/{id}/record`).
/// Its `position` can start a new game (`POST /v1/games` with `position`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({
    "id": "7b0d5c8e-3f51-4a8e-9a8c-2c1a0e3f9d11", "game": "pillarz", "variants": [],
    "created_at": 1_764_571_234_567_u64,
    "time_control": {"initial_ms": 300000, "increment_ms": 3000},
    "start_position": "00000/00000/00000/00000/00000 1",
    "moves": [{"ply": 1, "seat": "p1", "move": "b1+d1", "at": 1_764_571_236_000_u64,
               "remaining_ms": {"p1": 301567, "p2": 300000}}],
    "position": "00000/00000/00000/00000/00x00x0 2", "status": "ongoing",
    "result": null, "termination": null, "ended_at": null, "ended_by": null
}))]
pub struct GameRecord {
    /// The game's id (a UUID).
    pub id: String,
    /// Which game.
    pub game: GameKind,
    /// Variants in force.
    pub variants: Vec<Variant>,
    /// When the game was created, in epoch milliseconds.
    pub created_at: u64,
    /// Null for an untimed game.
    pub time_control: Option<TimeControl>,
    /// The position the game started from.
    pub start_position: String,
    /// Every move, in order.
    pub moves: Vec<RecordMove>,
    /// The position after the last move.
    pub position: String,
    /// `ongoing` or `finished`.
    pub status: Status,
    /// Set when the game is finished.
    pub result: Option<GameResult>,
    /// Set when the game is finished.
    pub termination: Option<TerminationKind>,
    /// When the game ended, in epoch milliseconds.
    pub ended_at: Option<u64>,
    /// The seat that resigned or ran out of time (null for other endings).
    pub ended_by: Option<Seat>,
}

/// One move of a record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RecordMove {
    /// 1 for the first move.
    pub ply: u64,
    /// Who played it.
    pub seat: Seat,
    /// The move, canonically.
    #[serde(rename = "move")]
    pub mv: String,
    /// When it was played, in epoch milliseconds.
    pub at: u64,
    /// Both clocks right after it (null when untimed).
    pub remaining_ms: Option<BTreeMap<Seat, u64>>,
}
