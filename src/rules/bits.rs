//! Tiny helpers every game shares: iterating set bits (the one loop every move generator
//! needs) and normalising lenient move input.

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

/// Move input as the lenient parsers read it: white space dropped, ASCII lower-cased.
pub fn lenient(input: &str) -> String {
    input
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}
