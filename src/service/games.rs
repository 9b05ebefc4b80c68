//! Loading and changing games in the store: the compare-and-set loop every write goes through.
//!
//! A change is computed on a freshly loaded game and written only if nobody wrote in between;
//! otherwise it is recomputed on the newer game. A clock that ran out is settled (the game ends
//! on time) by whichever request notices first — reads included — and written like any change.

use super::domain::{GameId, IdempotencyKey, StoredGame};
use super::error::{ApiError, ErrorCode};
use super::state::{AppState, now_ms};
use super::store::WriteExtras;

/// How many times a write is recomputed after losing a race before giving up with a 503.
const MAX_ATTEMPTS: usize = 32;

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

/// Saves `game` (already at its next version) if the stored version is still `expected`.
async fn commit(
    state: &AppState,
    expected: u64,
    game: &StoredGame,
    answer: Option<(&IdempotencyKey, &str)>,
) -> Result<bool, ApiError> {
    let extras = WriteExtras {
        expire_after: game.is_finished().then_some(state.settings.finished_ttl),
        idempotent_answer: answer.map(|(k, a)| (k.as_str(), a)),
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
pub async fn write<T>(
    state: &AppState,
    id: GameId,
    key: Option<&IdempotencyKey>,
    change: impl Fn(&mut StoredGame, u64) -> Result<T, ApiError>,
    render: impl Fn(&StoredGame, &T, u64) -> String,
) -> Result<Written, ApiError> {
    for _ in 0..MAX_ATTEMPTS {
        if let Some(key) = key
            && let Some(answer) = state
                .store
                .idempotent_answer(&id.to_string(), key.as_str())
                .await?
        {
            return Ok(Written::Replayed(answer));
        }
        let Some((mut game, now)) = fetch_settled(state, id).await? else {
            continue;
        };
        let expected = game.version();
        let before_ply = game.ply();
        let outcome = change(&mut game, now)?;
        game.bump_version();
        let answer = render(&game, &outcome, now);
        if commit(state, expected, &game, key.map(|k| (k, answer.as_str()))).await? {
            if game.ply() > before_ply {
                super::metrics::METRICS.moves_applied.inc();
            }
            return Ok(Written::Applied(Box::new(game), answer));
        }
    }
    Err(contention())
}
