//! Iterative-deepening principal-variation search (negamax alpha-beta) with a transposition
//! table, killer and history move ordering, mate-distance pruning and multi-PV at the root.
//!
//! Generic over [`Searchable`]; games that forbid repetition get their path of positions
//! checked, so the search never plays or expects an illegal repetition. Proven results come
//! out as exact win/loss distances: a position searched deeply enough is solved.

use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use super::eval::Searchable;
use super::limits::{CHECK_EVERY, Caps, Clock, Limit, MAX_PLY};
use super::move_picker::Ordering;
use super::score::{INFINITY, PROVEN, Score, WIN};
use super::tt::{Bound, Table, from_tt};
use crate::rules::{Game, MoveList, Winner};

/// What a search is asked to do.
pub struct Params<'a> {
    pub limit: Limit,
    pub caps: Caps,
    /// How many best moves to report (1 for plain play).
    pub multipv: usize,
    pub clock: &'a dyn Clock,
    /// Set from outside to stop the search early.
    pub stop: Option<&'a AtomicBool>,
    /// The transposition table holds `2^tt_bits` entries.
    pub tt_bits: u32,
    /// How much worse than an even position a draw is for the side to move at the root (0 for
    /// analysis; players use a little, so as not to settle for draws against weaker opponents).
    pub contempt: i32,
}

/// One of the best moves, with its score and the line that follows.
#[derive(Clone, Debug, PartialEq)]
pub struct Line<M> {
    pub mv: M,
    pub score: Score,
    pub pv: Vec<M>,
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Report<M> {
    /// The best line first; empty when the position has no legal move.
    pub lines: Vec<Line<M>>,
    /// The score of the position itself (for a finished game, its result).
    pub score: Score,
    /// The last fully searched depth.
    pub depth: u32,
    pub nodes: u64,
    pub time_ms: u64,
}

impl<M: Copy> Report<M> {
    pub fn best(&self) -> Option<M> {
        self.lines.first().map(|l| l.mv)
    }
}

struct Searcher<'a, G: Searchable> {
    tt: Table<G::Move>,
    ordering: Ordering<G::Move>,
    pv: Vec<Vec<G::Move>>,
    buffers: Vec<MoveList<G::Move>>,
    /// Repetition keys of the game's positions and of the current search path.
    keys: Vec<u64>,
    nodes: u64,
    node_budget: u64,
    time_budget: u64,
    clock: &'a dyn Clock,
    stop: Option<&'a AtomicBool>,
    stopped: bool,
    contempt: i32,
}

/// The score of a position with no moves (or a finished one) at `ply` from the root, for its
/// side to move; `contempt` is the root side's dislike of draws.
fn terminal<G: Game>(pos: &G, ply: u32, contempt: i32) -> i32 {
    let mated = -(WIN - ply as i32);
    match pos.outcome() {
        Some(o) => match o.winner {
            Winner::Player(p) if p == pos.turn() => -mated,
            Winner::Player(_) => mated,
            Winner::Draw if ply.is_multiple_of(2) => -contempt,
            Winner::Draw => contempt,
        },
        // Legal moves exist, but every one repeats a position: no move, so a loss.
        None => mated,
    }
}

impl<'a, G: Searchable> Searcher<'a, G> {
    fn check_limits(&mut self) {
        if self.nodes.is_multiple_of(CHECK_EVERY)
            && (self.nodes >= self.node_budget
                || self.clock.elapsed_ms() >= self.time_budget
                || self.stop.is_some_and(|s| s.load(AtomicOrdering::Relaxed)))
        {
            self.stopped = true;
        }
    }

    fn negamax(&mut self, pos: &G, mut depth: u32, ply: u32, mut alpha: i32, mut beta: i32) -> i32 {
        self.nodes += 1;
        self.check_limits();
        let p = ply as usize;
        self.pv[p].clear();
        if self.stopped {
            return 0;
        }
        if depth == 0 || ply >= MAX_PLY {
            if pos.outcome().is_some() {
                return terminal(pos, ply, self.contempt);
            }
            if !pos.wins_now() || ply >= MAX_PLY {
                return pos.evaluate();
            }
            // A win on the spot at the horizon: look one ply further to play it out.
            depth = 1;
        }
        // Nothing here can beat a win next move or be worse than a loss right now.
        alpha = alpha.max(-(WIN - ply as i32));
        beta = beta.min(WIN - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }
        let key = pos.hash();
        let entry = self.tt.probe(key);
        // Table cut-offs only off the principal variation, so that the PV is played out.
        let pv_node = beta - alpha > 1;
        if let Some(e) = entry
            && u32::from(e.depth) >= depth
            && !pv_node
        {
            let score = from_tt(e.score, ply);
            match e.bound {
                Bound::Exact => return score,
                Bound::Lower => alpha = alpha.max(score),
                Bound::Upper => beta = beta.min(score),
            }
            if alpha >= beta {
                return score;
            }
        }

        let mut moves = std::mem::take(&mut self.buffers[p]);
        moves.clear();
        pos.legal_moves(&mut moves);
        self.ordering
            .sort(&mut moves, p, entry.and_then(|e| e.best), G::move_slot);
        if G::FORBIDS_REPETITION {
            self.keys.push(pos.repetition_key());
        }
        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut best_move = None;
        let mut searched = 0;
        for (i, mv) in moves.iter().enumerate() {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            if G::FORBIDS_REPETITION && self.keys.contains(&child.repetition_key()) {
                continue;
            }
            searched += 1;
            let score = if i == 0 || searched == 1 {
                -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha)
            } else {
                let probe = -self.negamax(&child, depth - 1, ply + 1, -alpha - 1, -alpha);
                if probe > alpha && probe < beta {
                    -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha)
                } else {
                    probe
                }
            };
            if self.stopped {
                break;
            }
            if score > best {
                best = score;
                best_move = Some(*mv);
                if score > alpha {
                    alpha = score;
                    let (head, tail) = self.pv.split_at_mut(p + 1);
                    head[p].clear();
                    head[p].push(*mv);
                    head[p].extend_from_slice(&tail[0]);
                    if alpha >= beta {
                        self.ordering.reward(*mv, G::move_slot(mv), p, depth);
                        break;
                    }
                }
            }
        }
        if G::FORBIDS_REPETITION {
            self.keys.pop();
        }
        self.buffers[p] = moves;
        if self.stopped {
            return 0;
        }
        if searched == 0 {
            return terminal(pos, ply, self.contempt);
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(key, best_move, best, depth, bound, ply);
        best
    }
}

