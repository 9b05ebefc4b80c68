//! A game's id: a UUID, parsed once at the edge.

use std::fmt;

use uuid::Uuid;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GameId(Uuid);

impl GameId {
    pub fn new_random() -> GameId {
        GameId(Uuid::new_v4())
    }

    /// `None` for anything that is not a UUID (such a game cannot exist).
    pub fn parse(s: &str) -> Option<GameId> {
        Uuid::parse_str(s).ok().map(GameId)
    }
}

impl fmt::Display for GameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}
