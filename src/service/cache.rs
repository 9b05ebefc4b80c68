//! This replica's cache of recently used games, by version.
//!
//! Never trusted on its own: a read still asks the store whether the game moved on (one round
//! trip that carries no game when it did not, and only what changed when it did), and a write
//! states the version it was computed from (the store refuses it, with what changed since, when
//! that is stale). What the cache
//! saves is decoding the game, listing its legal moves, and, for writes, the read before the
//! write: a move on a cached game costs one round trip to the store. It is bounded by the
//! approximate bytes of what it holds.

use std::sync::{Arc, OnceLock};

use quick_cache::Weighter;

use super::domain::{GameId, StoredGame};

/// A game at one version, with what was derived from it so far.
#[derive(Debug)]
pub struct Loaded {
    pub game: StoredGame,
    /// The legal-moves answer of this version, once someone asked.
    legal_moves: OnceLock<String>,
}

impl Loaded {
    pub fn new(game: StoredGame) -> Arc<Loaded> {
        Arc::new(Loaded {
            game,
            legal_moves: OnceLock::new(),
        })
    }

    /// The legal-moves answer (JSON), computed at most once per version.
    pub fn legal_moves_json(&self) -> &str {
        self.legal_moves.get_or_init(|| {
            let moves = if self.game.is_finished() {
                Vec::new()
            } else {
                self.game.rules().legal_moves()
            };
            serde_json::to_string(&crate::api::LegalMoves {
                ply: self.game.ply(),
                turn: self.game.rules().turn(),
                moves,
            })
            .expect("legal moves serialize")
        })
    }
}

#[derive(Clone)]
struct ByBytes;

impl Weighter<GameId, Arc<Loaded>> for ByBytes {
    fn weight(&self, _id: &GameId, loaded: &Arc<Loaded>) -> u64 {
        loaded.game.weight() as u64
    }
}

pub struct GameCache {
    /// None: caching is off (`--cache-mb 0`).
    games: Option<quick_cache::sync::Cache<GameId, Arc<Loaded>, ByBytes>>,
}

impl GameCache {
    /// A cache of about `bytes` bytes (0: none).
    pub fn new(bytes: u64) -> GameCache {
        let games = (bytes / 2048).max(16) as usize;
        GameCache {
            games: (bytes > 0)
                .then(|| quick_cache::sync::Cache::with_weighter(games, bytes, ByBytes)),
        }
    }

    pub fn get(&self, id: GameId) -> Option<Arc<Loaded>> {
        self.games.as_ref()?.get(&id)
    }

    /// Keeps `loaded` unless a newer version of the game is cached already.
    pub fn put(&self, loaded: &Arc<Loaded>) {
        let Some(games) = &self.games else {
            return;
        };
        let id = loaded.game.id();
        if games
            .get(&id)
            .is_some_and(|cached| cached.game.version() > loaded.game.version())
        {
            return;
        }
        games.insert(id, loaded.clone());
    }

    pub fn forget(&self, id: GameId) {
        if let Some(games) = &self.games {
            games.remove(&id);
        }
    }
}
