//! The embedded store: maps behind one mutex, for one process (the default, and for tests that
//! need no Redis). Every operation means exactly what the Redis scripts mean.
//!
//! It is bounded like the Redis store: every game has a lifetime (the idle period while it is
//! on, the finished lifetime once it is over), a background sweep removes whatever expired
//! without waiting for anyone to touch it (reads also treat an expired game as gone), and it
//! holds at most `capacity` games and `max_bytes` of them: beyond either, what would add to
//! it is refused with [`StoreError::Full`], as Redis at its `maxmemory` refuses writes,
//! instead of growing until the process dies. (A count alone bounded nothing useful: a game
//! may grow to the ply cap, its log and saved answers with it, so 100,000 games could hold
//! tens of gigabytes.) The bytes are counted as a write adds them, not measured: each entry's
//! own bytes and a fixed [`ENTRY_OVERHEAD`], the right order of magnitude for a budget.

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

/// What an entry (a game, an event, a saved answer, a write id) is counted for besides its
/// own bytes: its map slot or vector element, its allocations' headers.
const ENTRY_OVERHEAD: usize = 64;

pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
    changes: Changes,
    clock: StoreClock,
    capacity: usize,
    max_bytes: usize,
}

struct Game {
    snapshot: Snapshot,
    expires: Instant,
    events: Vec<(u64, String)>,
    answers: HashMap<Vec<u8>, Vec<u8>>,
    recent_writes: Vec<String>,
    due: Option<u64>,
    /// What the game is counted for (see [`ENTRY_OVERHEAD`]).
    bytes: usize,
}

impl Game {
    /// What the game is counted for, from scratch: what `bytes` must always equal.
    #[cfg(test)]
    fn counted(&self, id: &str) -> usize {
        let snapshot = &self.snapshot;
        ENTRY_OVERHEAD
            + id.len()
            + snapshot.header.len()
            + snapshot.live.len()
            + snapshot.moves.len()
            + snapshot.history.len()
            + self
                .events
                .iter()
                .map(|(_, e)| event_bytes(e))
                .sum::<usize>()
            + self
                .answers
                .iter()
                .map(|(slot, value)| answer_bytes(slot, value))
                .sum::<usize>()
            + self
                .recent_writes
                .iter()
                .map(|w| ENTRY_OVERHEAD + w.len())
                .sum::<usize>()
    }
}

fn event_bytes(event: &str) -> usize {
    ENTRY_OVERHEAD + 8 + event.len()
}

fn answer_bytes(slot: &[u8], value: &[u8]) -> usize {
    ENTRY_OVERHEAD + slot.len() + value.len()
}

#[derive(Default)]
struct Inner {
    games: HashMap<String, Game>,
    leases: HashMap<String, (String, Instant)>,
    /// The due index: `(due time, id)`, and each indexed game's entry.
    due: BTreeSet<(u64, String)>,
    due_of: HashMap<String, u64>,
    /// The sum of the games' `bytes`.
    bytes: usize,
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
        if let Some(game) = self.games.remove(id) {
            self.bytes -= game.bytes;
        }
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
        let mut freed = 0;
        self.games.retain(|_, g| {
            let keep = g.expires > now;
            if !keep {
                freed += g.bytes;
            }
            keep
        });
        self.bytes -= freed;
        self.leases.retain(|_, (_, until)| *until > now);
        let games = &self.games;
        self.due.retain(|(_, id)| games.contains_key(id));
        self.due_of.retain(|id, _| games.contains_key(id));
        self.counted();
    }

    /// Shows the games and bytes held on the metrics.
    fn counted(&self) {
        METRICS.store_games.set(self.games.len() as i64);
        METRICS.store_bytes.set(self.bytes as i64);
    }
}

fn lock(inner: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    // A panic while holding the lock cannot leave a half-written game (every write is
    // computed first and then stored), so a poisoned lock is still consistent.
    inner.lock().unwrap_or_else(|e| e.into_inner())
}

