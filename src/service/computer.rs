//! Computer opponents: the service plays the engine's seats itself.
//!
//! Whenever a request sees an engine to move, it nudges: a background task takes the game's
//! lease in the store (so two replicas never think for one seat at once), searches, and plays
//! the move through the same compare-and-set as any other move, with the engine's clock
//! running like anyone's. A replica that dies while thinking leaves a lease that lapses by
//! itself, and the next request that touches the game starts the engine again.

use std::time::Duration;

use actix_web::web;

use super::domain::{GameId, StoredGame};
use super::error::{ApiError, ErrorCode};
use super::games;
use super::state::{AppState, now_ms};
use crate::engine::any::computer_move;
use crate::engine::levels::Level;
use crate::wall_clock::WallClock;

/// How long past its think time a lease is kept before it lapses.
const LEASE_MARGIN: Duration = Duration::from_secs(3);

/// Starts the engine in the background if it is to move in `game`.
pub fn nudge(state: &web::Data<AppState>, game: &StoredGame) {
    if game.computer_to_move().is_none() {
        return;
    }
    let state = state.clone();
    let id = game.id();
    tokio::spawn(async move {
        if let Err(e) = play(&state, id).await {
            tracing::warn!(game = %id, error = %e, "computer move failed");
        }
    });
}

/// Plays the engine's moves for as long as an engine is to move (both seats may be engines).
async fn play(state: &AppState, id: GameId) -> Result<(), ApiError> {
    let owner = format!("{}/{}", state.replica, uuid::Uuid::new_v4());
    loop {
        let (game, now) = games::read(state, id).await?;
        let Some((_, level)) = game.computer_to_move() else {
            return Ok(());
        };
        let mut level = Level::get(level).expect("stored levels are valid");
        if let Some(left) = game.time_left_to_move(now) {
            // Never spend more than a tenth of what is left.
            level.movetime_ms = level.movetime_ms.min(left / 10).max(1);
        }
        let lease = Duration::from_millis(level.movetime_ms) + LEASE_MARGIN;
        let key = id.to_string();
        if !state.store.try_lease(&key, &owner, lease).await? {
            return Ok(());
        }
        let result = think_and_play(state, &game, level).await;
        state.store.release_lease(&key, &owner).await?;
        result?;
    }
}

async fn think_and_play(state: &AppState, game: &StoredGame, level: Level) -> Result<(), ApiError> {
    let _thread = state
        .computer_threads
        .acquire()
        .await
        .expect("the semaphore is never closed");
    let record = game.rules().clone();
    let ply = game.ply();
    let seed = u64::from_le_bytes(game.id().to_string().as_bytes()[..8].try_into().expect("8"))
        ^ ply.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mv = tokio::task::spawn_blocking(move || {
        computer_move(&record, level, seed, &WallClock::start())
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("engine failed: {e}")))?;
    let Some(mv) = mv else {
        return Ok(());
    };
    let written = games::write(
        state,
        game.id(),
        None,
        |g, now| {
            let Some((seat, _)) = g.computer_to_move() else {
                return Err(ApiError::new(
                    ErrorCode::NotYourTurn,
                    "no engine is to move",
                ));
            };
            if g.ply() != ply {
                return Err(ApiError::new(ErrorCode::StaleVersion, "the game moved on"));
            }
            g.play(seat, &mv, now)
        },
        |_, _, _| String::new(),
    )
    .await;
    match written {
        Ok(_) => Ok(()),
        // Someone else already moved for it, or time ran out: nothing left to do.
        Err(e)
            if matches!(
                e.code,
                ErrorCode::StaleVersion | ErrorCode::NotYourTurn | ErrorCode::GameOver
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
    .map(|()| {
        tracing::debug!(game = %game.id(), at = now_ms(), "computer moved");
    })
}
