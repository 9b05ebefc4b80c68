//! Loading, creating and changing games: the compare-and-set loop every write goes through.
//!
//! A change is computed on the newest game this replica knows (its cache, else one read) and
//! written with the version it was computed from; if someone wrote first, the store answers
//! with the current game in the same reply and the change is recomputed on it. So a move on a
//! cached game costs one round trip, and never a replay. A refusal computed on a cached game is
//! confirmed on a fresh read before it is answered. A clock that ran out is settled (the game
//! ends on time) by whichever request notices first — reads included — and written like any
//! change; the sweeper notices too when nobody asks.
//!
//! Idempotency: a request's `Idempotency-Key` is scoped to (game, seat, operation), the seat
//! being the one its token holds (checked before anything is replayed). The answer is saved in
//! the same atomic step as the change, as a fingerprint of the request and the version it
//! made, and rebuilt exactly from the game when replayed: the same key with the same request
//! gets the first answer (also when both copies race, on any replica, and after the first
//! replica died), the same key with another request gets `422 idempotency_key_reused`.

use std::sync::Arc;

use actix_web::web;
use rand::RngCore;
use sha2::{Digest, Sha256};

use super::cache::Loaded;
use super::domain::{Change, Event, GameId, IdempotencyKey, SeatToken, StoredGame};
use super::error::{ApiError, ErrorCode};
use super::metrics::METRICS;
use super::state::AppState;
use super::store::{CreateOutcome, Creation, ReadOutcome, SavedAnswer, Write, WriteOutcome};

/// How many times a write is recomputed after losing a race before giving up with a 503.
const MAX_ATTEMPTS: usize = 32;

/// A request's `Idempotency-Key` and what it must match to be answered by a saved answer.
pub struct Idempotent<'a> {
    pub key: &'a IdempotencyKey,
    pub token: &'a SeatToken,
    /// `move` or `resign`.
    pub operation: &'static str,
    /// The request as the client sent it (its parsed body, serialized).
    pub request: String,
}

fn digest8(parts: &[&[u8]]) -> [u8; 8] {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part);
        hash.update(b"\n");
    }
    hash.finalize()[..8].try_into().expect("8 bytes")
}

impl Idempotent<'_> {
    fn fingerprint(&self) -> [u8; 8] {
        digest8(&[self.operation.as_bytes(), self.request.as_bytes()])
    }

    /// The game's slot for this key: a digest of the seat the token holds, the operation and
    /// the key.
    fn slot(&self, game: &StoredGame) -> Result<[u8; 8], ApiError> {
        let seat = game.seat_for(self.token).ok_or_else(wrong_seat)?;
        Ok(digest8(&[
            seat.as_str().as_bytes(),
            self.operation.as_bytes(),
            self.key.as_str().as_bytes(),
        ]))
    }
}

pub fn wrong_seat() -> ApiError {
    ApiError::new(
        ErrorCode::WrongSeat,
        "this token holds no seat in this game",
    )
}

/// The answer to a write.
pub enum Written {
    /// The change was applied: the game after it.
    Applied(Arc<Loaded>),
    /// A retried request whose change is still the game's latest: the game as it stands, which
    /// is what the first answer showed.
    Replayed(Box<StoredGame>),
    /// A retried request whose change other changes followed: the first answer must be rebuilt
    /// by replaying the game up to it, work that grows with the game's length, so the route
    /// charges the caller for it (as for any look back) before [`LookBack::game`] does it.
    LookBack(Box<LookBack>),
}

/// A game's later state and the event of the earlier version a retried request made.
pub struct LookBack {
    current: StoredGame,
    version: u64,
    event: Event,
}

impl LookBack {
    /// Plies replayed to rebuild the earlier version.
    pub fn plies(&self) -> u64 {
        self.current.ply_as_of(&self.event)
    }

    /// The game as the first answer showed it.
    pub fn game(&self) -> Result<StoredGame, ApiError> {
        self.current.as_of(self.version, &self.event)
    }
}