impl MemoryStore {
    /// A store that holds at most `capacity` games and `max_bytes` of them, keeping time by
    /// `clock`.
    pub fn new(capacity: usize, max_bytes: usize, clock: StoreClock) -> MemoryStore {
        MemoryStore {
            inner: Arc::default(),
            changes: Changes::default(),
            clock,
            capacity: capacity.max(1),
            max_bytes,
        }
    }

    /// Refuses to add `bytes` to `inner` past the budget.
    fn room_for(&self, inner: &Inner, bytes: usize) -> Result<(), StoreError> {
        if inner.bytes + bytes > self.max_bytes {
            let budget = match self.max_bytes {
                b if b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
                b => format!("{} KiB", b.div_ceil(1 << 10)),
            };
            return Err(StoreError::Full(format!(
                "the embedded store holds its maximum of {budget}"
            )));
        }
        Ok(())
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
        let snapshot = c.snapshot;
        let bytes = ENTRY_OVERHEAD
            + id.len()
            + snapshot.header.len()
            + snapshot.live.len()
            + snapshot.moves.len()
            + snapshot.history.len()
            + event_bytes(c.event);
        self.room_for(&inner, bytes)?;
        // Ids are random, so none is taken; were one, the game it replaces is no longer counted.
        let replaced = inner.games.insert(
            id.to_string(),
            Game {
                snapshot: snapshot.clone(),
                expires: Instant::now() + c.expire_after,
                events: vec![(snapshot.version, c.event.to_string())],
                answers: HashMap::new(),
                recent_writes: Vec::new(),
                due: c.due,
                bytes,
            },
        );
        inner.bytes = inner.bytes - replaced.map_or(0, |g| g.bytes) + bytes;
        inner.index(id, c.due);
        inner.counted();
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

    /// Writes `w` whole, or refuses it ([`StoreError::Full`]) and changes nothing.
    pub fn write(&self, id: &str, w: Write<'_>) -> Result<WriteOutcome, StoreError> {
        let mut inner = self.lock();
        let Some(game) = inner.live(id) else {
            return Ok(WriteOutcome::Conflict(None));
        };
        if let Some(answer) = w.answer
            && let Some(saved) = game.answers.get(answer.slot)
        {
            return Ok(WriteOutcome::Saved(saved.clone()));
        }
        if game.recent_writes.iter().any(|r| r == w.write_id) {
            return Ok(WriteOutcome::Applied);
        }
        if game.snapshot.version != w.expected.version {
            return Ok(WriteOutcome::Conflict(Some(Newer::Whole(
                game.snapshot.clone(),
            ))));
        }
        // What the game is counted for once written: the live part replaced, the rest added,
        // the oldest write id forgotten.
        let forgotten: usize = game
            .recent_writes
            .iter()
            .skip(RECENT_WRITES - 1)
            .map(|r| ENTRY_OVERHEAD + r.len())
            .sum();
        let bytes = game.bytes - game.snapshot.live.len() - forgotten
            + w.live.len()
            + w.mv.map_or(0, |mv| mv.len() + 1)
            + w.history_key.map_or(0, |_| 8)
            + event_bytes(w.event)
            + w.answer.map_or(0, |a| answer_bytes(a.slot, a.value))
            + ENTRY_OVERHEAD
            + w.write_id.len();
        let grows = bytes.saturating_sub(game.bytes);
        let before = game.bytes;
        self.room_for(&inner, grows)?;
        // Not `live` again: a game that expired since the lookup above is still the one to
        // write (a second reading of the clock could find it gone).
        let game = inner
            .games
            .get_mut(id)
            .expect("found live above, under the same lock");
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
        game.bytes = bytes;
        inner.bytes = inner.bytes - before + bytes;
        inner.index(id, w.due);
        inner.counted();
        drop(inner);
        self.changes.notify(id, w.version);
        Ok(WriteOutcome::Applied)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::store::{Known, SavedAnswer};

    fn snapshot() -> Snapshot {
        Snapshot {
            version: 1,
            header: r#"{"game":"alcazar"}"#.into(),
            live: "{}".into(),
            moves: String::new(),
            history: Vec::new(),
        }
    }

    /// The bytes each game and the store are counted for, kept up write by write, equal what
    /// they hold counted from scratch.
    fn assert_counted(store: &MemoryStore) {
        let inner = store.lock();
        let mut total = 0;
        for (id, game) in &inner.games {
            assert_eq!(game.bytes, game.counted(id), "game {id}");
            total += game.bytes;
        }
        assert_eq!(inner.bytes, total, "the store");
    }

    fn write<'a>(version: u64, live: &'a str, key: &'a [u8], id: &'a str) -> Write<'a> {
        Write {
            expected: Known {
                version: version - 1,
                history_keys: Some((version - 2) as usize),
            },
            version,
            live,
            mv: Some("a1b2"),
            history_key: Some(version),
            event: r#"{"move":"a1b2"}"#,
            expire_after: Duration::from_secs(60),
            answer: Some(SavedAnswer {
                slot: key,
                value: b"fingerprint2",
            }),
            write_id: id,
            due: None,
            now: 0,
        }
    }

