//! The embedded store: maps behind one mutex, for one process (the default, and for tests that
//! need no Redis). Every operation means exactly what the Redis scripts mean.
//!
//! It is bounded like the Redis store: every game has a lifetime (the idle period while it is
//! on, the finished lifetime once it is over), a background sweep removes whatever expired
//! without waiting for anyone to touch it (reads also treat an expired game as gone), and it
//! holds at most `capacity` games: beyond that, new games are refused with
//! [`StoreError::Full`] instead of growing until the process dies.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::clock::StoreClock;
use super::{
    Changes, CreateOutcome, Creation, Known, Newer, ReadOutcome, Snapshot, StoreError, Write,
    WriteOutcome,
};
use crate::service::metrics::METRICS;

/// How often the background sweep runs.
const SWEEP_EVERY: Duration = Duration::from_millis(500);

/// How many write ids a game remembers (a retry comes right after its first attempt).
const RECENT_WRITES: usize = 2;

pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
    changes: Changes,
    clock: StoreClock,
    capacity: usize,
}

struct Game {
    snapshot: Snapshot,
    expires: Instant,
    events: Vec<(u64, String)>,
    answers: HashMap<Vec<u8>, Vec<u8>>,
    recent_writes: Vec<String>,
    due: Option<u64>,
}

#[derive(Default)]
struct Inner {
    games: HashMap<String, Game>,
    leases: HashMap<String, (String, Instant)>,
    /// The due index: `(due time, id)`, and each indexed game's entry.
    due: BTreeSet<(u64, String)>,
    due_of: HashMap<String, u64>,
}

impl Inner {
    fn index(&mut self, id: &str, due: Option<u64>) {
        if let Some(old) = self.due_of.remove(id) {
            self.due.remove(&(old, id.to_string()));
        }
        if let Some(at) = due {
            self.due.insert((at, id.to_string()));
            self.due_of.insert(id.to_string(), at);
        }
    }

    fn forget(&mut self, id: &str) {
        self.games.remove(id);
        self.leases.remove(id);
    }

    fn live(&mut self, id: &str) -> Option<&mut Game> {
        let expired = self
            .games
            .get(id)
            .is_some_and(|g| g.expires <= Instant::now());
        if expired {
            self.forget(id);
        }
        self.games.get_mut(id)
    }

    /// Removes everything that expired.
    fn sweep(&mut self, now: Instant) {
        self.games.retain(|_, g| g.expires > now);
        self.leases.retain(|_, (_, until)| *until > now);
        let games = &self.games;
        self.due.retain(|(_, id)| games.contains_key(id));
        self.due_of.retain(|id, _| games.contains_key(id));
        METRICS.store_games.set(self.games.len() as i64);
    }
}

fn lock(inner: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    // A panic while holding the lock cannot leave a half-written game (every write is
    // computed first and then stored), so a poisoned lock is still consistent.
    inner.lock().unwrap_or_else(|e| e.into_inner())
}

