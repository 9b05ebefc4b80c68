//! Integrator API keys: `X-Api-Key: pzk_<64 hex digits>`. Only a digest of a key is stored,
//! with the integrator's name and quotas, so a leaked store does not leak keys. Keys are made
//! and revoked with `pillarz keys` against the same Redis the replicas use; a replica
//! remembers what it looked up for [`KeyCache::TTL`], so a revocation takes effect within
//! that time everywhere.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Quotas;

/// The header that carries a key.
pub const HEADER: &str = "x-api-key";

/// A key as its holder sends it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(…)")
    }
}

impl ApiKey {
    /// A fresh key: 32 random bytes from the OS-seeded generator.
    pub fn generate() -> ApiKey {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        ApiKey(format!("pzk_{}", hex::encode(bytes)))
    }

    /// A key as sent: `pzk_` and 64 hex digits.
    pub fn parse(raw: &str) -> Option<ApiKey> {
        let hex = raw.trim().strip_prefix("pzk_")?;
        (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| ApiKey(format!("pzk_{}", hex.to_ascii_lowercase())))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What the store keeps and quotas are counted under: 128 bits of the key's SHA-256.
    pub fn digest(&self) -> String {
        hex::encode(&Sha256::digest(self.0.as_bytes())[..16])
    }
}

/// What is stored per key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// Who holds the key (for the operator; shown by `pillarz keys`).
    pub name: String,
    /// The key's quotas, in the `--anon-quotas` syntax.
    pub quotas: String,
}

/// Recently looked-up keys (known or not), so a busy integrator costs one lookup per
/// [`KeyCache::TTL`], not one per request. Bounded: when full, "no such key" answers go
/// first, then lapsed ones, and only then everything (see `put_at`).
///
/// It also gives one request at a time the turn to look a key up (see [`KeyCache::turn`]):
/// without that, each of simultaneous requests with a key the cache has no answer for made a
/// lookup of its own, and each spent a unit of its address's `keys` before it.
pub struct KeyCache {
    entries: Mutex<HashMap<String, (Instant, Option<Quotas>)>>,
    turns: Mutex<HashMap<String, Turns>>,
}

/// The requests with one key that hold or wait for its turn: the lock the turn is, and how
/// many of them there are (the entry goes with the last one, so the table holds only keys of
/// requests in flight).
struct Turns {
    lock: Arc<tokio::sync::Mutex<()>>,
    claims: usize,
}

/// A request's turn to look a key up: while it is held, other requests with the key wait.
pub struct Turn<'a> {
    // Dropped in this order: the lock is released before the claim can remove the entry, so
    // that a request coming after never makes a second lock for the key while this one is
    // held.
    _held: tokio::sync::OwnedMutexGuard<()>,
    _claim: Claim<'a>,
}

/// A request's place among those with one key, given up when it is dropped: once its turn
/// is over, or when it stops waiting (served, timed out or cancelled).
struct Claim<'a> {
    turns: &'a Mutex<HashMap<String, Turns>>,
    digest: String,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut turns = self.turns.lock().expect("key turns lock");
        if let Some(entry) = turns.get_mut(&self.digest) {
            entry.claims -= 1;
            if entry.claims == 0 {
                turns.remove(&self.digest);
            }
        }
    }
}

impl KeyCache {
    pub const TTL: Duration = Duration::from_secs(10);
    const CAPACITY: usize = 10_000;
    /// The longest a request waits for another's turn with its key: about what one store
    /// call may take, the holder's being two (its address's count and the lookup).
    pub const WAIT: Duration = Duration::from_secs(2);

    pub fn new() -> KeyCache {
        KeyCache {
            entries: Mutex::new(HashMap::new()),
            turns: Mutex::new(HashMap::new()),
        }
    }

    /// The turn to look `digest` up if no other request holds it; else `None`, once that
    /// turn is over or after [`KeyCache::WAIT`]. Then read the cache again: the lookup waited
    /// for has usually answered. If it has not (the lookup was refused, failed or cancelled,
    /// or is slow), go on without a turn: the requests that waited go on side by side, not
    /// each after the previous one's failure.
    pub async fn turn(&self, digest: &str) -> Option<Turn<'_>> {
        self.turn_within(digest, Self::WAIT).await
    }

    async fn turn_within(&self, digest: &str, wait: Duration) -> Option<Turn<'_>> {
        let (claim, lock) = {
            let mut turns = self.turns.lock().expect("key turns lock");
            let entry = turns.entry(digest.to_string()).or_insert_with(|| Turns {
                lock: Arc::default(),
                claims: 0,
            });
            entry.claims += 1;
            let claim = Claim {
                turns: &self.turns,
                digest: digest.to_string(),
            };
            (claim, entry.lock.clone())
        };
        match lock.clone().try_lock_owned() {
            Ok(held) => Some(Turn {
                _held: held,
                _claim: claim,
            }),
            Err(_) => {
                let _ = tokio::time::timeout(wait, lock.lock_owned()).await;
                None
            }
        }
    }

    /// The cached answer for `digest`, if fresh: `Some(None)` means "no such key".
    pub fn get(&self, digest: &str) -> Option<Option<Quotas>> {
        let entries = self.entries.lock().expect("key cache lock");
        entries
            .get(digest)
            .filter(|(at, _)| at.elapsed() < Self::TTL)
            .map(|(_, found)| *found)
    }

    /// Whether `digest` was a valid key when last looked up, however long ago (while this
    /// cache still remembers it).
    pub fn was_valid(&self, digest: &str) -> bool {
        let entries = self.entries.lock().expect("key cache lock");
        entries
            .get(digest)
            .is_some_and(|(_, found)| found.is_some())
    }

    pub fn put(&self, digest: String, found: Option<Quotas>) {
        self.put_at(digest, found, Instant::now());
    }

    /// Remembers an answer got `at`. When full, "no such key" answers go first (a flood of
    /// random keys must not make a replica forget the valid ones), then lapsed answers, and
    /// only then everything.
    fn put_at(&self, digest: String, found: Option<Quotas>, at: Instant) {
        let mut entries = self.entries.lock().expect("key cache lock");
        if entries.len() >= Self::CAPACITY {
            entries.retain(|_, (_, found)| found.is_some());
        }
        if entries.len() >= Self::CAPACITY {
            entries.retain(|_, (at, _)| at.elapsed() < Self::TTL);
        }
        if entries.len() >= Self::CAPACITY {
            entries.clear();
        }
        entries.insert(digest, (at, found));
    }
}

