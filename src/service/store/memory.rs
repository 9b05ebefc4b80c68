//! The embedded store: a map behind a mutex, for one process (the default, and for tests that
//! need no Redis). Expiry is checked lazily when a record is read.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use super::{Changes, EVENT_LOG_LEN, IDEMPOTENCY_TTL, Versioned, WriteExtras};

#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
    changes: Changes,
}

#[derive(Default)]
struct Inner {
    games: HashMap<String, (Versioned, Option<Instant>)>,
    answers: HashMap<(String, String), (String, Instant)>,
    leases: HashMap<String, (String, Instant)>,
    events: HashMap<String, Vec<(u64, String)>>,
}

impl Inner {
    fn live(&mut self, id: &str) -> Option<&Versioned> {
        let expired = matches!(self.games.get(id), Some((_, Some(at))) if *at <= Instant::now());
        if expired {
            self.games.remove(id);
            self.events.remove(id);
            self.answers.retain(|(game, _), _| game != id);
        }
        self.games.get(id).map(|(record, _)| record)
    }
}

impl MemoryStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a half-written entry (every write is one
        // insert), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn create(
        &self,
        id: &str,
        record: &Versioned,
        event: &str,
    ) -> Result<(), super::StoreError> {
        let mut inner = self.lock();
        inner.games.insert(id.to_string(), (record.clone(), None));
        inner
            .events
            .insert(id.to_string(), vec![(record.version, event.to_string())]);
        drop(inner);
        self.changes.notify(id, record.version);
        Ok(())
    }

    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    pub fn events_after(&self, id: &str, after: u64) -> Vec<(u64, String)> {
        let mut inner = self.lock();
        if inner.live(id).is_none() {
            return Vec::new();
        }
        inner.events.get(id).map_or_else(Vec::new, |log| {
            log.iter().filter(|(v, _)| *v > after).cloned().collect()
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
        let expires = extras.expire_after.map(|d| now + d);
        inner
            .games
            .insert(id.to_string(), (record.clone(), expires));
        if let Some((key, answer)) = extras.idempotent_answer {
            inner.answers.insert(
                (id.to_string(), key.to_string()),
                (answer.to_string(), now + IDEMPOTENCY_TTL),
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

    pub fn try_lease(&self, id: &str, owner: &str, ttl: std::time::Duration) -> bool {
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
