//! Move ordering: the table's move first, then the killers of this ply, then by history.

/// Killer moves (two per ply) and a history score per move slot.
pub struct Ordering<M> {
    killers: Vec<[Option<M>; 2]>,
    history: Vec<u32>,
}

impl<M: Copy + PartialEq> Ordering<M> {
    pub fn new(max_ply: usize, move_slots: usize) -> Ordering<M> {
        Ordering {
            killers: vec![[None, None]; max_ply + 1],
            history: vec![0; move_slots],
        }
    }

    /// Sorts `moves` best-first for a node at `ply`; `slot` maps a move to its history slot.
    pub fn sort(
        &self,
        moves: &mut [M],
        ply: usize,
        tt_move: Option<M>,
        slot: impl Fn(&M) -> usize,
    ) {
        let killers = self.killers[ply];
        moves.sort_by_cached_key(|m| {
            let rank = if Some(*m) == tt_move {
                u32::MAX
            } else if Some(*m) == killers[0] {
                u32::MAX - 1
            } else if Some(*m) == killers[1] {
                u32::MAX - 2
            } else {
                self.history[slot(m)].min(u32::MAX - 3)
            };
            std::cmp::Reverse(rank)
        });
    }

    /// Records a move that caused a beta cut-off.
    pub fn reward(&mut self, mv: M, slot: usize, ply: usize, depth: u32) {
        let k = &mut self.killers[ply];
        if k[0] != Some(mv) {
            k[1] = k[0];
            k[0] = Some(mv);
        }
        let h = &mut self.history[slot];
        *h = h.saturating_add(depth * depth);
    }
}
