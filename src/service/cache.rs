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
use serde::Serialize;

use super::domain::{GameId, StoredGame};
use crate::rules::{AnyState, Player};

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

    /// About how many bytes this holds (see [`StoredGame::weight`]), the legal-moves answer
    /// included once computed.
    pub fn weight(&self) -> usize {
        // The `Arc`'s two counts, and what `Loaded` adds to the game.
        2 * std::mem::size_of::<usize>() + std::mem::size_of::<Loaded>()
            - std::mem::size_of::<StoredGame>()
            + self.game.weight()
            + self
                .legal_moves
                .get()
                .map_or(0, |json| json.capacity() + 16)
    }

    /// Whether the legal-moves answer is computed already.
    pub fn has_legal_moves(&self) -> bool {
        self.legal_moves.get().is_some()
    }

    /// The legal-moves answer (JSON), computed at most once per version. The moves' names are
    /// written straight into it (the same bytes as serializing [`crate::api::LegalMoves`],
    /// without a string per move).
    pub fn legal_moves_json(&self) -> &str {
        self.legal_moves.get_or_init(|| {
            serde_json::to_string(&LegalMovesRef {
                ply: self.game.ply(),
                turn: self.game.rules().turn(),
                moves: Names((!self.game.is_finished()).then(|| self.game.rules())),
            })
            .expect("legal moves serialize")
        })
    }
}

/// A borrowed [`crate::api::LegalMoves`]: the same fields, in the same order.
#[derive(Serialize)]
struct LegalMovesRef<'a> {
    ply: u64,
    turn: Player,
    moves: Names<'a>,
}

/// The legal moves of a position (none: an empty list) as a JSON array of their names.
struct Names<'a>(Option<&'a AnyState>);

impl Serialize for Names<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        use std::fmt::Write;
        let mut seq = serializer.serialize_seq(None)?;
        let mut written = Ok(());
        if let Some(rules) = self.0 {
            // Each name is written whole and then escaped once (through `collect_str`, the
            // escaper ran once per piece the name's `Display` wrote).
            let mut name = String::new();
            rules.for_each_legal_move(|mv| {
                if written.is_ok() {
                    name.clear();
                    written = write!(name, "{mv}")
                        .map_err(S::Error::custom)
                        .and_then(|()| seq.serialize_element(name.as_str()));
                }
            });
        }
        written?;
        seq.end()
    }
}

#[derive(Clone)]
struct ByBytes;

impl Weighter<GameId, Arc<Loaded>> for ByBytes {
    fn weight(&self, _id: &GameId, loaded: &Arc<Loaded>) -> u64 {
        loaded.weight() as u64
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

    /// Keeps `loaded` unless a newer version of the game is cached already (again after it
    /// grew, to weigh it anew).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{GameKind, Variants};
    use crate::service::domain::SeatToken;

    /// What the answer must equal: the DTO with the names made one by one.
    fn serialized(game: &StoredGame) -> String {
        serde_json::to_string(&crate::api::LegalMoves {
            ply: game.ply(),
            turn: game.rules().turn(),
            moves: if game.is_finished() {
                Vec::new()
            } else {
                game.rules().legal_moves()
            },
        })
        .unwrap()
    }

    #[test]
    fn the_legal_moves_answer_is_the_serialized_dto() {
        for kind in GameKind::ALL {
            let state = AnyState::new(kind, Variants::NONE, None).unwrap();
            let tokens = [SeatToken::generate(), SeatToken::generate()];
            let mut game =
                StoredGame::create(GameId::new_random(), state, None, [None; 2], &tokens, 1_000);
            for ply in 0..16u64 {
                let answer = Loaded::new(game.clone()).legal_moves_json().to_string();
                assert_eq!(answer, serialized(&game), "{kind} at ply {ply}");
                let moves = game.rules().legal_moves();
                assert!(!moves.is_empty(), "{kind} at ply {ply} has moves");
                let mv = &moves[(ply as usize * 7) % moves.len()];
                game.play(game.rules().turn(), mv, 2_000 + ply, 2000)
                    .unwrap();
            }
            game.resign(Player::P1, 9_999).unwrap();
            let answer = Loaded::new(game.clone()).legal_moves_json().to_string();
            assert_eq!(answer, serialized(&game), "{kind} over");
            assert!(answer.ends_with(r#""moves":[]}"#), "{answer}");
        }
    }
}