impl Default for KeyCache {
    fn default() -> Self {
        KeyCache::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_remembers_which_keys_were_valid_after_their_answer_expires() {
        let cache = KeyCache::new();
        let lapsed = Instant::now() - KeyCache::TTL * 2;
        cache.put("good".into(), Some(Quotas::KEY));
        cache.put_at("old".into(), Some(Quotas::KEY), lapsed);
        cache.put("bad".into(), None);
        assert_eq!(cache.get("good"), Some(Some(Quotas::KEY)));
        assert_eq!(cache.get("bad"), Some(None));
        assert_eq!(cache.get("never"), None);
        assert_eq!(
            cache.get("old"),
            None,
            "its answer lapsed: look it up again"
        );
        assert!(cache.was_valid("good") && cache.was_valid("old"));
        assert!(!cache.was_valid("bad") && !cache.was_valid("never"));
        // Revoked since: no longer valid.
        cache.put("good".into(), None);
        assert!(!cache.was_valid("good"));
    }

    #[test]
    fn a_flood_of_unknown_keys_does_not_make_the_cache_forget_valid_ones() {
        let cache = KeyCache::new();
        let lapsed = Instant::now() - KeyCache::TTL * 2;
        cache.put_at("valid".into(), Some(Quotas::KEY), lapsed);
        for i in 0..KeyCache::CAPACITY * 3 {
            cache.put(format!("random{i}"), None);
        }
        assert!(cache.was_valid("valid"));
        assert!(cache.entries.lock().unwrap().len() <= KeyCache::CAPACITY);
    }

    #[tokio::test]
    async fn one_request_at_a_time_has_a_keys_turn_and_nothing_is_left_behind() {
        let cache = KeyCache::new();
        let first = cache.turn("k").await.expect("nobody else holds k's turn");
        // Another key has its own turn; the same key waits.
        assert!(cache.turn("other").await.is_some());
        let mut waiting = Box::pin(cache.turn("k"));
        assert!(futures_util::poll!(waiting.as_mut()).is_pending());
        let mut cancelled = Box::pin(cache.turn("k"));
        assert!(futures_util::poll!(cancelled.as_mut()).is_pending());
        drop(cancelled);
        assert_eq!(cache.turns.lock().unwrap().len(), 1, "only k");
        drop(first);
        let after = tokio::time::timeout(Duration::from_secs(1), waiting).await;
        assert!(
            matches!(after, Ok(None)),
            "a request that waited goes on without the turn"
        );
        assert!(
            cache.turns.lock().unwrap().is_empty(),
            "a turn over, a wait over or a wait cancelled leaves no entry"
        );
        assert!(cache.turn("k").await.is_some(), "k's turn is free again");
    }

    #[tokio::test]
    async fn a_request_waits_for_anothers_turn_at_most_a_while() {
        let cache = KeyCache::new();
        let _held = cache.turn("k").await.expect("nobody else holds k's turn");
        let wait = Duration::from_millis(100);
        let started = Instant::now();
        assert!(cache.turn_within("k", wait).await.is_none());
        assert!(started.elapsed() >= wait);
        assert_eq!(
            cache.turns.lock().unwrap()["k"].claims,
            1,
            "only the holder"
        );
    }

    #[test]
    fn keys_parse_in_their_one_form_and_digests_are_stable() {
        let key = ApiKey::generate();
        assert_eq!(ApiKey::parse(key.expose()), Some(key.clone()));
        assert_eq!(
            ApiKey::parse(&key.expose().to_ascii_uppercase().replace("PZK_", "pzk_")),
            Some(key.clone())
        );
        assert_eq!(key.digest().len(), 32);
        assert_ne!(key.digest(), ApiKey::generate().digest());
        for bad in ["", "pzk_", "pzk_abc", &key.expose()[4..], "Bearer x"] {
            assert_eq!(ApiKey::parse(bad), None, "{bad}");
        }
    }
}
