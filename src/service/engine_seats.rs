//! Engine seats: the service plays the seats a game gave to its engine, by itself.
//!
//! A game whose engine is to move is due at once in the store's due index. The replica that
//! made it so starts thinking right away if it has a thinking thread free ([`nudge`]);
//! otherwise, or if that replica dies, some replica's sweeper finds it due within a moment.
//! Thinking starts only once a thread is held: then the game's lease is claimed in the store
//! (which also moves its due time past the lease, so nobody else looks at it meanwhile), the
//! engine searches on a blocking thread, and the move is written through the same
//! compare-and-set as any other. A replica that dies while thinking leaves a lease that
//! lapses by itself, and the game is due again. A search that panics is logged and its seat is
//! retried when the lease lapses, never dropped.
//!
//! Capacity: `--engine-threads` searches at once per replica, of which games whose two seats
//! are both engines may hold at most `--engine-only-threads`, so they never starve games with
//! a person waiting.
//!
//! Cost: a game's creator pays for its engine seats' thinking out of its analysis quota, as
//! for an analysis (admitted with 1 ms left, charged the time the search took), so that one
//! caller cannot take every thinking thread by creating games. A seat whose payer has no
//! time left gives its lease back and is looked at again when the payer has some (or when the
//! engine's flag falls, if sooner).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::web;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::domain::{GameId, StoredGame};
use super::error::{ApiError, ErrorCode};
use super::games;
use super::metrics::METRICS;
use super::quota;
use super::state::AppState;
use crate::api::Seat;
use crate::engine::any::AnyEngine;
use crate::engine::any::{SeatTurn, engine_seat_move, level_of};
use crate::engine::search::TT_BITS;
use crate::rules::{AnyState, GameKind};
use crate::wall_clock::WallClock;

/// How far past `now + lease` the store may have put a claimed game's due time (its clock
/// and this replica's differ by up to the write script's tolerance).
const CLAIM_SLACK_MS: u64 = 1_000;

/// How long past its think time a lease is kept before it lapses.
pub const LEASE_MARGIN: Duration = Duration::from_secs(3);

/// How an engine seat chooses its move in a state, thinking with the seat's engine: the
/// engine itself, in service (tests may put in a thinker that fails on purpose).
pub type Thinker = Arc<dyn Fn(&mut AnyEngine, &AnyState, SeatTurn) -> Option<String> + Send + Sync>;

/// The engine as an engine seat's thinker, on the wall clock.
pub fn engine_thinker() -> Thinker {
    Arc::new(|engine, state, turn| engine_seat_move(engine, state, turn, &WallClock::start()))
}

/// How many seats' engines a replica keeps between their moves.
const KEPT_ENGINES: usize = 8;

/// This replica's thinking threads, who thinks, and the engines of the seats it played last
/// (so a seat's next move starts from what its last one learned, not from an empty table).
pub struct EngineSeats {
    threads: Arc<Semaphore>,
    engines_only: Arc<Semaphore>,
    thinker: Thinker,
    kept: Mutex<VecDeque<((GameId, Seat), AnyEngine)>>,
}

/// The threads one search holds.
pub struct Permits {
    _thread: OwnedSemaphorePermit,
    _engines_only: Option<OwnedSemaphorePermit>,
}

