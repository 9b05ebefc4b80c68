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
    /// What this weighs in the cache, fixed when it is made: the cache must find an entry as
    /// heavy when it leaves as when it came in.
    weight: usize,
}

impl Loaded {
    pub fn new(game: StoredGame) -> Arc<Loaded> {
        Arc::new(Loaded::weighed(game, OnceLock::new()))
    }

    /// `game` with its legal-moves answer made (and weighed) before anyone shares it.
    pub fn with_legal_moves(game: StoredGame) -> Arc<Loaded> {
        let legal_moves = OnceLock::from(legal_moves_answer(&game));
        Arc::new(Loaded::weighed(game, legal_moves))
    }

    fn weighed(game: StoredGame, legal_moves: OnceLock<String>) -> Loaded {
        // The `Arc`'s two counts, what `Loaded` adds to the game, and the answer if made.
        let weight = 2 * std::mem::size_of::<usize>() + std::mem::size_of::<Loaded>()
            - std::mem::size_of::<StoredGame>()
            + game.weight()
            + legal_moves.get().map_or(0, |json| json.capacity() + 16);
        Loaded {
            game,
            legal_moves,
            weight,
        }
    }

    /// About how many bytes this holds (see [`StoredGame::weight`]), its legal-moves answer
    /// included if it was made with it ([`Loaded::with_legal_moves`]).
    pub fn weight(&self) -> usize {
        self.weight
    }

    /// Whether the legal-moves answer is made already.
    pub fn has_legal_moves(&self) -> bool {
        self.legal_moves.get().is_some()
    }

    /// The legal-moves answer (JSON), computed at most once per version. The moves' names are
    /// written straight into it (the same bytes as serializing [`crate::api::LegalMoves`],
    /// without a string per move).
    pub fn legal_moves_json(&self) -> &str {
        self.legal_moves
            .get_or_init(|| legal_moves_answer(&self.game))
    }
}

/// `game`'s legal-moves answer (see [`Loaded::legal_moves_json`]).
fn legal_moves_answer(game: &StoredGame) -> String {
    serde_json::to_string(&LegalMovesRef {
        ply: game.ply(),
        turn: game.rules().turn(),
        moves: Names((!game.is_finished()).then(|| game.rules())),
    })
    .expect("legal moves serialize")
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

    /// Keeps `loaded` unless a newer version of the game is cached already (replacing one of
    /// the same version: one made with its legal-moves answer replaces one without).
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

    /// quick_cache keeps a running sum of its entries' weights: an entry must weigh the same
    /// when it leaves as when it came in, whatever was asked of it meanwhile.
    #[test]
    fn the_cache_weighs_an_entry_the_same_coming_and_going() {
        let state = AnyState::new(GameKind::Pilastri, Variants::NONE, None).unwrap();
        let tokens = [SeatToken::generate(), SeatToken::generate()];
        let game = StoredGame::create(GameId::new_random(), state, None, [None; 2], &tokens, 1);
        let cache = GameCache::new(1 << 20);
        let held = || cache.games.as_ref().unwrap().weight();
        let bare = Loaded::new(game.clone());
        cache.put(&bare);
        assert_eq!(held(), bare.weight() as u64);
        // Asked of the cached entry itself: its weight stays.
        bare.legal_moves_json();
        assert_eq!(bare.weight(), Loaded::new(game.clone()).weight());
        let answered = Loaded::with_legal_moves(game.clone());
        assert!(
            answered.weight() > bare.weight() + 100,
            "the answer is weighed"
        );
        cache.put(&answered);
        assert_eq!(held(), answered.weight() as u64);
        cache.forget(game.id());
        assert_eq!(held(), 0);
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
