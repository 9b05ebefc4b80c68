//! The transposition table: a fixed-size, always-replace-if-deeper hash table of search results.

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
}

pub struct Table<M> {
    slots: Vec<Option<Entry<M>>>,
    mask: usize,
}

impl<M: Copy> Table<M> {
    /// A table of `2^bits` entries.
    pub fn new(bits: u32) -> Table<M> {
        let size = 1usize << bits;
        Table {
            slots: vec![None; size],
            mask: size - 1,
        }
    }

    pub fn probe(&self, key: u64) -> Option<Entry<M>> {
        self.slots[key as usize & self.mask].filter(|e| e.key == key)
    }

    /// Stores a result; proven scores are made relative to this node (`ply` from the root).
    pub fn store(
        &mut self,
        key: u64,
        best: Option<M>,
        score: i32,
        depth: u32,
        bound: Bound,
        ply: u32,
    ) {
        let slot = &mut self.slots[key as usize & self.mask];
        if let Some(old) = slot
            && old.key == key
            && u32::from(old.depth) > depth
        {
            return;
        }
        *slot = Some(Entry {
            key,
            best,
            score: to_tt(score, ply),
            depth: depth.min(255) as u8,
            bound,
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
