//! Move ordering in stages: the table's move, then moves that make a threat, then moves that
//! improve (each stage by history), then this ply's killers, then the rest by history.
//!
//! History is kept per side and move slot, with the "gravity" update: a cut-off move gains,
//! the moves tried before it lose, and a value never leaves ±[`HISTORY_MAX`].

const HISTORY_MAX: i32 = 16_384;
/// Room for every history value inside one stage of the sort key.
const STAGE: i64 = 1 << 20;

/// Killer moves (two per ply) and a history score per side and move slot.
pub struct Ordering<M> {
    killers: Vec<[Option<M>; 2]>,
    history: Vec<i32>,
    slots: usize,
    /// The sort's working space, kept to spare an allocation per node.
    scratch: Vec<(std::cmp::Reverse<i64>, M, u8)>,
}

impl<M: Copy + PartialEq> Ordering<M> {
    pub fn new(max_ply: usize, move_slots: usize) -> Ordering<M> {
        Ordering {
            killers: vec![[None, None]; max_ply + 1],
            history: vec![0; 2 * move_slots],
            slots: move_slots,
            scratch: Vec::new(),
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

    /// Sorts `moves` best-first for a node at `ply` of side `side` (0 or 1); `slot` maps a move
    /// to its history slot and `class` to its stage (2 threat, 1 improving, 0 other), which is
    /// left in `classes`, one per move in the sorted order (the search prunes by it).
    #[allow(clippy::too_many_arguments)]
    pub fn sort(
        &mut self,
        moves: &mut [M],
        classes: &mut Vec<u8>,
        ply: usize,
        side: usize,
        tt_move: Option<M>,
        slot: impl Fn(&M) -> usize,
        class: impl Fn(&M) -> u8,
    ) {
        let killers = self.killers[ply];
        let base = side * self.slots;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        scratch.extend(moves.iter().map(|m| {
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
            (std::cmp::Reverse(rank), *m, c)
        }));
        // Stable, so that equal ranks keep the generator's order (determinism).
        scratch.sort_by_key(|e| e.0);
        classes.clear();
        for (slot, (_, m, c)) in moves.iter_mut().zip(scratch.iter()) {
            *slot = *m;
            classes.push(*c);
        }
        self.scratch = scratch;
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
