//! Where games live between requests: Redis in production, or an embedded in-memory store.
//!
//! The store knows nothing about games. It keeps, per game id, an opaque record with a version
//! number, and replaces a record only if its version is still the one the writer read (a
//! compare-and-set), which is how replicas that share one store never lose or duplicate a
//! move. The answer to a request with an `Idempotency-Key` is saved in the same atomic step,
//! and so is the change's event (appended to the game's event log, and announced to every
//! replica, so that live watchers anywhere see every change in order).

mod changes;
mod memory;
mod redis;

use std::time::Duration;

pub use changes::Changes;
pub use memory::MemoryStore;
pub use redis::RedisStore;

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The store did not answer (Redis down, timed out); worth retrying later.
    #[error("{0}")]
    Unavailable(String),
    /// The store answered with something that is not a record of ours.
    #[error("{0}")]
    Corrupt(String),
    /// The embedded store holds its maximum of games: no new ones until some expire.
    #[error("{0}")]
    Full(String),
}

/// A record as stored: its version and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    pub version: u64,
    pub data: String,
}

/// What a compare-and-set writes besides the record.
#[derive(Debug, Clone)]
pub struct WriteExtras<'a> {
    /// Let the record (and its event log) expire this long after the write: the idle period
    /// while the game is on, the finished lifetime once it is over. Every write sets it, so
    /// every key of a game has a lifetime and an unfinished one is renewed by each change.
    pub expire_after: Duration,
    /// Remember `(key, answer)` as the answer to a request with this `Idempotency-Key`.
    pub idempotent_answer: Option<(&'a str, &'a str)>,
}

/// About how many events a game's log keeps.
pub const EVENT_LOG_LEN: usize = 10_000;

/// How long an `Idempotency-Key`'s answer is remembered.
pub const IDEMPOTENCY_TTL: Duration = Duration::from_secs(24 * 3600);

/// The configured store.
pub enum Store {
    Memory(Box<MemoryStore>),
    Redis(Box<RedisStore>),
}

impl Store {
    /// Stores a new record and its first event, both expiring after `expire_after` unless a
    /// later write renews them.
    pub async fn create(
        &self,
        id: &str,
        record: &Versioned,
        event: &str,
        expire_after: Duration,
    ) -> Result<(), StoreError> {
        match self {
            Store::Memory(s) => s.create(id, record, event, expire_after),
            Store::Redis(s) => s.create(id, record, event, expire_after).await,
        }
    }

    /// At most `limit` events of `id` with versions above `after`, oldest first (the log keeps
    /// the last [`EVENT_LOG_LEN`] or so).
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

    /// The fan-out of changes to this replica's watchers.
    pub fn changes(&self) -> &Changes {
        match self {
            Store::Memory(s) => s.changes(),
            Store::Redis(s) => s.changes(),
        }
    }

    pub async fn load(&self, id: &str) -> Result<Option<Versioned>, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.load(id)),
            Store::Redis(s) => s.load(id).await,
        }
    }

    /// Replaces the record if its version is still `expected`; `false` if someone else wrote
    /// first (or the record is gone).
    pub async fn compare_and_set(
        &self,
        id: &str,
        expected: u64,
        record: &Versioned,
        event: &str,
        extras: WriteExtras<'_>,
    ) -> Result<bool, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.compare_and_set(id, expected, record, event, extras)),
            Store::Redis(s) => s.compare_and_set(id, expected, record, event, extras).await,
        }
    }

    /// The saved answer to an earlier request with this `Idempotency-Key`, if any.
    pub async fn idempotent_answer(
        &self,
        id: &str,
        key: &str,
    ) -> Result<Option<String>, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.idempotent_answer(id, key)),
            Store::Redis(s) => s.idempotent_answer(id, key).await,
        }
    }

    /// Takes the game's lease for `owner` (who thinks for a computer seat) unless someone else
    /// holds it; it lapses after `ttl` by itself, so a dead holder blocks no one for long.
    pub async fn try_lease(
        &self,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.try_lease(id, owner, ttl)),
            Store::Redis(s) => s.try_lease(id, owner, ttl).await,
        }
    }

    /// Gives the lease back if `owner` still holds it.
    pub async fn release_lease(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        match self {
            Store::Memory(s) => {
                s.release_lease(id, owner);
                Ok(())
            }
            Store::Redis(s) => s.release_lease(id, owner).await,
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