/// Searches `pos`, whose game went through positions with repetition keys `history` before it.
pub fn search<G: Searchable>(pos: &G, history: &[u64], params: &Params<'_>) -> Report<G::Move> {
    let (max_depth, node_budget, time_budget) = params.caps.budget(params.limit);
    let mut s = Searcher {
        tt: Table::new(params.tt_bits),
        ordering: Ordering::new(MAX_PLY as usize + 1, G::MOVE_SLOTS),
        pv: vec![Vec::new(); MAX_PLY as usize + 2],
        buffers: vec![MoveList::new(); MAX_PLY as usize + 2],
        keys: history.to_vec(),
        nodes: 0,
        node_budget,
        time_budget,
        clock: params.clock,
        stop: params.stop,
        stopped: false,
        contempt: params.contempt,
    };
    let mut root_moves = MoveList::new();
    pos.legal_moves(&mut root_moves);
    if G::FORBIDS_REPETITION {
        s.keys.push(pos.repetition_key());
        root_moves.retain(|mv| {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            !s.keys.contains(&child.repetition_key())
        });
    }
    if root_moves.is_empty() {
        return Report {
            lines: Vec::new(),
            score: Score::from_internal(terminal(pos, 0, 0)),
            depth: 0,
            nodes: 1,
            time_ms: params.clock.elapsed_ms(),
        };
    }
    let multipv = params.multipv.clamp(1, root_moves.len());
    // (move, score, pv) from the last completed iteration, best first.
    let mut ranked: Vec<(G::Move, i32, Vec<G::Move>)> = root_moves
        .iter()
        .map(|m| (*m, -INFINITY, Vec::new()))
        .collect();
    let mut completed = 0;
    for depth in 1..=max_depth {
        let mut this: Vec<(G::Move, i32, Vec<G::Move>)> = Vec::with_capacity(ranked.len());
        for (i, (mv, _, _)) in ranked.iter().enumerate() {
            let mut scores: Vec<i32> = this.iter().map(|t| t.1).collect();
            scores.sort_unstable_by(|a, b| b.cmp(a));
            let alpha = if scores.len() >= multipv {
                scores[multipv - 1]
            } else {
                -INFINITY
            };
            let mut child = pos.clone();
            child.play_unchecked(mv);
            s.nodes += 1;
            let score = if i == 0 || alpha == -INFINITY {
                -s.negamax(&child, depth - 1, 1, -INFINITY, -alpha)
            } else {
                let probe = -s.negamax(&child, depth - 1, 1, -alpha - 1, -alpha);
                if probe > alpha {
                    -s.negamax(&child, depth - 1, 1, -INFINITY, -alpha)
                } else {
                    probe
                }
            };
            if s.stopped {
                break;
            }
            let mut line = vec![*mv];
            line.extend_from_slice(&s.pv[1]);
            this.push((*mv, score, line));
        }
        if s.stopped {
            break;
        }
        this.sort_by_key(|t| std::cmp::Reverse(t.1));
        ranked = this;
        completed = depth;
        let top = &ranked[..multipv];
        let all_proven = top.iter().all(|t| t.1.abs() > PROVEN);
        let elapsed = params.clock.elapsed_ms();
        if all_proven
            || root_moves.len() == 1
            || (matches!(params.limit, Limit::MovetimeMs(_)) && elapsed * 2 >= time_budget)
        {
            break;
        }
    }
    if completed == 0 {
        // Not even depth 1 finished: fall back to the first move in generation order.
        ranked.truncate(1);
        ranked[0].1 = pos.evaluate();
        ranked[0].2 = vec![ranked[0].0];
    }
    let lines: Vec<Line<G::Move>> = ranked
        .into_iter()
        .take(multipv)
        .map(|(mv, score, pv)| Line {
            mv,
            score: Score::from_internal(score),
            pv,
        })
        .collect();
    Report {
        score: lines[0].score,
        lines,
        depth: completed,
        nodes: s.nodes,
        time_ms: params.clock.elapsed_ms(),
    }
}
