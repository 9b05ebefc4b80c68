//! The sweeper: every replica looks through the store's due index a few times a second, so
//! that games progress with no client asking — a clock that falls ends its game on time (and
//! the game then expires like any finished game), and an engine seat whose replica died, or
//! that found no free thread, is played.
//!
//! Every replica sweeps; the store's lease keeps two of them from thinking for one seat, and
//! every write is a compare-and-set, so two sweepers settling one flag write it once. A sweep
//! takes the earliest due games first, and a seat that must wait for a thread goes to the back
//! of the line, so every due game is reached however many wait.

use std::time::Duration;

use actix_web::web;
use rand::Rng;

use super::domain::{GameId, StoredGame};
use super::engine_seats;
use super::error::ErrorCode;
use super::games;
use super::state::AppState;

/// How often a replica sweeps (with some jitter, so replicas spread out).
const EVERY: Duration = Duration::from_millis(400);

/// Most due games one sweep looks at.
const BATCH: usize = 64;

/// How long a game of engines alone whose seat found no free thread waits in the index
/// before it is looked at again (plus up to half as much again at random); a seat with a
/// person waiting goes just behind the games due now. Without this, more waiting seats than
/// a sweep's [`BATCH`] stayed at the index's head, and no sweep ever reached a falling flag
/// or another seat behind them.
const NO_THREAD_WAIT: Duration = Duration::from_secs(2);

/// How long a due game that cannot be read or settled (corrupt, or a store without room for
/// its end; not one the store is unavailable for, which the next sweep may well read) waits
/// in the index before it is looked at again. Without this, four such games at a shard's
/// head were all each sweep took of that shard (the index is read earliest first, a few per
/// shard), and no flag behind them ever fell.
const UNREADABLE_WAIT: Duration = Duration::from_secs(60);

/// When a seat of `game` that found no free thread at `now` is looked at again: never after
/// the engine's flag falls.
fn retry_at(game: &StoredGame, now: u64) -> u64 {
    let wait = if game.engines_only() {
        let wait = NO_THREAD_WAIT.as_millis() as u64;
        wait + rand::rng().random_range(0..=wait / 2)
    } else {
        1
    };
    let wait = game
        .time_left_to_move(now)
        .map_or(wait, |left| wait.min(left))
        .max(1);
    now + wait
}

/// Sweeps until dropped.
pub async fn run(state: web::Data<AppState>) {
    loop {
        let jitter = rand::rng().random_range(0..EVERY.as_millis() as u64 / 2);
        tokio::time::sleep(EVERY + Duration::from_millis(jitter)).await;
        let now = state.store.clock().now_ms();
        let due = match state.store.due(now, BATCH).await {
            Ok(due) => due,
            Err(e) => {
                tracing::debug!(error = %e, "sweep: the due index is unavailable");
                continue;
            }
        };
        for id in due {
            visit(&state, &id).await;
        }
    }
}

/// Does what a due game needs.
async fn visit(state: &web::Data<AppState>, id: &str) {
    let Some(game_id) = GameId::parse(id) else {
        let _ = state.store.fix_due(id).await;
        return;
    };
    // Reading settles a fallen flag (and writes it, which updates the index).
    match games::read(state, game_id).await {
        Ok((loaded, now)) => {
            let game = &loaded.game;
            if game.engine_to_move().is_some() {
                if !engine_seats::nudge(state, game)
                    && let Err(e) = state.store.postpone(id, now, retry_at(game, now)).await
                {
                    tracing::debug!(game = id, error = %e, "sweep: cannot postpone");
                }
            } else if game.due().is_none_or(|due| due > now) {
                // The index entry is stale (say, its write's reply was lost).
                let _ = state.store.fix_due(id).await;
            }
        }
        Err(e) if e.code == ErrorCode::GameNotFound => {
            let _ = state.store.fix_due(id).await;
        }
        Err(e) if e.code == ErrorCode::StoreUnavailable => {
            tracing::debug!(game = id, error = %e, "sweep: game unavailable");
        }
        Err(e) => {
            tracing::debug!(game = id, error = %e, "sweep: game unreadable, looked at later");
            let now = state.store.clock().now_ms();
            let later = now + UNREADABLE_WAIT.as_millis() as u64;
            if let Err(e) = state.store.postpone(id, now, later).await {
                tracing::debug!(game = id, error = %e, "sweep: cannot postpone");
            }
        }
    }
}
