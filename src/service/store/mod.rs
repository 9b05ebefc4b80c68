//! Where games live between requests: Redis in production, or an embedded in-memory store.
//!
//! The store knows nothing about the rules. Per game it keeps the header, the live part and the
//! repetition history under a version number, the game's event log (whose move events are the
//! move list), the answers to idempotent requests, and an entry in a due index. A write
//! replaces the live part only if the version is still the one the writer computed from (a
//! compare-and-set), appending the event (and the history key), saving the idempotent answer,
//! updating the due index and announcing the change, all in one atomic step (one Lua script in
//! Redis, one lock in memory). That is how replicas that share a store never lose or duplicate
//! a move, and how a move costs one round trip: a conflicting write gets the current game back
//! in the same reply. Every append is O(1) and a reader that holds an earlier version gets only
//! what is newer ([`Newer`]), so neither grows with the game's length.
//!
//! Both stores give every key a lifetime, and both take "now" from one clock (see [`clock`]).

mod changes;
pub mod clock;
mod listener;
mod memory;
mod redis;

use std::time::Duration;

pub use changes::Changes;
pub use clock::StoreClock;
pub use memory::MemoryStore;
pub use redis::RedisStore;

pub use crate::service::domain::{Known, Logged, Newer, Snapshot};

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The store did not answer (Redis down, timed out); worth retrying later.
    #[error("{0}")]
    Unavailable(String),
    /// The store answered with something that is not a record of ours.
    #[error("{0}")]
    Corrupt(String),
    /// The store holds all it may (the embedded store its maximum of games or of bytes, Redis
    /// its `maxmemory`) and wrote nothing: no new writes until some games expire.
    #[error("{0}")]
    Full(String),
}

/// The answer of an idempotent request, kept with its game: an 8-byte slot (a digest of the
/// seat, the operation and the key) and the value to compare a retry with.
#[derive(Debug, Clone, Copy)]
pub struct SavedAnswer<'a> {
    pub slot: &'a [u8],
    pub value: &'a [u8],
}

/// One change to write.
#[derive(Debug, Clone)]
pub struct Write<'a> {
    /// The version the change was computed from (and its history's length, so that a
    /// conflict answers with only what is newer).
    pub expected: Known,
    /// The version it makes.
    pub version: u64,
    /// The new live part.
    pub live: &'a str,
    /// A move to append to the move list.
    pub mv: Option<&'a str>,
    /// A repetition key to append to the history.
    pub history_key: Option<u64>,
    /// The change's event, appended to the log under `version`.
    pub event: &'a str,
    /// Let the game (and its log and answers) expire this long after the write (in Redis, up
    /// to [`renewal_slack`] later).
    pub expire_after: Duration,
    /// Save this answer, unless its slot holds one already (then that one is the answer).
    pub answer: Option<SavedAnswer<'a>>,
    /// Unique per request: a retry of a write that was applied answers as applied.
    pub write_id: &'a str,
    /// When the game next needs the service by itself (the due index), if ever.
    pub due: Option<u64>,
    /// The time the change was computed at, by the writer's idea of the store's clock.
    pub now: u64,
}

/// What became of a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Written (or written before, by this very request).
    Applied,
    /// The slot of the answer held one already: this saved value.
    Saved(Vec<u8>),
    /// Someone wrote first: the game as it is now, from the writer's version (`None`: it is
    /// gone).
    Conflict(Option<Newer>),
    /// The write's time was too far from the store's: recompute at the store's time.
    Skewed,
}

/// What a read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutcome {
    Missing,
    /// Still at the version the reader knew.
    Unchanged,
    Current(Newer),
}

/// A new game to store.
#[derive(Debug, Clone)]
pub struct Creation<'a> {
    pub snapshot: &'a Snapshot,
    pub event: &'a str,
    pub expire_after: Duration,
    pub due: Option<u64>,
    pub now: u64,
}

/// What became of a creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateOutcome {
    Created,
    /// The creation's time was too far from the store's.
    Skewed,
}

/// How long the due index lives after its last update: longer than any game in it (a game
/// lives at most its lifetime and the [`renewal_slack`] after a write that renews the index).
pub fn index_lifetime(idle: Duration, finished: Duration) -> Duration {
    idle.max(finished) + Duration::from_secs(3600)
}

/// How much longer than asked Redis may keep a game after a write. Renewing a game's keys
/// takes one `PEXPIRE` per key (about a microsecond of Redis each, four per move), so a write
/// renews them only when they would otherwise die before the asked lifetime or outlive it by
/// more than this: a game then lives from its lifetime to its lifetime and this after its last
/// change, never less, and an active game's keys are renewed once per slack, not per move.
pub fn renewal_slack(lifetime: Duration) -> Duration {
    (lifetime / 32).min(Duration::from_secs(600))
}

