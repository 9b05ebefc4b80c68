//! A learned evaluation for pillarz (NNUE): a small network over the board's heights and
//! pawns, trained on positions from the engine's own self-play.
//!
//! Hand-written terms see a won pillarz position only a few plies before the search proves it;
//! a network fitted to self-play results sees it earlier. The pieces, one file each:
//! [`features`] (what the network sees), [`sample`] (training positions on disk), [`generate`]
//! (self-play data), [`train`] (the trainer), [`network`] (quantised integer inference, and
//! the network compiled into the binary) and [`accumulator`] (inference updated move by move).

pub mod accumulator;
pub mod features;
pub mod generate;
pub mod network;
pub mod sample;
pub mod train;

use std::sync::OnceLock;

use network::Network;

/// The network every search of this process uses: the one compiled into the binary (see the
/// README for how it was made), unless [`install`] put another one first.
static NETWORK: OnceLock<Network> = OnceLock::new();

fn network() -> &'static Network {
    NETWORK.get_or_init(|| {
        Network::from_bytes(include_bytes!("pillarz.nnue")).expect("the compiled-in network loads")
    })
}

/// Makes `net` the network of this process instead of the compiled-in one (to measure a new
/// network before compiling it in: `pillarz --network FILE …`). Only before any evaluation:
/// afterwards the network is fixed, and `false` says this one was refused.
pub fn install(net: Network) -> bool {
    NETWORK.set(net).is_ok()
}

/// The network's evaluation of a position that is not over, from the side to move's view,
/// summed from scratch: the reference the tests hold the search's incremental
/// [`accumulator::Accumulators`] to.
#[cfg(test)]
pub fn evaluate(pos: &crate::rules::pillarz::Position) -> i32 {
    use crate::rules::Game;
    network().evaluate(features::active_for(pos, pos.turn()).as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_in_network_loads() {
        assert!(network().scale() > 0);
    }
}
