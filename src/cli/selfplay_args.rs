//! The arguments every self-play generator takes (`pillarz datagen`, `pillarz nnue gen`): how
//! the engine plays and how games open, checked once into a [`SelfPlayConfig`].

use crate::engine::Limit;
use crate::engine::selfplay::SelfPlayConfig;

use super::CliError;

#[derive(Debug, clap::Args)]
pub struct SelfPlayArgs {
    /// The engine's limit per move: `5000n` nodes, `d4` plies (a time would not be reproducible).
    #[arg(long, default_value = "5000n")]
    limit: String,
    /// The fewest random plies that open a game.
    #[arg(long, default_value_t = 2)]
    random_min: usize,
    /// The most random plies that open a game.
    #[arg(long, default_value_t = 6)]
    random_max: usize,
    /// The seed of the random openings: the same seed plays the same games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl SelfPlayArgs {
    pub fn validate(&self) -> Result<SelfPlayConfig, CliError> {
        let usage = CliError::Usage;
        let limit = Limit::parse_short(&self.limit).map_err(|e| usage(e.to_string()))?;
        if matches!(limit, Limit::MovetimeMs(_)) {
            return Err(usage("--limit must be a node count or a depth".into()));
        }
        if self.random_min > self.random_max {
            return Err(usage("--random-min is above --random-max".into()));
        }
        Ok(SelfPlayConfig {
            limit,
            random_plies: (self.random_min, self.random_max),
            seed: self.seed,
        })
    }
}