fn contention() -> ApiError {
    ApiError {
        retry_after: Some(1),
        ..ApiError::new(
            ErrorCode::StoreUnavailable,
            "too many concurrent writes to this game; try again",
        )
    }
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

/// The game as the store has it now (and into the cache).
async fn fresh(
    state: &AppState,
    id: GameId,
    known: Option<&Arc<Loaded>>,
) -> Result<Arc<Loaded>, ApiError> {
    let outcome = state
        .store
        .read(&id.to_string(), known.map(|l| l.game.known()))
        .await?;
    match outcome {
        ReadOutcome::Missing => {
            state.cache.forget(id);
            Err(ApiError::game_not_found(&id.to_string()))
        }
        ReadOutcome::Unchanged => Ok(known.expect("unchanged from a known version").clone()),
        ReadOutcome::Current(newer) => adopt(state, id, known.map(|l| &l.game), &newer).await,
    }
}

/// Loads a game for reading (one round trip), settling its clock first if time ran out.
/// Returns it with the time it was read at.
pub async fn read(state: &web::Data<AppState>, id: GameId) -> Result<(Arc<Loaded>, u64), ApiError> {
    let mut current = fresh(state, id, state.cache.get(id).as_ref()).await?;
    for _ in 0..MAX_ATTEMPTS {
        let now = state.store.clock().now_ms();
        if !current.game.flag_fell(now) {
            return Ok((current, now));
        }
        let mut game = current.game.clone();
        let Some(flag) = game.settle_clock(now) else {
            return Ok((current, now));
        };
        match submit(state, &current, game, &flag, None, now).await? {
            Submitted::Applied(loaded) => return Ok((loaded, now)),
            Submitted::Refused(WriteOutcome::Conflict(Some(newer))) => {
                current = decoded(state, id, &current, &newer).await?;
            }
            Submitted::Refused(WriteOutcome::Conflict(None)) => {
                return Err(ApiError::game_not_found(&id.to_string()));
            }
            Submitted::Refused(_) => {}
        }
    }
    Err(contention())
}

/// The game a refused write's answer holds (what is newer than `written_on`), into the cache.
async fn decoded(
    state: &AppState,
    id: GameId,
    written_on: &Loaded,
    newer: &super::store::Newer,
) -> Result<Arc<Loaded>, ApiError> {
    METRICS.cas_conflicts.inc();
    adopt(state, id, Some(&written_on.game), newer).await
}

/// The game the store answered with (what is newer than `held`), into the cache; when `held`
/// is not the store's version of its number, the whole game, read again.
async fn adopt(
    state: &AppState,
    id: GameId,
    held: Option<&StoredGame>,
    newer: &super::store::Newer,
) -> Result<Arc<Loaded>, ApiError> {
    match StoredGame::from_newer(id, held, newer)? {
        Some(game) => {
            let loaded = Loaded::new(game);
            state.cache.put(&loaded);
            Ok(loaded)
        }
        None => Box::pin(fresh(state, id, None)).await,
    }
}

enum Submitted {
    Applied(Arc<Loaded>),
    Refused(WriteOutcome),
}

/// Writes `game` (changed by `made` from `current`) and, when applied, caches it and starts
/// its engine seat if one is to move.
async fn submit(
    state: &web::Data<AppState>,
    current: &Loaded,
    game: StoredGame,
    made: &Change,
    answer: Option<SavedAnswer<'_>>,
    now: u64,
) -> Result<Submitted, ApiError> {
    let id = game.id();
    let live = game.live_json();
    let event = game.encode(&made.event);
    let outcome = state
        .store
        .write(
            &id.to_string(),
            Write {
                expected: current.game.known(),
                version: game.version(),
                live: &live,
                mv: made.mv.as_deref(),
                history_key: made.history_key,
                event: &event,
                expire_after: lifetime(state, &game),
                answer,
                write_id: &write_id(),
                due: game.due(),
                now,
            },
        )
        .await?;
    if outcome != WriteOutcome::Applied {
        if outcome == WriteOutcome::Conflict(None) {
            state.cache.forget(id);
        }
        return Ok(Submitted::Refused(outcome));
    }
    if made.mv.is_some() {
        METRICS.moves_applied.inc();
    }
    let loaded = Loaded::new(game);
    state.cache.put(&loaded);
    super::engine_seats::nudge(state, &loaded.game);
    Ok(Submitted::Applied(loaded))
}

/// A fresh random write id (16 hex digits).
fn write_id() -> String {
    let mut bytes = [0u8; 8];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Stores a new game; `make` builds it at the given time (called again if the store's clock
/// disagrees with this replica's).
pub async fn create(
    state: &web::Data<AppState>,
    make: impl Fn(u64) -> StoredGame,
) -> Result<StoredGame, ApiError> {
    for _ in 0..MAX_ATTEMPTS {
        let now = state.store.clock().now_ms();
        let game = make(now);
        let snapshot = game.snapshot();
        let event = game.encode(&Event::Created { at: now });
        let outcome = state
            .store
            .create(
                &game.id().to_string(),
                Creation {
                    snapshot: &snapshot,
                    event: &event,
                    expire_after: lifetime(state, &game),
                    due: game.due(),
                    now,
                },
            )
            .await?;
        if outcome == CreateOutcome::Created {
            let loaded = Loaded::new(game.clone());
            state.cache.put(&loaded);
            super::engine_seats::nudge(state, &game);
            return Ok(game);
        }
    }
    Err(contention())
}

/// Applies `change` to the game and saves it atomically (see the module's docs).
pub async fn write(
    state: &web::Data<AppState>,
    id: GameId,
    idempotent: Option<Idempotent<'_>>,
    change: impl Fn(&mut StoredGame, u64) -> Result<Change, ApiError>,
) -> Result<Written, ApiError> {
    let fingerprint = idempotent.as_ref().map(Idempotent::fingerprint);
    let (mut current, mut confirmed) = match state.cache.get(id) {
        Some(cached) => (cached, false),
        None => (fresh(state, id, None).await?, true),
    };
    for _ in 0..MAX_ATTEMPTS {
        let now = state.store.clock().now_ms();
        let mut game = current.game.clone();
        let slot = match &idempotent {
            Some(idempotent) => Some(idempotent.slot(&game)?),
            None => None,
        };
        // A clock that ran out is settled first; the request is then judged on the result.
        let (made, requested) = match game.settle_clock(now) {
            Some(flag) => (flag, false),
            None => match change(&mut game, now) {
                Ok(made) => (made, true),
                // Refused on a cached game: make sure the refusal still holds.
                Err(_) if !confirmed => {
                    let cached = current.game.version();
                    current = fresh(state, id, Some(&current)).await?;
                    if current.game.version() != cached {
                        METRICS.stale_cache_refreshes.inc();
                    }
                    confirmed = true;
                    continue;
                }
                Err(refusal) => {
                    if let (Some(slot), Some(fingerprint)) = (slot, fingerprint)
                        && let Some(saved) =
                            state.store.saved_answer(&id.to_string(), &slot).await?
                    {
                        return replay(state, id, &saved, fingerprint).await;
                    }
                    return Err(refusal);
                }
            },
        };
        let value: Vec<u8> = fingerprint
            .map(|f| [&f[..], game.version().to_string().as_bytes()].concat())
            .unwrap_or_default();
        let answer = match (&slot, requested) {
            (Some(slot), true) => Some(SavedAnswer {
                slot,
                value: &value,
            }),
            _ => None,
        };
        match submit(state, &current, game, &made, answer, now).await? {
            Submitted::Applied(loaded) if requested => return Ok(Written::Applied(loaded)),
            Submitted::Applied(loaded) => {
                // The flag fell first; now see what the request makes of that.
                current = loaded;
                confirmed = true;
            }
            Submitted::Refused(WriteOutcome::Saved(saved)) => {
                let fingerprint = fingerprint.ok_or_else(contention)?;
                return replay(state, id, &saved, fingerprint).await;
            }
            Submitted::Refused(WriteOutcome::Conflict(None)) => {
                return Err(ApiError::game_not_found(&id.to_string()));
            }
            Submitted::Refused(WriteOutcome::Conflict(Some(newer))) => {
                current = decoded(state, id, &current, &newer).await?;
                confirmed = true;
            }
            // The store's clock disagreed: its reply taught this replica the store's time.
            Submitted::Refused(_) => {}
        }
    }
    Err(contention())
}

/// The first answer of a retried request, from its saved value (the request's 8-byte
/// fingerprint, then the version it made, in decimal), or
/// `422` when the key came with another request.
async fn replay(
    state: &web::Data<AppState>,
    id: GameId,
    saved: &[u8],
    fingerprint: [u8; 8],
) -> Result<Written, ApiError> {
    let corrupt = || ApiError::new(ErrorCode::Internal, "a saved answer could not be read");
    let (saved_fingerprint, version) = saved.split_at_checked(8).ok_or_else(corrupt)?;
    let version: u64 = std::str::from_utf8(version)
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or_else(corrupt)?;
    if saved_fingerprint != fingerprint {
        return Err(ApiError::new(
            ErrorCode::IdempotencyKeyReused,
            "this Idempotency-Key was already used by this seat for a different request; \
             send a new key with a new request",
        ));
    }
    let mut game = fresh(state, id, state.cache.get(id).as_ref()).await?;
    if game.game.version() < version {
        // This replica's cache lags behind the write that saved the answer.
        game = fresh(state, id, None).await?;
    }
    if game.game.version() == version {
        return Ok(Written::Replayed(Box::new(game.game.clone())));
    }
    let events = state
        .store
        .events_after(&id.to_string(), version - 1, 1)
        .await?;
    let event = events
        .first()
        .filter(|(v, _)| *v == version)
        .and_then(|(v, line)| game.game.decode_event(*v, line))
        .ok_or_else(corrupt)?;
    Ok(Written::LookBack(Box::new(LookBack {
        current: game.game.clone(),
        version,
        event,
    })))
}