    #[test]
    fn bytes_are_counted_write_by_write_as_from_scratch() {
        let store = MemoryStore::new(10, 1 << 20, StoreClock::default());
        let creation = |snapshot| Creation {
            snapshot,
            event: r#"{"created":true}"#,
            expire_after: Duration::from_secs(60),
            due: None,
            now: 0,
        };
        let first = snapshot();
        store.create("g1", creation(&first)).unwrap();
        store.create("g2", creation(&first)).unwrap();
        assert_counted(&store);
        for version in 2..12u64 {
            // The live part changes length, write ids come and go, answers pile up.
            let live = "x".repeat(version as usize * 3 % 7);
            let key = version.to_le_bytes();
            let id = format!("write-{version}");
            let outcome = store.write("g1", write(version, &live, &key, &id)).unwrap();
            assert_eq!(outcome, WriteOutcome::Applied);
            assert_counted(&store);
        }
        // A resent write and a conflict add nothing.
        let live = String::new();
        let key = 11u64.to_le_bytes();
        let resent = store
            .write("g1", write(11, &live, &key, "write-11"))
            .unwrap();
        assert!(matches!(resent, WriteOutcome::Saved(_)), "{resent:?}");
        let stale = store.write("g2", write(5, &live, b"other", "w")).unwrap();
        assert!(
            matches!(stale, WriteOutcome::Conflict(Some(_))),
            "{stale:?}"
        );
        assert_counted(&store);
        // A game created again under a taken id is counted once.
        store.create("g2", creation(&first)).unwrap();
        assert_counted(&store);
        // Expiry gives the bytes back.
        store.lock().sweep(Instant::now() + Duration::from_secs(61));
        assert_eq!(store.lock().bytes, 0);
    }

    #[test]
    fn a_write_past_the_budget_is_refused_whole() {
        let store = MemoryStore::new(10, 1024, StoreClock::default());
        let first = snapshot();
        store
            .create(
                "g",
                Creation {
                    snapshot: &first,
                    event: "{}",
                    expire_after: Duration::from_secs(60),
                    due: None,
                    now: 0,
                },
            )
            .unwrap();
        let big = "x".repeat(1024);
        let refused = store.write("g", write(2, &big, b"k", "w"));
        assert!(
            matches!(&refused, Err(StoreError::Full(why)) if why.ends_with("maximum of 1 KiB")),
            "{refused:?}"
        );
        let inner = store.lock();
        let game = &inner.games["g"];
        assert_eq!(game.snapshot, first, "nothing of the write");
        assert_eq!(game.events.len(), 1);
        assert!(game.answers.is_empty() && game.recent_writes.is_empty());
        assert_eq!(inner.bytes, game.counted("g"));
    }
}
