//! Which game, with which variants: the names the API, the CLI and the notation share. Below
//! the games themselves (a game's start depends on its variants), so it knows nothing of
//! positions or moves.

use std::fmt;

/// The four games the service plays. In JSON (and the OpenAPI document) it is the game's
/// lowercase name, a closed set.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    Pillarz,
    Pilastri,
    Pyrga,
    Alcazar,
}

impl GameKind {
    pub const ALL: [GameKind; 4] = [
        GameKind::Pillarz,
        GameKind::Pilastri,
        GameKind::Pyrga,
        GameKind::Alcazar,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            GameKind::Pillarz => "pillarz",
            GameKind::Pilastri => "pilastri",
            GameKind::Pyrga => "pyrga",
            GameKind::Alcazar => "alcazar",
        }
    }

    /// The variants this game accepts.
    pub const fn supported_variants(self) -> &'static [Variant] {
        match self {
            GameKind::Pilastri => &[Variant::Size8, Variant::Jumpers],
            _ => &[],
        }
    }

    /// Checks a list of variant names against this game.
    pub fn variants<S: AsRef<str>>(self, names: &[S]) -> Result<Variants, VariantError> {
        let list = names
            .iter()
            .map(|name| Variant::parse(name.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        self.with_variants(&list)
    }

    /// Checks a list of variants against this game.
    pub fn with_variants(self, list: &[Variant]) -> Result<Variants, VariantError> {
        let mut variants = Variants::NONE;
        for &variant in list {
            if !self.supported_variants().contains(&variant) {
                return Err(VariantError::Unsupported {
                    game: self,
                    variant,
                });
            }
            variants = variants.with(variant);
        }
        Ok(variants)
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown game {0:?} (expected pillarz, pilastri, pyrga or alcazar)")]
pub struct ParseGameKindError(pub String);

impl std::str::FromStr for GameKind {
    type Err = ParseGameKindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        GameKind::ALL
            .into_iter()
            .find(|g| g.as_str() == lower)
            .ok_or_else(|| ParseGameKindError(s.to_string()))
    }
}

/// A rules variant.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
pub enum Variant {
    /// Pilastri on an 8×8 board.
    #[serde(rename = "size-8")]
    Size8,
    /// Pilastri's "High jumpers": grounded pieces may land on any stack.
    #[serde(rename = "jumpers")]
    Jumpers,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Size8, Variant::Jumpers];

    pub const fn as_str(self) -> &'static str {
        match self {
            Variant::Size8 => "size-8",
            Variant::Jumpers => "jumpers",
        }
    }

    pub fn parse(s: &str) -> Result<Variant, VariantError> {
        let lower = s.trim().to_ascii_lowercase();
        Variant::ALL
            .into_iter()
            .find(|v| v.as_str() == lower)
            .ok_or_else(|| VariantError::Unknown(s.to_string()))
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of variants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Variants(u8);

impl Variants {
    pub const NONE: Variants = Variants(0);

    pub const fn with(self, v: Variant) -> Variants {
        Variants(self.0 | v.bit())
    }

    pub const fn contains(self, v: Variant) -> bool {
        self.0 & v.bit() != 0
    }

    pub fn iter(self) -> impl Iterator<Item = Variant> {
        Variant::ALL.into_iter().filter(move |v| self.contains(*v))
    }

    /// The variant names, in a fixed order.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Variant::as_str).collect()
    }
}

/// A variant name that is unknown, or a variant the game does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VariantError {
    #[error("unknown variant {0:?} (expected size-8 or jumpers)")]
    Unknown(String),
    #[error("{game} has no variant {variant}")]
    Unsupported { game: GameKind, variant: Variant },
}
