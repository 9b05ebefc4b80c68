//! Move ordering in stages: the table's move, then moves that make a threat, then moves that
//! improve (each stage by history), then this ply's killers, then the rest by history.
//!
//! History is kept per side and move slot, with the "gravity" update: a cut-off move gains,
//! the moves tried before it lose, and a value never leaves ±[`HISTORY_MAX`].
//!
//! Moves are handed out one at a time ([`pick`]): most nodes that cut off do so on one of their
//! first moves, so sorting all of them first was a sixth of a Pilastri search's time.

const HISTORY_MAX: i32 = 16_384;
/// Room for every history value inside one stage of the sort key.
const STAGE: i64 = 1 << 20;
/// More than any game's number of legal moves: the room for a move's index in a sort key.
const INDICES: i64 = 1 << 16;

/// Killer moves (two per ply) and a history score per side and move slot.
pub struct Ordering<M> {
    killers: Vec<[Option<M>; 2]>,
    history: Vec<i32>,
    slots: usize,
}

impl<M: Copy + PartialEq> Ordering<M> {
    pub fn new(max_ply: usize, move_slots: usize) -> Ordering<M> {
        Ordering {
            killers: vec![[None, None]; max_ply + 1],
            history: vec![0; 2 * move_slots],
            slots: move_slots,
        }
    }

    /// Forgets the killers (history carries over from one search to the next).
    pub fn new_search(&mut self) {
        self.killers.fill([None, None]);
    }

    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        self.new_search();
        self.history.fill(0);
    }

    pub fn is_killer(&self, ply: usize, mv: M) -> bool {
        self.killers[ply].contains(&Some(mv))
    }

    /// Ranks `moves` for a node at `ply` of side `side` (0 or 1) into `ranked`, to be handed
    /// out best-first by [`pick`]; `slot` maps a move to its history slot and `class` to its
    /// stage (2 threat, 1 improving, 0 other), which the search prunes by.
    #[allow(clippy::too_many_arguments)]
    pub fn rank(
        &self,
        moves: &[M],
        ranked: &mut Vec<Ranked<M>>,
        ply: usize,
        side: usize,
        tt_move: Option<M>,
        slot: impl Fn(&M) -> usize,
        class: impl Fn(&M) -> u8,
    ) {
        let killers = self.killers[ply];
        let base = side * self.slots;
        ranked.clear();
        ranked.extend(moves.iter().enumerate().map(|(index, m)| {
            let history = i64::from(self.history[base + slot(m)]);
            let c = class(m);
            let rank = if Some(*m) == tt_move {
                8 * STAGE
            } else {
                match c {
                    2 => 6 * STAGE + history,
                    1 => 4 * STAGE + history,
                    _ if Some(*m) == killers[0] => 3 * STAGE,
                    _ if Some(*m) == killers[1] => 3 * STAGE - 1,
                    _ => history,
                }
            };
            // The generator's order breaks ties (determinism): with the index in its low bits
            // every key is distinct, so any order of picking hands the moves out the same way.
            Ranked {
                key: rank * INDICES + (INDICES - 1 - index as i64),
                mv: *m,
                class: c,
            }
        }));
    }

    fn nudge(&mut self, index: usize, bonus: i32) {
        let h = &mut self.history[index];
        *h += bonus - *h * bonus.abs() / HISTORY_MAX;
    }

    /// Records a beta cut-off by `mv` at `ply`, after `tried` (the moves searched before it
    /// in vain, which lose history).
    pub fn reward(
        &mut self,
        mv: M,
        tried: &[M],
        side: usize,
        ply: usize,
        depth: u32,
        slot: impl Fn(&M) -> usize,
    ) {
        let k = &mut self.killers[ply];
        if k[0] != Some(mv) {
            k[1] = k[0];
            k[0] = Some(mv);
        }
        let bonus = (depth * depth).min(1_200) as i32 * 8;
        let base = side * self.slots;
        self.nudge(base + slot(&mv), bonus);
        for m in tried {
            self.nudge(base + slot(m), -bonus);
        }
    }
}

/// A move with its sort key and its class ([`Searchable::move_class`](super::Searchable)).
#[derive(Clone, Copy, Debug)]
pub struct Ranked<M> {
    key: i64,
    pub mv: M,
    pub class: u8,
}

/// How many moves [`pick`] selects one at a time before it sorts the rest: most nodes that cut
/// off do so on one of their first moves, and selecting those costs a pass each where a sort
/// of every move costs several.
const SELECTED: usize = 3;

/// The `i`-th best move of `ranked`, for `i` = 0, 1, 2 … in turn: the first few are selected,
/// then the rest sorted at once.
pub fn pick<M: Copy>(ranked: &mut [Ranked<M>], i: usize) -> Ranked<M> {
    if i < SELECTED {
        let best = (i..ranked.len())
            .max_by_key(|&j| ranked[j].key)
            .expect("i is below the number of moves");
        ranked.swap(i, best);
    } else if i == SELECTED {
        sort_all(&mut ranked[i..]);
    }
    ranked[i]
}

/// Every move of `ranked`, best first.
pub fn sort_all<M: Copy>(ranked: &mut [Ranked<M>]) {
    ranked.sort_unstable_by_key(|r| std::cmp::Reverse(r.key));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Picking one at a time hands the moves out in the order of a full sort, ties in the
    /// generator's order, however the ranks fall.
    #[test]
    fn picking_is_sorting() {
        let mut ordering = Ordering::<u16>::new(4, 64);
        let moves: Vec<u16> = (0..40).collect();
        for (i, m) in moves.iter().enumerate().step_by(3) {
            ordering.reward(*m, &moves[..i], i % 2, 1, 1 + i as u32 % 5, |m| *m as usize);
        }
        for tt_move in [None, Some(7)] {
            let slot = |m: &u16| usize::from(*m);
            let class = |m: &u16| u8::from(m.is_multiple_of(7)) + u8::from(m.is_multiple_of(11));
            let mut sorted = Vec::new();
            ordering.rank(&moves, &mut sorted, 1, 0, tt_move, slot, class);
            sort_all(&mut sorted);
            let mut picked = Vec::new();
            ordering.rank(&moves, &mut picked, 1, 0, tt_move, slot, class);
            let order: Vec<u16> = (0..picked.len()).map(|i| pick(&mut picked, i).mv).collect();
            assert_eq!(order, sorted.iter().map(|r| r.mv).collect::<Vec<_>>());
            assert_eq!(order[0], tt_move.unwrap_or(order[0]));
            // Equal ranks (moves of class 0 with no history, not killers) keep the generator's order.
            let plain: Vec<u16> = order
                .iter()
                .copied()
                .filter(|m| {
                    class(m) == 0 && ordering.history[slot(m)] == 0 && !ordering.is_killer(1, *m)
                })
                .collect();
            assert!(plain.windows(2).all(|w| w[0] < w[1]), "{plain:?}");
        }
    }
}