impl MemoryStore {
    /// A store that holds at most `capacity` games, keeping time by `clock`.
    pub fn new(capacity: usize, clock: StoreClock) -> MemoryStore {
        MemoryStore {
            inner: Arc::default(),
            changes: Changes::default(),
            clock,
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    pub fn clock(&self) -> &StoreClock {
        &self.clock
    }

    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// The background sweep, to be spawned by the app; it ends with the store.
    pub fn sweeper(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let inner: Weak<Mutex<Inner>> = Arc::downgrade(&self.inner);
        async move {
            let mut every = tokio::time::interval(SWEEP_EVERY);
            loop {
                every.tick().await;
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                lock(&inner).sweep(Instant::now());
            }
        }
    }

    pub fn create(&self, id: &str, c: Creation<'_>) -> Result<CreateOutcome, StoreError> {
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
            Game {
                snapshot: c.snapshot.clone(),
                expires: Instant::now() + c.expire_after,
                events: vec![(c.snapshot.version, c.event.to_string())],
                answers: HashMap::new(),
                recent_writes: Vec::new(),
                due: c.due,
            },
        );
        inner.index(id, c.due);
        METRICS.store_games.set(inner.games.len() as i64);
        drop(inner);
        self.changes.notify(id, c.snapshot.version);
        Ok(CreateOutcome::Created)
    }

    pub fn read(&self, id: &str, known: Option<Known>) -> ReadOutcome {
        let mut inner = self.lock();
        match inner.live(id) {
            None => ReadOutcome::Missing,
            Some(game) if Some(game.snapshot.version) == known.map(|k| k.version) => {
                ReadOutcome::Unchanged
            }
            Some(game) => ReadOutcome::Current(Newer::Whole(game.snapshot.clone())),
        }
    }

    pub fn write(&self, id: &str, w: Write<'_>) -> WriteOutcome {
        let mut inner = self.lock();
        let Some(game) = inner.live(id) else {
            return WriteOutcome::Conflict(None);
        };
        if let Some(answer) = w.answer
            && let Some(saved) = game.answers.get(answer.slot)
        {
            return WriteOutcome::Saved(saved.clone());
        }
        if game.recent_writes.iter().any(|r| r == w.write_id) {
            return WriteOutcome::Applied;
        }
        if game.snapshot.version != w.expected.version {
            return WriteOutcome::Conflict(Some(Newer::Whole(game.snapshot.clone())));
        }
        game.snapshot.version = w.version;
        game.snapshot.live = w.live.to_string();
        if let Some(mv) = w.mv {
            game.snapshot.moves.push_str(mv);
            game.snapshot.moves.push(' ');
        }
        if let Some(key) = w.history_key {
            game.snapshot.history.extend(key.to_le_bytes());
        }
        game.expires = Instant::now() + w.expire_after;
        game.events.push((w.version, w.event.to_string()));
        if let Some(answer) = w.answer {
            game.answers
                .insert(answer.slot.to_vec(), answer.value.to_vec());
        }
        game.recent_writes.insert(0, w.write_id.to_string());
        game.recent_writes.truncate(RECENT_WRITES);
        game.due = w.due;
        inner.index(id, w.due);
        drop(inner);
        self.changes.notify(id, w.version);
        WriteOutcome::Applied
    }

    pub fn saved_answer(&self, id: &str, slot: &[u8]) -> Option<Vec<u8>> {
        self.lock().live(id)?.answers.get(slot).cloned()
    }

    pub fn events_after(&self, id: &str, after: u64, limit: usize) -> Vec<(u64, String)> {
        let mut inner = self.lock();
        inner.live(id).map_or_else(Vec::new, |game| {
            let start = game.events.partition_point(|(v, _)| *v <= after);
            game.events[start..].iter().take(limit).cloned().collect()
        })
    }

    pub fn due(&self, now: u64, limit: usize) -> Vec<String> {
        self.lock()
            .due
            .iter()
            .take_while(|(at, _)| *at <= now)
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect()
    }

    pub fn fix_due(&self, id: &str) {
        let mut inner = self.lock();
        let due = inner.live(id).and_then(|g| g.due);
        inner.index(id, due);
    }

    pub fn postpone(&self, id: &str, due_by: u64, until: u64) {
        let mut inner = self.lock();
        if inner.due_of.get(id).is_some_and(|at| *at <= due_by) {
            inner.index(id, Some(until));
        }
    }

    pub fn claim(&self, id: &str, owner: &str, ttl: Duration) -> bool {
        let mut inner = self.lock();
        let now = Instant::now();
        if inner.leases.get(id).is_some_and(|(_, until)| *until > now) {
            return false;
        }
        inner
            .leases
            .insert(id.to_string(), (owner.to_string(), now + ttl));
        if inner.live(id).is_some() {
            let after = self.clock.now_ms() + ttl.as_millis() as u64;
            inner.index(id, Some(after));
        }
        true
    }

    pub fn release(&self, id: &str, owner: &str) {
        let mut inner = self.lock();
        if inner
            .leases
            .get(id)
            .is_some_and(|(holder, _)| holder == owner)
        {
            inner.leases.remove(id);
        }
    }
}
