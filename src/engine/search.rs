//! Iterative-deepening principal-variation search (negamax alpha-beta), generic over
//! [`Searchable`].
//!
//! Per node: a win on the spot is taken at once; a side facing a win on the spot searches only
//! the moves that stop it, one ply deeper (the threat extension); at the horizon a threat-only
//! quiescence resolves such threats, and (in games with threats, [`Searchable::THREATS`]) tries
//! the moves that make one. Where the game allows it ([`Searchable::prunes`]: everywhere but in
//! Pyrga's last plies, which are solved exactly), reverse futility cuts positions already far above beta off the
//! principal variation, late quiet moves are searched with reduced depth first (late-move
//! reductions), near the horizon late quiet moves, and quiet moves that cannot lift a hopeless
//! evaluation to alpha, are not searched at all (late-move and futility pruning), and nodes
//! without a table move one ply shallower (internal iterative reduction). A null move was tried
//! for pillarz and lost a match twice, with the hand-written evaluation and with the network
//! (passing is often the best "move" there, so it proves little). A bucketed transposition
//! table and the move history are kept by an [`Engine`] from one search to the next.
//!
//! In a game of bounded length ([`Searchable::plies_left`]) searched without pruning, an
//! iteration as deep as the game can last sees every line to its end: its scores are exact, so
//! a draw is reported as a proven [`Score::Draw`] and the search ends there.
//!
//! A game may also end by a limit that is not in its rules: the service draws a game at its
//! ply cap ([`Params::plies_to_limit`]). A line that reaches it is a draw (unless its last move
//! ended the game by the rules, which come first), so no win or loss that only lands beyond it
//! is claimed. Scores near the limit depend on how far off it is, so within reach of it the
//! table is keyed by that distance as well: what an engine kept from a search without the
//! limit, or with it farther off, is never taken for a position near it.
//!
//! Proven results stay exact: a node that skipped a move without a proof that it loses (the
//! moves that leave a win on the spot are proven) never reports a proven loss, pruning only
//! ever returns heuristic bounds, and games
//! that forbid repetition key their table by the set of positions on the path as well, since
//! which moves are legal there depends on it.

use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use super::eval::{Eval, Incremental, Searchable};
use super::limits::{CHECK_EVERY, Caps, Clock, Limit, MAX_PLY};
use super::move_picker::{Ordering, Ranked, pick, sort_all};
use super::score::{INFINITY, PROVEN, Score, WIN};
use super::tt::{Bound, Table, from_tt};
use crate::rules::state::{repeats, retain_unrepeated};
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
    /// The transposition table holds `2^tt_bits` entries (for [`search`]; an [`Engine`] keeps
    /// the table it was made with).
    pub tt_bits: u32,
    /// How much worse than an even position a draw is for the side to move at the root (0 for
    /// analysis; players use a little, so as not to settle for draws against weaker opponents).
    pub contempt: i32,
    /// The game ends as a draw once this many more plies are played (the service's ply cap,
    /// not a rule); `None` when nothing but the rules ends it.
    pub plies_to_limit: Option<u32>,
}

/// The table size of a one-off [`search`] and of the engine an engine seat thinks with: `2^18`
/// entries.
pub const TT_BITS: u32 = 18;
/// The contempt of a player: a draw counts this much (about a fifth of a pawn-level) below
/// an even position, so as not to settle for draws against weaker opponents.
pub const PLAYER_CONTEMPT: i32 = 20;

