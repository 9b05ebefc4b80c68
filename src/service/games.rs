//! Loading and changing games in the store: the compare-and-set loop every write goes through.
//!
//! A change is computed on a freshly loaded game and written only if nobody wrote in between;
//! otherwise it is recomputed on the newer game. A clock that ran out is settled (the game ends
//! on time) by whichever request notices first — reads included — and written like any change.

use sha2::{Digest, Sha256};

use crate::api::Seat;

use super::domain::{GameId, IdempotencyKey, SeatToken, StoredGame};
use super::error::{ApiError, ErrorCode};
use super::state::{AppState, now_ms};
use super::store::WriteExtras;

/// How many times a write is recomputed after losing a race before giving up with a 503.
const MAX_ATTEMPTS: usize = 32;

/// A request's `Idempotency-Key` and what it must match to be answered by a saved answer.
///
/// A key is scoped to (game, seat, operation): the seat is the one the token holds, checked
/// before anything is replayed. The answer is saved with a fingerprint (SHA-256) of the
/// operation and the request, so the same key with another request is refused (`422
/// idempotency_key_reused`) instead of being answered with an unrelated game.
pub struct Idempotent<'a> {
    pub key: &'a IdempotencyKey,
    pub token: &'a SeatToken,
    /// `move` or `resign`.
    pub operation: &'static str,
    /// The request as the client sent it (its parsed body, serialized).
    pub request: String,
}

impl Idempotent<'_> {
    fn fingerprint(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(self.operation.as_bytes());
        hash.update(b"\n");
        hash.update(self.request.as_bytes());
        hex::encode(hash.finalize())
    }

    /// The store's slot for this key: `<seat>:<operation>:<key>` (the store adds the game).
    fn slot(&self, game: &StoredGame) -> Result<String, ApiError> {
        let seat = game.seat_for(self.token).ok_or_else(|| {
            ApiError::new(
                ErrorCode::WrongSeat,
                "this token holds no seat in this game",
            )
        })?;
        let seat = match seat {
            Seat::P1 => "p1",
            Seat::P2 => "p2",
        };
        Ok(format!("{seat}:{}:{}", self.operation, self.key.as_str()))
    }
}

/// What an idempotent answer is saved as: the request's fingerprint, a newline, the answer.
fn saved_answer(fingerprint: &str, answer: &str) -> String {
    format!("{fingerprint}\n{answer}")
}

/// The saved answer for `fingerprint`, or `422` if the key came with another request.
fn replay(saved: &str, fingerprint: &str) -> Result<String, ApiError> {
    match saved.split_once('\n') {
        Some((f, answer)) if f == fingerprint => Ok(answer.to_string()),
        Some(_) => Err(ApiError::new(
            ErrorCode::IdempotencyKeyReused,
            "this Idempotency-Key was already used by this seat for a different request; \
             send a new key with a new request",
        )),
        None => Err(ApiError::new(
            ErrorCode::Internal,
            "a saved answer could not be read",
        )),
    }
}

/// The answer to a write.
pub enum Written {
    /// The change was applied: the game after it, and the answer's JSON.
    Applied(Box<StoredGame>, String),
    /// A retried request: the first answer, replayed.
    Replayed(String),
}

fn contention() -> ApiError {
    ApiError {
        code: ErrorCode::StoreUnavailable,
        detail: "too many concurrent writes to this game; try again".into(),
        retry_after: Some(1),
    }
}

async fn fetch(state: &AppState, id: GameId) -> Result<StoredGame, ApiError> {
    let stored = state
        .store
        .load(&id.to_string())
        .await?
        .ok_or_else(|| ApiError::game_not_found(&id.to_string()))?;
    StoredGame::decode(id, &stored)
}

/// How long the store keeps `game` after a write: the idle period while it is on (so every
/// change renews it), the finished lifetime once it is over.
pub fn lifetime(state: &AppState, game: &StoredGame) -> std::time::Duration {
    if game.is_finished() {
        state.settings.finished_ttl
    } else {
        state.settings.idle_ttl
    }
}

/// Saves `game` (already at its next version) if the stored version is still `expected`.
async fn commit(
    state: &AppState,
    expected: u64,
    game: &StoredGame,
    answer: Option<(&str, &str)>,
) -> Result<bool, ApiError> {
    let extras = WriteExtras {
        expire_after: lifetime(state, game),
        idempotent_answer: answer,
    };
    let event = game.event(now_ms());
    Ok(state
        .store
        .compare_and_set(
            &game.id().to_string(),
            expected,
            &game.encode(),
            &event,
            extras,
        )
        .await?)
}

/// Loads a game and settles its clock (saving that) if time ran out.
async fn fetch_settled(
    state: &AppState,
    id: GameId,
) -> Result<Option<(StoredGame, u64)>, ApiError> {
    let mut game = fetch(state, id).await?;
    let now = now_ms();
    if game.settle_clock(now) {
        let expected = game.version();
        game.bump_version();
        if !commit(state, expected, &game, None).await? {
            super::metrics::METRICS.cas_conflicts.inc();
            return Ok(None);
        }
    }
    Ok(Some((game, now)))
}

/// Loads a game for reading, settling its clock first if time ran out.
pub async fn read(state: &AppState, id: GameId) -> Result<(StoredGame, u64), ApiError> {
    for _ in 0..MAX_ATTEMPTS {
        if let Some(found) = fetch_settled(state, id).await? {
            return Ok(found);
        }
    }
    Err(contention())
}

/// Applies `change` to the game and saves it atomically; `render` makes the answer, which is
/// saved with the change when the request has an `Idempotency-Key`.
///
/// The game is loaded before the saved answer is looked up, and an answer is saved in the same
/// atomic step as its change: so a retry that finds no answer sees a game without the first
/// request's change, and a retry racing the first request either replays its answer or loses
/// the compare-and-set and then replays it — an honest retry never gets a `409`.
pub async fn write<T>(
    state: &AppState,
    id: GameId,
    idempotent: Option<Idempotent<'_>>,
    change: impl Fn(&mut StoredGame, u64) -> Result<T, ApiError>,
    render: impl Fn(&StoredGame, &T, u64) -> String,
) -> Result<Written, ApiError> {
    let fingerprint = idempotent.as_ref().map(Idempotent::fingerprint);
    for _ in 0..MAX_ATTEMPTS {
        let Some((mut game, now)) = fetch_settled(state, id).await? else {
            continue;
        };
        let slot = match &idempotent {
            Some(idempotent) => Some(idempotent.slot(&game)?),
            None => None,
        };
        if let (Some(slot), Some(fingerprint)) = (&slot, &fingerprint)
            && let Some(saved) = state.store.idempotent_answer(&id.to_string(), slot).await?
        {
            return replay(&saved, fingerprint).map(Written::Replayed);
        }
        let expected = game.version();
        let before_ply = game.ply();
        let outcome = change(&mut game, now)?;
        if game.ply() > before_ply {
            game.end_at_move_limit(state.settings.max_plies, now);
        }
        game.bump_version();
        let answer = render(&game, &outcome, now);
        let saved = fingerprint.as_ref().map(|f| saved_answer(f, &answer));
        let to_save = slot.as_deref().zip(saved.as_deref());
        if commit(state, expected, &game, to_save).await? {
            if game.ply() > before_ply {
                super::metrics::METRICS.moves_applied.inc();
            }
            return Ok(Written::Applied(Box::new(game), answer));
        }
        super::metrics::METRICS.cas_conflicts.inc();
    }
    Err(contention())
}