/// The configured store.
pub enum Store {
    Memory(Box<MemoryStore>),
    Redis(Box<RedisStore>),
}

impl Store {
    /// The time replicas agree on (the store's).
    pub fn clock(&self) -> &StoreClock {
        match self {
            Store::Memory(s) => s.clock(),
            Store::Redis(s) => s.clock(),
        }
    }

    /// A receiver that changes whenever game `id` gets a new version, on any replica: a read of
    /// the game's log made after this returns misses nothing. (While this replica cannot hear
    /// the others, the receiver changes once it can again, so that the watcher reads the log.)
    pub async fn watch(&self, id: &str) -> tokio::sync::watch::Receiver<u64> {
        match self {
            Store::Memory(s) => s.changes().subscribe(id),
            Store::Redis(s) => s.watch(id).await,
        }
    }

    /// Stores a new game and its first event.
    pub async fn create(&self, id: &str, c: Creation<'_>) -> Result<CreateOutcome, StoreError> {
        match self {
            Store::Memory(s) => s.create(id, c),
            Store::Redis(s) => s.create(id, c).await,
        }
    }

    /// The game, unless it is still at the version the reader holds (`known`).
    pub async fn read(&self, id: &str, known: Option<Known>) -> Result<ReadOutcome, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.read(id, known)),
            Store::Redis(s) => s.read(id, known).await,
        }
    }

    /// Writes a change atomically (see [`Write`]).
    pub async fn write(&self, id: &str, w: Write<'_>) -> Result<WriteOutcome, StoreError> {
        match self {
            Store::Memory(s) => s.write(id, w),
            Store::Redis(s) => s.write(id, w).await,
        }
    }

    /// The saved answer in `slot`, if any.
    pub async fn saved_answer(&self, id: &str, slot: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.saved_answer(id, slot)),
            Store::Redis(s) => s.saved_answer(id, slot).await,
        }
    }

    /// At most `limit` events of `id` with versions above `after`, oldest first (from the
    /// version after `after` on, unless the log lost events: callers check the versions).
    pub async fn events_after(
        &self,
        id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(u64, String)>, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.events_after(id, after, limit)),
            Store::Redis(s) => s.events_after(id, after, limit).await,
        }
    }

    /// Games due by `now` (at most about `limit`), in no particular order.
    pub async fn due(&self, now: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.due(now, limit)),
            Store::Redis(s) => s.due(now, limit).await,
        }
    }

    /// Puts `id`'s index entry back in line with the game (or removes it if the game is gone).
    pub async fn fix_due(&self, id: &str) -> Result<(), StoreError> {
        match self {
            Store::Memory(s) => {
                s.fix_due(id);
                Ok(())
            }
            Store::Redis(s) => s.fix_due(id).await,
        }
    }

    /// Moves `id`'s index entry to `until` if it is still due by `due_by` (a due game that
    /// has to wait: the games due meanwhile come first). An entry a write has moved since,
    /// or removed, stays as it is; the game itself is not touched.
    pub async fn postpone(&self, id: &str, due_by: u64, until: u64) -> Result<(), StoreError> {
        match self {
            Store::Memory(s) => {
                s.postpone(id, due_by, until);
                Ok(())
            }
            Store::Redis(s) => s.postpone(id, due_by, until).await,
        }
    }

    /// Takes the game's lease for `owner` (who thinks for an engine seat) unless someone else
    /// holds it, and moves the game's due time past the lease, so no one else looks at it
    /// before the lease lapses; a dead holder's lease lapses after `ttl` by itself.
    pub async fn claim(&self, id: &str, owner: &str, ttl: Duration) -> Result<bool, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.claim(id, owner, ttl)),
            Store::Redis(s) => s.claim(id, owner, ttl).await,
        }
    }

    /// Gives the lease back if `owner` still holds it.
    pub async fn release(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        match self {
            Store::Memory(s) => {
                s.release(id, owner);
                Ok(())
            }
            Store::Redis(s) => s.release(id, owner).await,
        }
    }

    /// The record of the API key with this digest, if any (keys live in Redis only: with the
    /// embedded store there are none).
    pub async fn api_key(
        &self,
        digest: &str,
    ) -> Result<Option<crate::service::quota::api_key::KeyRecord>, StoreError> {
        match self {
            Store::Memory(_) => Ok(None),
            Store::Redis(s) => s.api_key(digest).await,
        }
    }

    /// Whether the store answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        match self {
            Store::Memory(_) => Ok(()),
            Store::Redis(s) => s.ping().await,
        }
    }
}
