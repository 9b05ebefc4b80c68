//! Plain UCT: Monte-Carlo tree search with UCB1 selection and uniformly random playouts.

use rand::Rng;
use rand::rngs::SmallRng;

use crate::engine::limits::Clock;
use crate::rules::record::Record;
use crate::rules::{Game, MoveList, Player, Winner};

/// The exploration constant of UCB1.
const EXPLORATION: f64 = 1.4;
/// Playouts longer than this are scored as draws.
const MAX_PLAYOUT: usize = 300;

struct Node<M> {
    mv: Option<M>,
    /// Who played `mv` (the player the node's wins are counted for).
    mover: Player,
    children: Vec<usize>,
    untried: Vec<M>,
    visits: f64,
    wins: f64,
}

/// 1 for a win of `player`, 0.5 for a draw (or an over-long playout), 0 for a loss.
fn reward(winner: Option<Winner>, player: Player) -> f64 {
    match winner {
        Some(Winner::Player(p)) if p == player => 1.0,
        Some(Winner::Player(_)) => 0.0,
        _ => 0.5,
    }
}

fn playout<G: Game>(
    mut pos: G,
    rng: &mut SmallRng,
    moves: &mut MoveList<G::Move>,
) -> Option<Winner> {
    for _ in 0..MAX_PLAYOUT {
        moves.clear();
        pos.legal_moves(moves);
        if moves.is_empty() {
            return pos.outcome().map(|o| o.winner);
        }
        let mv = moves[rng.random_range(0..moves.len())];
        pos.play_unchecked(&mv);
    }
    None
}

pub fn choose<G: Game>(
    record: &Record<G>,
    root_moves: &[G::Move],
    movetime_ms: u64,
    clock: &dyn Clock,
    rng: &mut SmallRng,
) -> G::Move {
    let root_pos = record.position().clone();
    let mut tree: Vec<Node<G::Move>> = vec![Node {
        mv: None,
        mover: root_pos.turn().other(),
        children: Vec::new(),
        untried: root_moves.to_vec(),
        visits: 0.0,
        wins: 0.0,
    }];
    let mut scratch = MoveList::new();
    let mut iterations = 0u64;
    loop {
        if iterations.is_multiple_of(64) && clock.elapsed_ms() >= movetime_ms {
            break;
        }
        iterations += 1;
        // Selection.
        let mut path = vec![0usize];
        let mut pos = root_pos.clone();
        let mut node = 0;
        while tree[node].untried.is_empty() && !tree[node].children.is_empty() {
            let parent_visits = tree[node].visits.max(1.0).ln();
            node = *tree[node]
                .children
                .iter()
                .max_by(|&&a, &&b| {
                    let ucb = |i: usize| {
                        let n = &tree[i];
                        n.wins / n.visits + EXPLORATION * (parent_visits / n.visits).sqrt()
                    };
                    ucb(a).total_cmp(&ucb(b))
                })
                .expect("children");
            pos.play_unchecked(&tree[node].mv.expect("a child has a move"));
            path.push(node);
        }
        // Expansion.
        if !tree[node].untried.is_empty() {
            let i = rng.random_range(0..tree[node].untried.len());
            let mv = tree[node].untried.swap_remove(i);
            let mover = pos.turn();
            pos.play_unchecked(&mv);
            scratch.clear();
            pos.legal_moves(&mut scratch);
            tree.push(Node {
                mv: Some(mv),
                mover,
                children: Vec::new(),
                untried: scratch.clone(),
                visits: 0.0,
                wins: 0.0,
            });
            let child = tree.len() - 1;
            tree[node].children.push(child);
            path.push(child);
        }
        // Simulation and back-propagation.
        let winner = playout(pos, rng, &mut scratch);
        for &n in &path {
            tree[n].visits += 1.0;
            tree[n].wins += reward(winner, tree[n].mover);
        }
    }
    let best = tree[0]
        .children
        .iter()
        .max_by(|&&a, &&b| tree[a].visits.total_cmp(&tree[b].visits));
    match best {
        Some(&child) => tree[child].mv.expect("a child has a move"),
        None => root_moves[0],
    }
}
