//! Deterministic pseudo-random keys for Zobrist hashing, computed at compile time.
//!
//! The keys must be the same in every process (hashes are compared across replicas and stored
//! in test fixtures), so they come from a fixed-seed SplitMix64 sequence rather than a runtime
//! random source.

/// The `i`-th key of the stream seeded with `seed`.
pub const fn key(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A table of `N` keys from the stream seeded with `seed`.
pub const fn table<const N: usize>(seed: u64) -> [u64; N] {
    let mut out = [0u64; N];
    let mut i = 0;
    while i < N {
        out[i] = key(seed, i as u64);
        i += 1;
    }
    out
}