impl<'a> Params<'a> {
    /// Analysis: the best line under `limit`, uncapped, unstoppable, a draw worth exactly an
    /// even position. Callers change what differs with struct update syntax.
    pub fn analysis(limit: Limit, clock: &'a dyn Clock) -> Params<'a> {
        Params {
            limit,
            caps: Caps::NONE,
            multipv: 1,
            clock,
            stop: None,
            tt_bits: TT_BITS,
            contempt: 0,
            plies_to_limit: None,
        }
    }

    /// Play: analysis with a player's [`PLAYER_CONTEMPT`].
    pub fn play(limit: Limit, clock: &'a dyn Clock) -> Params<'a> {
        Params {
            contempt: PLAYER_CONTEMPT,
            ..Params::analysis(limit, clock)
        }
    }
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
    /// The best line first, up to `multipv` of them (fewer when the search stopped before
    /// depth 1 was done: only the moves it searched); empty when the position has no legal
    /// move.
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

/// A root move with what the last search of it found.
#[derive(Clone, Debug)]
struct RootMove<M> {
    mv: M,
    /// Internal score (see [`super::score`]).
    score: i32,
    /// Whether `score` is the move's value rather than a bound (it beat the window's floor).
    exact: bool,
    pv: Vec<M>,
}

/// The deepest the horizon's threat search goes.
const QUIESCENCE_PLIES: u32 = 8;
/// In games with threats ([`Searchable::THREATS`]), the horizon's first ply also tries the
/// moves that make a threat (+70 ± 49 Elo for pillarz at 20,000 nodes, 200 games; +92 ± 71 at
/// 50 ms, 100 games); letting the side make a second threat after a block gained less (+42).
const THREAT_PLIES: u32 = 1;
/// Reverse futility: a position this far above beta per remaining ply is cut. 60 rather than
/// the hand-written evaluation's 110 since the network: +228 −172 at 20,000 nodes (400 games,
/// +49 ± 34 Elo), +106 −94 at 100 ms (200 games, +21 ± 48).
const FUTILITY_MARGIN: i32 = 60;
const FUTILITY_DEPTH: i32 = 6;
/// Late-move reductions start with the move after this many, from this depth.
const LMR_AFTER: usize = 2;
const LMR_DEPTH: i32 = 3;
/// Internal iterative reduction: a node this deep without a table move searches one ply less.
const IIR_DEPTH: i32 = 4;
/// Late-move pruning: at this depth or less, quiet moves after the first `LMP_BASE + d²` are
/// not searched.
const LMP_DEPTH: i32 = 3;
const LMP_BASE: usize = 4;
/// Futility pruning: at this depth or less, quiet moves are not searched when the static
/// evaluation plus this margin per ply cannot reach alpha.
const FUTILITY_PRUNE_DEPTH: i32 = 2;
const FUTILITY_PRUNE_MARGIN: i32 = 120;

/// How many plies a late quiet move is reduced by: grows with both depth and move number,
/// and more steeply in a game with a smaller [`Searchable::LMR_DIVISOR`].
fn reduction<G: Searchable>(depth: i32, searched: usize) -> i32 {
    let r = 0.75 + (depth as f64).ln() * (searched as f64).ln() / G::LMR_DIVISOR;
    r as i32
}

/// A search engine for one game: its table and move history, kept between searches (the moves
/// of one game), cleared by [`Engine::new_game`].
pub struct Engine<G: Searchable> {
    tt: Table<G::Move>,
    ordering: Ordering<G::Move>,
    incremental: Incremental<G>,
    eval: Eval,
}

impl<G: Searchable> Engine<G> {
    /// An engine whose table holds `2^tt_bits` entries, with the game's default evaluation.
    pub fn new(tt_bits: u32) -> Engine<G> {
        Engine::with_eval(tt_bits, G::DEFAULT_EVAL)
    }

    /// An engine that evaluates with `eval` (the hand-written one where the game has no
    /// network).
    pub fn with_eval(tt_bits: u32, eval: Eval) -> Engine<G> {
        Engine {
            tt: Table::new(tt_bits),
            ordering: Ordering::new(MAX_PLY as usize + 1, G::MOVE_SLOTS),
            // Only a network keeps accumulators.
            incremental: Incremental::new(match eval {
                Eval::Hand => 0,
                Eval::Network => MAX_PLY as usize + 2,
            }),
            eval,
        }
    }

    /// Forgets everything learned (a new game).
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.ordering.clear();
    }

    /// Searches `pos`, whose game went through positions with repetition keys `history`.
    pub fn search(&mut self, pos: &G, history: &[u64], params: &Params<'_>) -> Report<G::Move> {
        self.tt.new_search();
        self.ordering.new_search();
        let (max_depth, node_budget, time_budget) = params.caps.budget(params.limit);
        if self.eval == Eval::Network {
            self.incremental.root(pos);
        }
        let mut s = Searcher {
            tt: &mut self.tt,
            ordering: &mut self.ordering,
            incremental: &mut self.incremental,
            pv: vec![Vec::new(); MAX_PLY as usize + 2],
            buffers: vec![MoveList::new(); MAX_PLY as usize + 2],
            ranked: vec![Vec::new(); MAX_PLY as usize + 2],
            quiets: vec![MoveList::new(); MAX_PLY as usize + 2],
            keys: Vec::with_capacity(history.len() + MAX_PLY as usize + 1),
            path_key: 0,
            nodes: 0,
            node_budget,
            time_budget,
            clock: params.clock,
            stop: params.stop,
            stopped: false,
            contempt: params.contempt,
            limit_ply: params.plies_to_limit.unwrap_or(u32::MAX),
            eval: self.eval,
        };
        for key in history {
            s.enter(*key);
        }
        s.root(pos, max_depth, params)
    }
}

/// Searches `pos` with a fresh engine (nothing kept from earlier searches).
pub fn search<G: Searchable>(pos: &G, history: &[u64], params: &Params<'_>) -> Report<G::Move> {
    Engine::new(params.tt_bits).search(pos, history, params)
}

struct Searcher<'a, G: Searchable> {
    tt: &'a mut Table<G::Move>,
    ordering: &'a mut Ordering<G::Move>,
    incremental: &'a mut Incremental<G>,
    pv: Vec<Vec<G::Move>>,
    buffers: Vec<MoveList<G::Move>>,
    /// Per ply, the moves of `buffers` ranked for [`pick`].
    ranked: Vec<Vec<Ranked<G::Move>>>,
    /// Per ply, the quiet moves tried before a cut-off (they lose history).
    quiets: Vec<MoveList<G::Move>>,
    /// Repetition keys of the game's positions and of the current search path.
    keys: Vec<u64>,
    /// For games that forbid repetition: a hash of the set `keys`, mixed into table keys.
    path_key: u64,
    nodes: u64,
    node_budget: u64,
    time_budget: u64,
    clock: &'a dyn Clock,
    stop: Option<&'a AtomicBool>,
    stopped: bool,
    contempt: i32,
    /// The ply from the root at which the game ends by the limit ([`Params::plies_to_limit`];
    /// `u32::MAX` for none).
    limit_ply: u32,
    eval: Eval,
}

/// A repetition key spread out before it joins the path hash (so that it cannot cancel the
/// position's own Zobrist hash).
fn mix(key: u64) -> u64 {
    (key ^ (key >> 29))
        .wrapping_mul(0xbf58_476d_1ce4_e5b9)
        .rotate_left(31)
}

/// Salts the table keys of positions within reach of the limit with their distance to it.
const LIMIT_SALT: u64 = 0x6c69_6d69_7470_6c79;

/// The score of a draw at `ply` from the root, for the side to move there; `contempt` is the
/// root side's dislike of draws.
fn drawn(ply: u32, contempt: i32) -> i32 {
    if ply.is_multiple_of(2) {
        -contempt
    } else {
        contempt
    }
}

/// The score of a position with no moves (or a finished one) at `ply` from the root, for its
/// side to move; `contempt` is the root side's dislike of draws.
fn terminal<G: Game>(pos: &G, ply: u32, contempt: i32) -> i32 {
    let mated = -(WIN - ply as i32);
    match pos.outcome() {
        Some(o) => match o.winner {
            Winner::Player(p) if p == pos.turn() => -mated,
            Winner::Player(_) => mated,
            Winner::Draw => drawn(ply, contempt),
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

    /// The static evaluation this search uses of `pos`, the path's position at `ply`.
    #[inline]
    fn evaluate(&mut self, pos: &G, ply: u32) -> i32 {
        match self.eval {
            Eval::Hand => pos.evaluate(),
            Eval::Network => self.incremental.evaluate(ply as usize),
        }
    }

    /// The child `mv` leads to from `pos`, the path's position at `ply`; it becomes the path's
    /// position at `ply + 1` (for the accumulators).
    #[inline]
    fn make(&mut self, pos: &G, mv: &G::Move, ply: u32) -> G {
        let mut child = pos.clone();
        child.play_unchecked(mv);
        self.tt.prefetch(self.table_key(&child, ply + 1));
        if self.eval == Eval::Network {
            self.incremental.push(ply as usize + 1, &child);
        }
        child
    }

    /// Pushes a position onto the path (games that forbid repetition only).
    fn enter(&mut self, key: u64) {
        if G::FORBIDS_REPETITION {
            self.keys.push(key);
            self.path_key ^= mix(key);
        }
    }

    fn leave(&mut self) {
        if G::FORBIDS_REPETITION
            && let Some(key) = self.keys.pop()
        {
            self.path_key ^= mix(key);
        }
    }

    /// The table key of `pos` at `ply` from the root.
    #[inline]
    fn table_key(&self, pos: &G, ply: u32) -> u64 {
        let key = pos.hash() ^ self.path_key;
        // A search from any root reaches at most MAX_PLY plies further: a position farther
        // from the limit scores as if there were none.
        match self.limit_ply.checked_sub(ply) {
            Some(left) if left <= MAX_PLY => key ^ mix(LIMIT_SALT ^ u64::from(left)),
            _ => key,
        }
    }

    /// Whether `score` (from the root's side) claims an end the limit comes before: a proof
    /// from the table that was found farther from the limit than its keys can tell (a
    /// position that paths of different lengths reach, as in Pilastri).
    #[inline]
    fn beyond_limit(&self, score: i32) -> bool {
        score.abs() > PROVEN && (WIN - score.abs()) as u32 > self.limit_ply
    }

    /// A position at the limit: the game's end by the rules if the move that reached it ended
    /// the game (they come first), else a draw.
    fn at_limit(&mut self, pos: &G, ply: u32) -> i32 {
        self.pv[ply as usize].clear();
        if pos.outcome().is_some() {
            return terminal(pos, ply, self.contempt);
        }
        if G::FORBIDS_REPETITION {
            let mut moves = MoveList::new();
            pos.legal_moves(&mut moves);
            self.enter(pos.repetition_key());
            retain_unrepeated(pos, &self.keys, &mut moves);
            self.leave();
            if moves.is_empty() {
                // Every move repeats a position: lost by the rules.
                return terminal(pos, ply, self.contempt);
            }
        }
        drawn(ply, self.contempt)
    }

    /// Takes a win on the spot: the score, with the winning move as the line.
    fn win_now(&mut self, pos: &G, ply: u32) -> Option<i32> {
        let mv = pos.winning_move()?;
        self.pv[ply as usize].push(mv);
        Some(WIN - ply as i32 - 1)
    }

    /// Copies the child's line behind `mv` into this ply's line.
    fn update_pv(&mut self, ply: usize, mv: G::Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        head[ply].clear();
        head[ply].push(mv);
        head[ply].extend_from_slice(&tail[0]);
    }

    /// The horizon: wins on the spot, and threats of the opponent's resolved by searching only
    /// the moves that stop them; otherwise the static evaluation.
    fn quiescence(&mut self, pos: &G, ply: u32, mut alpha: i32, beta: i32, qply: u32) -> i32 {
        self.nodes += 1;
        self.check_limits();
        let p = ply as usize;
        self.pv[p].clear();
        if self.stopped {
            return 0;
        }
        if ply >= self.limit_ply {
            return self.at_limit(pos, ply);
        }
        if let Some(win) = self.win_now(pos, ply) {
            return win;
        }
        if pos.outcome().is_some() {
            return terminal(pos, ply, self.contempt);
        }
        if ply >= MAX_PLY || qply >= QUIESCENCE_PLIES {
            return self.evaluate(pos, ply);
        }
        if !pos.threatened() {
            let stand = self.evaluate(pos, ply);
            if G::THREATS && qply < THREAT_PLIES && stand < beta {
                return self.make_threats(pos, ply, alpha, beta, qply, stand);
            }
            return stand;
        }
        let mut moves = std::mem::take(&mut self.buffers[p]);
        moves.clear();
        pos.legal_moves(&mut moves);
        // Every move that leaves the threat standing loses next ply (unless the limit comes
        // first: then each is searched, and is a draw).
        let before_limit = ply + 1 < self.limit_ply;
        let mut best = if before_limit {
            -(WIN - ply as i32 - 2)
        } else {
            -INFINITY
        };
        let mut playable = false;
        self.enter(pos.repetition_key());
        for mv in moves.iter() {
            let child = self.make(pos, mv, ply);
            if repeats(&child, &self.keys) {
                continue;
            }
            playable = true;
            if before_limit && let Some(reply) = child.winning_move() {
                if self.pv[p].is_empty() {
                    self.pv[p].extend([*mv, reply]);
                }
                continue;
            }
            let score = -self.quiescence(&child, ply + 1, -beta, -alpha, qply + 1);
            if self.stopped {
                break;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    self.update_pv(p, *mv);
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        self.leave();
        self.buffers[p] = moves;
        if self.stopped {
            0
        } else if !playable {
            // Every move repeats a position: lost now, by the rules (not next ply).
            terminal(pos, ply, self.contempt)
        } else {
            best
        }
    }

    /// The horizon of a side not under threat: the static evaluation ("standing pat"), or
    /// better, a move that makes a threat, searched on by [`Searcher::quiescence`] (the
    /// opponent must stop it: a threat that cannot be stopped, or two, wins). Never claims a
    /// proven loss: standing pat is always there.
    fn make_threats(
        &mut self,
        pos: &G,
        ply: u32,
        mut alpha: i32,
        beta: i32,
        qply: u32,
        stand: i32,
    ) -> i32 {
        let p = ply as usize;
        let mut best = stand;
        alpha = alpha.max(stand);
        let mut moves = std::mem::take(&mut self.buffers[p]);
        moves.clear();
        pos.legal_moves(&mut moves);
        self.enter(pos.repetition_key());
        for mv in moves.iter() {
            if pos.move_class(mv) != 2 {
                continue;
            }
            let child = self.make(pos, mv, ply);
            if repeats(&child, &self.keys) {
                continue;
            }
            let score = -self.quiescence(&child, ply + 1, -beta, -alpha, qply + 1);
            if self.stopped {
                break;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    self.update_pv(p, *mv);
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        self.leave();
        self.buffers[p] = moves;
        if self.stopped { 0 } else { best }
    }

    fn negamax(&mut self, pos: &G, mut depth: i32, ply: u32, mut alpha: i32, mut beta: i32) -> i32 {
        let p = ply as usize;
        if ply >= self.limit_ply {
            self.nodes += 1;
            return self.at_limit(pos, ply);
        }
        let threatened = ply < MAX_PLY && pos.threatened();
        if threatened {
            depth += 1;
        }
        if depth <= 0 || ply >= MAX_PLY {
            return self.quiescence(pos, ply, alpha, beta, 0);
        }
        self.nodes += 1;
        self.check_limits();
        self.pv[p].clear();
        if self.stopped {
            return 0;
        }
        if let Some(win) = self.win_now(pos, ply) {
            return win;
        }
        // Nothing here can beat a win next move or be worse than a loss right now.
        alpha = alpha.max(-(WIN - ply as i32));
        beta = beta.min(WIN - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }
        let key = self.table_key(pos, ply);
        let entry = self.tt.probe(key);
        // Table cut-offs only off the principal variation, so that the PV is played out.
        let pv_node = beta - alpha > 1;
        if let Some(e) = entry
            && i32::from(e.depth) >= depth
            && !pv_node
            && let score = from_tt(e.score, ply)
            && !self.beyond_limit(score)
        {
            match e.bound {
                Bound::Exact => return score,
                Bound::Lower => alpha = alpha.max(score),
                Bound::Upper => beta = beta.min(score),
            }
            if alpha >= beta {
                return score;
            }
        }
        let tt_move = entry.and_then(|e| e.best);

        // The static evaluation, where pruning may use it.
        let selective = pos.prunes();
        let eval = (selective && !threatened).then(|| self.evaluate(pos, ply));
        if let Some(eval) = eval
            && !pv_node
            && beta.abs() < PROVEN
        {
            // Reverse futility: far enough above beta that the remaining plies won't undo it.
            if depth <= FUTILITY_DEPTH && eval - FUTILITY_MARGIN * depth >= beta {
                return eval;
            }
        }
        let futile = eval.is_some_and(|e| {
            !pv_node
                && depth <= FUTILITY_PRUNE_DEPTH
                && alpha.abs() < PROVEN
                && e + FUTILITY_PRUNE_MARGIN * depth <= alpha
        });
        let late_limit = if selective && !pv_node && !threatened && depth <= LMP_DEPTH {
            LMP_BASE + (depth * depth) as usize
        } else {
            usize::MAX
        };
        if selective && depth >= IIR_DEPTH && tt_move.is_none() {
            depth -= 1;
        }

        let mut moves = std::mem::take(&mut self.buffers[p]);
        moves.clear();
        pos.legal_moves(&mut moves);
        if moves.is_empty() {
            self.buffers[p] = moves;
            return terminal(pos, ply, self.contempt);
        }
        let side = pos.turn().index();
        let mut ranked = std::mem::take(&mut self.ranked[p]);
        self.ordering
            .rank(&moves, &mut ranked, p, side, tt_move, G::move_slot, |m| {
                pos.move_class(m)
            });
        self.enter(pos.repetition_key());
        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut best_move = None;
        let mut searched = 0;
        // Whether a move was left unsearched by pruning: then no proven loss may be claimed.
        let mut pruned = false;
        let mut tried_quiet = std::mem::take(&mut self.quiets[p]);
        tried_quiet.clear();
        for i in 0..ranked.len() {
            let Ranked { mv, class, .. } = pick(&mut ranked, i);
            let mv = &mv;
            let quiet = class == 0 && !self.ordering.is_killer(p, *mv);
            if quiet && searched > 0 && (futile || searched >= late_limit) {
                pruned = true;
                continue;
            }
            let child = self.make(pos, mv, ply);
            if repeats(&child, &self.keys) {
                continue;
            }
            if threatened
                && ply + 1 < self.limit_ply
                && let Some(reply) = child.winning_move()
            {
                // Leaves the opponent's win standing: lost next ply, proven without a search.
                let lost = -(WIN - ply as i32 - 2);
                if lost > best {
                    best = lost;
                    best_move = Some(*mv);
                    self.pv[p].clear();
                    self.pv[p].extend([*mv, reply]);
                }
                continue;
            }
            searched += 1;
            let new_depth = depth - 1;
            let score = if searched == 1 {
                -self.negamax(&child, new_depth, ply + 1, -beta, -alpha)
            } else {
                let mut r = 0;
                if selective && depth >= LMR_DEPTH && searched > LMR_AFTER && quiet && !threatened {
                    r = reduction::<G>(depth, searched) - i32::from(pv_node);
                    r = r.clamp(0, new_depth - 1);
                }
                let mut score = -self.negamax(&child, new_depth - r, ply + 1, -alpha - 1, -alpha);
                if score > alpha && r > 0 {
                    score = -self.negamax(&child, new_depth, ply + 1, -alpha - 1, -alpha);
                }
                if score > alpha && score < beta {
                    score = -self.negamax(&child, new_depth, ply + 1, -beta, -alpha);
                }
                score
            };
            if self.stopped {
                break;
            }
            if score > best {
                best = score;
                best_move = Some(*mv);
                if score > alpha {
                    alpha = score;
                    self.update_pv(p, *mv);
                    if alpha >= beta {
                        if quiet {
                            self.ordering.reward(
                                *mv,
                                &tried_quiet,
                                side,
                                p,
                                depth as u32,
                                G::move_slot,
                            );
                        }
                        break;
                    }
                }
            }
            if quiet {
                tried_quiet.push(*mv);
            }
        }
        self.leave();
        self.buffers[p] = moves;
        self.ranked[p] = ranked;
        self.quiets[p] = tried_quiet;
        if self.stopped {
            return 0;
        }
        if best == -INFINITY {
            // Every legal move repeats a position.
            return terminal(pos, ply, self.contempt);
        }
        if pruned && best < -PROVEN {
            // Unsearched moves might hold: a heuristic "nearly lost", not a proof.
            best = -PROVEN;
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt
            .store(key, best_move, best, depth.max(0) as u32, bound, ply);
        best
    }

    /// One root move searched at `depth` against the window `(alpha, infinity)`: a null window
    /// first unless it is the first move, a full one when that beats alpha. The score is the
    /// move's value when it beats alpha, else an upper bound.
    fn root_move(&mut self, child: &G, depth: i32, alpha: i32, full: bool) -> i32 {
        self.nodes += 1;
        if full || alpha == -INFINITY {
            return -self.negamax(child, depth - 1, 1, -INFINITY, -alpha);
        }
        let probe = -self.negamax(child, depth - 1, 1, -alpha - 1, -alpha);
        if probe > alpha && !self.stopped {
            -self.negamax(child, depth - 1, 1, -INFINITY, -alpha)
        } else {
            probe
        }
    }

    fn root(&mut self, pos: &G, max_depth: u32, params: &Params<'_>) -> Report<G::Move> {
        let mut root_moves = MoveList::new();
        pos.legal_moves(&mut root_moves);
        self.enter(pos.repetition_key());
        retain_unrepeated(pos, &self.keys, &mut root_moves);
        if root_moves.is_empty() || self.limit_ply == 0 {
            // A game at its limit is drawn, unless the rules ended it first.
            let at_limit = self.limit_ply == 0 && pos.outcome().is_none() && !root_moves.is_empty();
            let drawn = at_limit || pos.outcome().is_some_and(|o| o.winner == Winner::Draw);
            return Report {
                lines: Vec::new(),
                score: if drawn {
                    Score::Draw
                } else {
                    Score::from_internal(terminal(pos, 0, 0))
                },
                depth: 0,
                nodes: 1,
                time_ms: params.clock.elapsed_ms(),
            };
        }
        let tt_move = self.tt.probe(self.table_key(pos, 0)).and_then(|e| e.best);
        let side = pos.turn().index();
        let mut order = Vec::new();
        self.ordering.rank(
            &root_moves,
            &mut order,
            0,
            side,
            tt_move,
            G::move_slot,
            |m| pos.move_class(m),
        );
        sort_all(&mut order);
        let multipv = params.multipv.clamp(1, root_moves.len());
        // From the last completed iteration, best first.
        let mut ranked: Vec<RootMove<G::Move>> = order
            .iter()
            .map(|&Ranked { mv, .. }| RootMove {
                mv,
                score: -INFINITY,
                exact: false,
                pv: vec![mv],
            })
            .collect();
        let mut completed = 0;
        // The depth from which every line reaches the end of the game (without pruning only: no
        // node below a root that does not prune prunes, see [`Searchable::prunes`]).
        let selective = pos.prunes();
        let to_the_end = if selective {
            None
        } else {
            match (pos.plies_left(), params.plies_to_limit) {
                (Some(n), Some(limit)) => Some(n.min(limit)),
                (n, limit) => n.or(limit),
            }
        };
        let mut solved = false;
        for depth in 1..=max_depth {
            let mut this: Vec<RootMove<G::Move>> = Vec::with_capacity(ranked.len());
            for (i, rm) in ranked.iter().enumerate() {
                // The window's floor: the multipv-th best score found so far this iteration.
                let alpha = if this.len() >= multipv {
                    let mut scores: Vec<i32> = this.iter().map(|t| t.score).collect();
                    scores.sort_unstable_by(|a, b| b.cmp(a));
                    scores[multipv - 1]
                } else {
                    -INFINITY
                };
                let child = self.make(pos, &rm.mv, 0);
                let score = self.root_move(&child, depth as i32, alpha, i == 0);
                if self.stopped {
                    break;
                }
                let mut pv = vec![rm.mv];
                pv.extend_from_slice(&self.pv[1]);
                this.push(RootMove {
                    mv: rm.mv,
                    score,
                    exact: score > alpha,
                    pv,
                });
            }
            if self.stopped {
                if completed == 0 {
                    // Depth 1 did not finish: only the moves it searched have a score, and
                    // they are all that can be reported. The first `multipv` of them were
                    // searched with a full window, and a later one that beat the window so
                    // too; the stable sort keeps the first of equal scores (a later move
                    // with an equal score only failed low).
                    this.sort_by_key(|t| std::cmp::Reverse(t.score));
                    ranked = this;
                    break;
                }
                // An interrupted iteration still counts for plain play: its first move was
                // searched with a full window, and any move that beat it was re-searched so.
                // The first of the best: a later move with an equal score only failed low.
                let first_best = this
                    .iter()
                    .fold(None::<&RootMove<G::Move>>, |acc, t| match acc {
                        Some(a) if a.score >= t.score => Some(a),
                        _ => Some(t),
                    });
                if multipv == 1
                    && let Some(best) = first_best
                {
                    let best = best.clone();
                    ranked.retain(|r| r.mv != best.mv);
                    ranked.insert(0, best);
                }
                break;
            }
            this.sort_by_key(|t| std::cmp::Reverse(t.score));
            ranked = this;
            completed = depth;
            if to_the_end.is_some_and(|n| depth >= n) {
                // Every line was searched to the end of the game: nothing deeper to learn.
                solved = true;
                break;
            }
            // Proven lines end the search once it has looked a little past them: reductions
            // can hide a shorter win on one iteration and show it on the next.
            let all_proven = ranked[..multipv].iter().all(|t| t.score.abs() > PROVEN);
            let distance = (WIN - ranked[0].score.abs()) as u32;
            if all_proven && (!selective || depth >= distance + 2) {
                break;
            }
        }
        if ranked.is_empty() {
            // Not even one move of depth 1 finished: the first in order, scored statically.
            let mv = order[0].mv;
            ranked.push(RootMove {
                mv,
                score: self.evaluate(pos, 0),
                exact: false,
                pv: vec![mv],
            });
        }
        self.leave();
        // A draw at the root scores the root side's contempt; solved, it is a proven draw.
        let draw = -params.contempt;
        let lines: Vec<Line<G::Move>> = ranked
            .into_iter()
            .take(multipv)
            .map(|r| Line {
                mv: r.mv,
                score: if solved && r.exact && r.score == draw {
                    Score::Draw
                } else {
                    Score::from_internal(r.score)
                },
                pv: r.pv,
            })
            .collect();
        Report {
            score: lines[0].score,
            lines,
            depth: completed,
            nodes: self.nodes,
            time_ms: params.clock.elapsed_ms(),
        }
    }
}
