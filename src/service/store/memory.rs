//! The embedded store: a map behind a mutex, for one process (the default, and for tests that
//! need no Redis).
//!
//! It is bounded like the Redis store: every game has a lifetime (the idle period while it is
//! on, the finished lifetime once it is over), a background sweep removes whatever expired
//! without waiting for anyone to touch it (reads also treat an expired game as gone), and it
//! holds at most `capacity` games: beyond that, new games are refused with
//! [`StoreError::Full`] instead of growing until the process dies.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::{Changes, EVENT_LOG_LEN, IDEMPOTENCY_TTL, StoreError, Versioned, WriteExtras};
use crate::service::metrics::METRICS;

/// How often the background sweep runs.
const SWEEP_EVERY: Duration = Duration::from_millis(500);

pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
    changes: Changes,
    capacity: usize,
}

impl Default for MemoryStore {
    fn default() -> MemoryStore {
        MemoryStore::new(100_000)
    }
}

#[derive(Default)]
struct Inner {
    /// Each game with the instant it expires.
    games: HashMap<String, (Versioned, Instant)>,
    answers: HashMap<(String, String), (String, Instant)>,
    leases: HashMap<String, (String, Instant)>,
    events: HashMap<String, Vec<(u64, String)>>,
}

impl Inner {
    fn forget(&mut self, id: &str) {
        self.games.remove(id);
        self.events.remove(id);
        self.leases.remove(id);
        self.answers.retain(|(game, _), _| game != id);
    }

    fn live(&mut self, id: &str) -> Option<&Versioned> {
        let expired = matches!(self.games.get(id), Some((_, at)) if *at <= Instant::now());
        if expired {
            self.forget(id);
        }
        self.games.get(id).map(|(record, _)| record)
    }

    /// Removes everything that expired.
    fn sweep(&mut self, now: Instant) {
        let expired: Vec<String> = self
            .games
            .iter()
            .filter(|(_, (_, at))| *at <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            self.games.remove(id);
            self.events.remove(id);
        }
        let games = &self.games;
        self.answers
            .retain(|(game, _), (_, until)| *until > now && games.contains_key(game));
        self.leases.retain(|_, (_, until)| *until > now);
        self.events.retain(|id, _| games.contains_key(id));
        METRICS.store_games.set(self.games.len() as i64);
    }
}

fn lock(inner: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    // A panic while holding the lock cannot leave a half-written entry (every write is one
    // insert), so a poisoned lock is still consistent.
    inner.lock().unwrap_or_else(|e| e.into_inner())
}

impl MemoryStore {
    /// A store that holds at most `capacity` games.
    pub fn new(capacity: usize) -> MemoryStore {
        MemoryStore {
            inner: Arc::default(),
            changes: Changes::default(),
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Starts the background sweep (within a Tokio runtime); it ends with the store.
    pub fn spawn_sweeper(&self) {
        let inner: Weak<Mutex<Inner>> = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(SWEEP_EVERY);
            loop {
                every.tick().await;
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                lock(&inner).sweep(Instant::now());
            }
        });
    }

    pub fn create(
        &self,
        id: &str,
        record: &Versioned,
        event: &str,
        expire_after: Duration,
    ) -> Result<(), StoreError> {
        let mut inner = self.lock();
        // Expired games are removed by the sweep (every half second), so a full store makes
        // room by itself.
        if inner.games.len() >= self.capacity {
            return Err(StoreError::Full(format!(
                "the embedded store holds its maximum of {} games",
                self.capacity
            )));
        }
        inner.games.insert(
            id.to_string(),
            (record.clone(), Instant::now() + expire_after),
        );
        inner
            .events
            .insert(id.to_string(), vec![(record.version, event.to_string())]);
        METRICS.store_games.set(inner.games.len() as i64);
        drop(inner);
        self.changes.notify(id, record.version);
        Ok(())
    }

    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    pub fn events_after(&self, id: &str, after: u64, limit: usize) -> Vec<(u64, String)> {
        let mut inner = self.lock();
        if inner.live(id).is_none() {
            return Vec::new();
        }
        inner.events.get(id).map_or_else(Vec::new, |log| {
            let start = log.partition_point(|(v, _)| *v <= after);
            log[start..].iter().take(limit).cloned().collect()
        })
    }

    pub fn load(&self, id: &str) -> Option<Versioned> {
        self.lock().live(id).cloned()
    }

    pub fn compare_and_set(
        &self,
        id: &str,
        expected: u64,
        record: &Versioned,
        event: &str,
        extras: WriteExtras<'_>,
    ) -> bool {
        let mut inner = self.lock();
        if inner.live(id).map(|r| r.version) != Some(expected) {
            return false;
        }
        let now = Instant::now();
        inner
            .games
            .insert(id.to_string(), (record.clone(), now + extras.expire_after));
        if let Some((key, answer)) = extras.idempotent_answer {
            inner.answers.insert(
                (id.to_string(), key.to_string()),
                (
                    answer.to_string(),
                    now + IDEMPOTENCY_TTL.min(extras.expire_after),
                ),
            );
        }
        let log = inner.events.entry(id.to_string()).or_default();
        log.push((record.version, event.to_string()));
        if log.len() > EVENT_LOG_LEN {
            log.drain(..log.len() - EVENT_LOG_LEN);
        }
        drop(inner);
        self.changes.notify(id, record.version);
        true
    }

    pub fn try_lease(&self, id: &str, owner: &str, ttl: Duration) -> bool {
        let mut inner = self.lock();
        let now = Instant::now();
        match inner.leases.get(id) {
            Some((holder, until)) if *until > now && holder != owner => false,
            _ => {
                inner
                    .leases
                    .insert(id.to_string(), (owner.to_string(), now + ttl));
                true
            }
        }
    }

    pub fn release_lease(&self, id: &str, owner: &str) {
        let mut inner = self.lock();
        if inner
            .leases
            .get(id)
            .is_some_and(|(holder, _)| holder == owner)
        {
            inner.leases.remove(id);
        }
    }

    pub fn idempotent_answer(&self, id: &str, key: &str) -> Option<String> {
        let mut inner = self.lock();
        inner.live(id)?;
        let slot = (id.to_string(), key.to_string());
        match inner.answers.get(&slot) {
            Some((_, until)) if *until <= Instant::now() => {
                inner.answers.remove(&slot);
                None
            }
            other => other.map(|(answer, _)| answer.clone()),
        }
    }
}
