//! Tiny helpers for iterating set bits: the one loop every move generator here needs.

/// Iterates the indices of the set bits of `bits`, lowest first.
#[inline]
pub fn ones(mut bits: u64) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        if bits == 0 {
            None
        } else {
            let i = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            Some(i)
        }
    })
}