impl EngineSeats {
    pub fn new(threads: usize, engines_only: usize, thinker: Thinker) -> EngineSeats {
        EngineSeats {
            threads: Arc::new(Semaphore::new(threads.max(1))),
            engines_only: Arc::new(Semaphore::new(engines_only.max(1))),
            thinker,
            kept: Mutex::new(VecDeque::new()),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, VecDeque<((GameId, Seat), AnyEngine)>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The engine `seat` of game `id` thought with last, or a fresh one.
    fn take_engine(&self, id: GameId, seat: Seat, kind: GameKind) -> AnyEngine {
        let mut kept = self.kept();
        match kept.iter().position(|(key, _)| *key == (id, seat)) {
            Some(i) => kept.remove(i).expect("found").1,
            None => AnyEngine::new(kind, TT_BITS),
        }
    }

    /// Keeps `engine` for `seat`'s next move, forgetting the least recently used.
    fn keep_engine(&self, id: GameId, seat: Seat, engine: AnyEngine) {
        let mut kept = self.kept();
        kept.push_back(((id, seat), engine));
        if kept.len() > KEPT_ENGINES {
            kept.pop_front();
        }
    }

    /// Threads for a search of `game`, if free now.
    fn try_permits(&self, game: &StoredGame) -> Option<Permits> {
        let engines_only = if game.engines_only() {
            Some(self.engines_only.clone().try_acquire_owned().ok()?)
        } else {
            None
        };
        Some(Permits {
            _thread: self.threads.clone().try_acquire_owned().ok()?,
            _engines_only: engines_only,
        })
    }
}

/// The search of `game`'s engine seat, if an engine is to move and a thread is free.
fn start(
    state: &web::Data<AppState>,
    game: &StoredGame,
) -> Option<impl std::future::Future<Output = ()> + Send + 'static> {
    game.engine_to_move()?;
    let permits = state.engine_seats.try_permits(game)?;
    let state = state.clone();
    let id = game.id();
    Some(async move {
        if let Err(e) = think_and_play(&state, id, permits).await {
            tracing::warn!(game = %id, error = %e, "engine seat could not move");
        }
    })
}

/// Starts `game`'s engine seat in the background if it is to move and a thread is free;
/// whether it did.
pub fn nudge(state: &web::Data<AppState>, game: &StoredGame) -> bool {
    match start(state, game) {
        Some(search) => {
            state.spawn(search);
            true
        }
        None => false,
    }
}

async fn think_and_play(
    state: &web::Data<AppState>,
    id: GameId,
    permits: Permits,
) -> Result<(), ApiError> {
    let (loaded, now) = games::read(state, id).await?;
    let game = &loaded.game;
    let Some((seat, level)) = game.engine_to_move() else {
        return Ok(());
    };
    let mut level = level_of(game.kind(), level).expect("stored levels are valid");
    if let Some(left) = game.time_left_to_move(now) {
        // Never spend more than a tenth of what is left.
        level.movetime_ms = level.movetime_ms.min(left / 10).max(1);
    }
    let lease = Duration::from_millis(level.movetime_ms) + LEASE_MARGIN;
    let key = id.to_string();
    let owner = format!("{}/{}", state.replica, uuid::Uuid::new_v4());
    if !state.store.claim(&key, &owner, lease).await? {
        return Ok(());
    }
    let payer = match game.payer() {
        Some(id) => state.quotas.caller_by_id(&state.store, id).await?,
        None => None,
    };
    if let Some(payer) = &payer
        && let Some(wait) = quota::analysis_wait(state, payer).await
    {
        // Looked at again when the payer has time, never after the engine's flag falls.
        let wait = (wait.as_millis() as u64).max(1);
        let until = now
            + game
                .time_left_to_move(now)
                .map_or(wait, |left| wait.min(left));
        tracing::debug!(game = %id, payer = %payer.id, wait, "engine seat waits for its payer's analysis time");
        state.store.release(&key, &owner).await?;
        let claimed_until = now + lease.as_millis() as u64 + CLAIM_SLACK_MS;
        state.store.postpone(&key, claimed_until, until).await?;
        return Ok(());
    }
    let started = std::time::Instant::now();
    let rules = game.rules().clone();
    let ply = game.ply();
    let seed = u64::from_le_bytes(key.as_bytes()[..8].try_into().expect("8 bytes"))
        ^ ply.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let turn = SeatTurn {
        level,
        seed,
        plies_to_limit: Some(game.plies_to_limit(state.settings.max_plies)),
    };
    let thinker = state.engine_seats.thinker.clone();
    let mut engine = state.engine_seats.take_engine(id, seat, game.kind());
    let search = super::search_priority::spawn(state.settings.search_nice, move || {
        let mv = thinker(&mut engine, &rules, turn);
        (engine, mv)
    })
    .await
    .map(|(engine, mv)| {
        state.engine_seats.keep_engine(id, seat, engine);
        mv
    });
    // The threads are free for the next search (maybe this game's other engine seat).
    drop(permits);
    if let Some(payer) = &payer {
        let ms = started.elapsed().as_millis() as u64;
        if let Err(e) = state
            .quotas
            .charge(&state.store, payer, quota::Class::Analysis, ms.max(1))
            .await
        {
            tracing::debug!(game = %id, error = %e, "engine seat's thinking not charged");
        }
    }
    let result = match search {
        Err(e) => {
            METRICS.engine_failures.inc();
            tracing::error!(game = %id, error = %e, "engine search failed; the seat is retried when its lease lapses");
            Ok(())
        }
        Ok(None) => Ok(()),
        Ok(Some(mv)) => play(state, id, ply, &mv).await,
    };
    if result.is_ok() {
        state.store.release(&key, &owner).await?;
    }
    result
}

/// Plays the engine's `mv`, thought at `ply`, unless the game moved on meanwhile.
async fn play(state: &web::Data<AppState>, id: GameId, ply: u64, mv: &str) -> Result<(), ApiError> {
    let max_plies = state.settings.max_plies;
    let written = games::write(state, id, None, |g, now| {
        let Some((seat, _)) = g.engine_to_move() else {
            return Err(ApiError::new(
                ErrorCode::NotYourTurn,
                "no engine is to move",
            ));
        };
        if g.ply() != ply {
            return Err(ApiError::new(ErrorCode::StaleVersion, "the game moved on"));
        }
        g.play(seat, mv, now, max_plies)
    })
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variants;
    use crate::service::domain::SeatToken;

    fn game(engine_seats: [Option<u8>; 2]) -> StoredGame {
        let tokens = [SeatToken::generate(), SeatToken::generate()];
        let state = AnyState::new(GameKind::Pyrga, Variants::NONE, None).unwrap();
        StoredGame::create(GameId::new_random(), state, None, engine_seats, &tokens, 0)
    }

    #[test]
    fn games_of_engines_only_cannot_take_every_thread() {
        let seats = EngineSeats::new(3, 1, engine_thinker());
        let engines_only = game([Some(1), Some(1)]);
        let with_a_person = game([None, Some(1)]);
        let first = seats
            .try_permits(&engines_only)
            .expect("one engine-only search");
        assert!(
            seats.try_permits(&engines_only).is_none(),
            "a second would exceed --engine-only-threads"
        );
        let person = seats
            .try_permits(&with_a_person)
            .expect("a game with a person");
        let another = seats.try_permits(&with_a_person).expect("and another");
        assert!(
            seats.try_permits(&with_a_person).is_none(),
            "all three threads busy"
        );
        drop((first, person, another));
        assert!(
            seats.try_permits(&engines_only).is_some(),
            "threads come back"
        );
    }
}
