//! The transposition table: buckets of four entries, each with the search generation that
//! wrote it, so that a table kept across the moves of a game makes room for the new search
//! instead of hoarding deep results from positions long gone.

use super::score::PROVEN;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    Exact,
    /// The score is at least this (a beta cut-off).
    Lower,
    /// The score is at most this (nothing beat alpha).
    Upper,
}

#[derive(Clone, Copy, Debug)]
pub struct Entry<M> {
    pub key: u64,
    pub best: Option<M>,
    pub score: i32,
    pub depth: u8,
    pub bound: Bound,
    generation: u8,
}

/// Entries per bucket: a key may live in any of them.
const BUCKET: usize = 4;

pub struct Table<M> {
    slots: Vec<Option<Entry<M>>>,
    mask: usize,
    generation: u8,
}

impl<M: Copy> Table<M> {
    /// A table of `2^bits` entries (at least one bucket).
    pub fn new(bits: u32) -> Table<M> {
        let size = (1usize << bits).max(BUCKET);
        Table {
            slots: vec![None; size],
            mask: (size - 1) & !(BUCKET - 1),
            generation: 0,
        }
    }

    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        self.slots.fill(None);
        self.generation = 0;
    }

    /// Marks the start of a new search: older entries become the first to be replaced.
    pub fn new_search(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    fn bucket(&self, key: u64) -> std::ops::Range<usize> {
        let start = key as usize & self.mask;
        start..start + BUCKET
    }

    /// Asks the processor to bring `key`'s bucket into its cache ahead of the probe (a search
    /// calls it when it makes a move, so that the child's probe does not wait on memory:
    /// it did for a quarter of a Pilastri search's time).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let bucket = self.slots[self.bucket(key)].as_ptr_range();
            // SAFETY: a prefetch is a hint that reads nothing and cannot fault, whatever the
            // address; `sse`, the only feature it needs, is part of every x86_64 target. A
            // bucket may span two cache lines, so both are asked for.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(bucket.start.cast());
                _mm_prefetch::<_MM_HINT_T0>(bucket.end.wrapping_sub(1).cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    pub fn probe(&self, key: u64) -> Option<Entry<M>> {
        self.slots[self.bucket(key)]
            .iter()
            .flatten()
            .find(|e| e.key == key)
            .copied()
    }

    /// Stores a result; proven scores are made relative to this node (`ply` from the root).
    /// The same position is overwritten unless that loses a deeper result of this search; else
    /// an empty entry, else the one of the oldest search and least depth.
    pub fn store(
        &mut self,
        key: u64,
        best: Option<M>,
        score: i32,
        depth: u32,
        bound: Bound,
        ply: u32,
    ) {
        let generation = self.generation;
        let range = self.bucket(key);
        let bucket = &mut self.slots[range];
        let age = |e: &Entry<M>| i32::from(generation.wrapping_sub(e.generation));
        let victim = match bucket.iter().position(|e| e.is_some_and(|e| e.key == key)) {
            Some(i) => {
                let old = bucket[i].expect("found");
                if old.generation == generation
                    && u32::from(old.depth) > depth
                    && bound != Bound::Exact
                {
                    return;
                }
                i
            }
            None => bucket
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| match e {
                    None => i32::MIN,
                    Some(e) => i32::from(e.depth) - 8 * age(e),
                })
                .map(|(i, _)| i)
                .expect("a bucket has entries"),
        };
        // Keep the old best move when this result has none (an all-node).
        let best = best.or_else(|| bucket[victim].filter(|e| e.key == key).and_then(|e| e.best));
        bucket[victim] = Some(Entry {
            key,
            best,
            score: to_tt(score, ply),
            depth: depth.min(255) as u8,
            bound,
            generation,
        });
    }
}

/// Proven scores count plies from the root; the table keeps them from the node instead.
fn to_tt(score: i32, ply: u32) -> i32 {
    if score > PROVEN {
        score + ply as i32
    } else if score < -PROVEN {
        score - ply as i32
    } else {
        score
    }
}

/// The inverse of [`to_tt`].
pub fn from_tt(score: i32, ply: u32) -> i32 {
    if score > PROVEN {
        score - ply as i32
    } else if score < -PROVEN {
        score + ply as i32
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_keeps_four_positions_and_replaces_the_oldest_shallowest() {
        let mut t: Table<u8> = Table::new(4);
        // Keys 0, 16, 32, 48 share bucket 0 of a 16-entry table.
        for (i, key) in [0u64, 16, 32, 48].into_iter().enumerate() {
            t.store(key, Some(i as u8), 10, 5 + i as u32, Bound::Exact, 0);
        }
        for key in [0u64, 16, 32, 48] {
            assert!(t.probe(key).is_some());
        }
        t.new_search();
        t.store(64, Some(9), 1, 1, Bound::Lower, 0);
        // The shallowest entry of the older search (key 0, depth 5) made room.
        assert!(t.probe(0).is_none());
        assert_eq!(t.probe(64).unwrap().best, Some(9));
        assert_eq!(t.probe(48).unwrap().depth, 8);
    }

    #[test]
    fn proven_scores_are_stored_relative_to_the_node() {
        let mut t: Table<u8> = Table::new(4);
        t.store(7, None, PROVEN + 500, 3, Bound::Exact, 4);
        let e = t.probe(7).unwrap();
        assert_eq!(from_tt(e.score, 4), PROVEN + 500);
        assert_eq!(from_tt(e.score, 6), PROVEN + 498);
    }
}
