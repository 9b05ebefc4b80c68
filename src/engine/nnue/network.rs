//! The quantised network and its integer inference: inputs → `HIDDEN` clipped-ReLU units → one
//! output, on the hand-written evaluation's scale.
//!
//! Weights are `i16` (the first layer scaled by [`QA`], the output layer by [`QB`]), so the
//! hidden layer is a sum of a few dozen `i16` rows — what the compiler turns into SIMD adds —
//! and the output a dot product in `i32`. The trainer works in `f32` and quantises once.
//!
//! File format (little-endian): the 8-byte [`MAGIC`], `u32` inputs, `u32` hidden units, `i32`
//! scale (evaluation units per logit), then the first layer's weights input by input, its
//! biases, the output weights (`i16` each) and the output bias (`i32`).

use super::features::FEATURES;

pub const HIDDEN: usize = 256;
/// The first layer's scale: a hidden unit's activation 1.0 is `QA`.
pub const QA: i32 = 255;
/// The output layer's scale.
pub const QB: i32 = 512;
pub const MAGIC: &[u8; 8] = b"PZNNUE01";

/// A hidden layer's values before the activation: the first layer's biases plus the rows of
/// the active inputs.
pub type Accumulator = [i16; HIDDEN];

/// Why network bytes do not load.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    #[error("not a pillarz network (it does not start with {MAGIC:?})")]
    Magic,
    #[error(
        "a network of {inputs} inputs and {hidden} hidden units; this build reads {FEATURES} and {HIDDEN}"
    )]
    Shape { inputs: u32, hidden: u32 },
    #[error("{found} bytes where a network has {expected}")]
    Length { found: usize, expected: usize },
    #[error("a scale of {0}: it must be positive")]
    Scale(i32),
}

#[derive(Clone, PartialEq, Eq)]
pub struct Network {
    /// `w1[input]`: the row added to the accumulator when the input is active.
    w1: Box<[Accumulator; FEATURES]>,
    b1: Accumulator,
    w2: [i16; HIDDEN],
    b2: i32,
    /// Evaluation units per logit of the output.
    scale: i32,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Network({FEATURES}→{HIDDEN}→1, scale {})", self.scale)
    }
}

const HEADER: usize = 8 + 4 + 4 + 4;
const BYTES: usize = HEADER + 2 * (FEATURES * HIDDEN + 2 * HIDDEN) + 4;

impl Network {
    /// A network from quantised parts (the trainer's).
    pub fn from_parts(
        w1: Box<[Accumulator; FEATURES]>,
        b1: Accumulator,
        w2: [i16; HIDDEN],
        b2: i32,
        scale: i32,
    ) -> Network {
        Network {
            w1,
            b1,
            w2,
            b2,
            scale,
        }
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NetworkError> {
        let body = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or(NetworkError::Magic)?;
        if bytes.len() < HEADER {
            return Err(NetworkError::Length {
                found: bytes.len(),
                expected: BYTES,
            });
        }
        let word = |i: usize| u32::from_le_bytes(body[4 * i..4 * i + 4].try_into().expect("4"));
        let (inputs, hidden, scale) = (word(0), word(1), word(2) as i32);
        if inputs as usize != FEATURES || hidden as usize != HIDDEN {
            return Err(NetworkError::Shape { inputs, hidden });
        }
        if bytes.len() != BYTES {
            return Err(NetworkError::Length {
                found: bytes.len(),
                expected: BYTES,
            });
        }
        if scale <= 0 {
            return Err(NetworkError::Scale(scale));
        }
        let mut values = bytes[HEADER..BYTES - 4]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]));
        let mut row = || -> Accumulator { std::array::from_fn(|_| values.next().expect("sized")) };
        let mut w1 = Box::new([[0; HIDDEN]; FEATURES]);
        for r in w1.iter_mut() {
            *r = row();
        }
        let b1 = row();
        let w2 = row();
        let b2 = i32::from_le_bytes(bytes[BYTES - 4..].try_into().expect("4 bytes"));
        Ok(Network::from_parts(w1, b1, w2, b2, scale))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(BYTES);
        out.extend_from_slice(MAGIC);
        for word in [FEATURES as u32, HIDDEN as u32, self.scale as u32] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        for v in self.w1.iter().flatten().chain(&self.b1).chain(&self.w2) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.b2.to_le_bytes());
        out
    }

    /// The accumulator of a position with these active inputs.
    #[inline]
    pub fn accumulate(&self, active: &[u16]) -> Accumulator {
        let mut acc = self.b1;
        for &input in active {
            add(&mut acc, &self.w1[usize::from(input)]);
        }
        acc
    }

    /// `parent` without the rows of `off` and with those of `on`, written to `out`: the
    /// accumulator of a child whose inputs differ by these.
    #[inline]
    pub fn update(&self, parent: &Accumulator, off: &[u16], on: &[u16], out: &mut Accumulator) {
        let row = |input: u16| &self.w1[usize::from(input)];
        // The shapes a move gives, each in one pass over the rows (a step that builds on a
        // built square, on a bare one, a placement); anything else row by row.
        match (off, on) {
            (&[a, b], &[c, d]) => fused(parent, [row(a), row(b)], [row(c), row(d)], out),
            (&[a], &[c, d]) => fused(parent, [row(a)], [row(c), row(d)], out),
            (&[], &[c, d]) => fused(parent, [], [row(c), row(d)], out),
            _ => {
                *out = *parent;
                for &input in off {
                    sub(out, row(input));
                }
                for &input in on {
                    add(out, row(input));
                }
            }
        }
    }

    /// The evaluation of an accumulator, in evaluation units.
    #[inline]
    pub fn output(&self, acc: &Accumulator) -> i32 {
        let sum: i32 = acc
            .iter()
            .zip(&self.w2)
            .map(|(&a, &w)| i32::from(a.clamp(0, QA as i16)) * i32::from(w))
            .sum();
        ((i64::from(sum) + i64::from(self.b2)) * i64::from(self.scale) / i64::from(QA * QB)) as i32
    }

    /// The evaluation of a position with these active inputs.
    #[inline]
    pub fn evaluate(&self, active: &[u16]) -> i32 {
        self.output(&self.accumulate(active))
    }

    pub fn scale(&self) -> i32 {
        self.scale
    }
}

#[inline]
fn add(acc: &mut Accumulator, row: &Accumulator) {
    for (a, w) in acc.iter_mut().zip(row) {
        *a = a.wrapping_add(*w);
    }
}

/// `parent − Σ off + Σ on`, unit by unit, in one pass.
#[inline]
fn fused<const OFF: usize, const ON: usize>(
    parent: &Accumulator,
    off: [&Accumulator; OFF],
    on: [&Accumulator; ON],
    out: &mut Accumulator,
) {
    for (i, o) in out.iter_mut().enumerate() {
        let mut v = parent[i];
        for row in off {
            v = v.wrapping_sub(row[i]);
        }
        for row in on {
            v = v.wrapping_add(row[i]);
        }
        *o = v;
    }
}

#[inline]
fn sub(acc: &mut Accumulator, row: &Accumulator) {
    for (a, w) in acc.iter_mut().zip(row) {
        *a = a.wrapping_sub(*w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy() -> Network {
        let mut w1 = Box::new([[0; HIDDEN]; FEATURES]);
        for (i, row) in w1.iter_mut().enumerate() {
            for (j, w) in row.iter_mut().enumerate() {
                *w = ((i * 31 + j * 7) % 61) as i16 - 30;
            }
        }
        let b1 = std::array::from_fn(|j| (j % 50) as i16);
        let w2 = std::array::from_fn(|j| (j % 9) as i16 - 4);
        Network::from_parts(w1, b1, w2, -77, 300)
    }

    #[test]
    fn a_network_reads_back_as_written() {
        let net = toy();
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), BYTES);
        assert_eq!(Network::from_bytes(&bytes), Ok(net));
        assert_eq!(
            Network::from_bytes(&bytes[..bytes.len() - 2]),
            Err(NetworkError::Length {
                found: BYTES - 2,
                expected: BYTES
            })
        );
        assert_eq!(Network::from_bytes(&bytes[1..]), Err(NetworkError::Magic));
        let mut other = bytes.clone();
        other[12..16].copy_from_slice(&7u32.to_le_bytes());
        assert!(matches!(
            Network::from_bytes(&other),
            Err(NetworkError::Shape { hidden: 7, .. })
        ));
    }

    #[test]
    fn the_output_is_the_clipped_dot_product() {
        let net = toy();
        let active = [3u16, 100, 249];
        let acc = net.accumulate(&active);
        let mut sum = 0i64;
        for (j, &unit) in acc.iter().enumerate() {
            let pre: i32 = i32::from(net.b1[j])
                + active
                    .iter()
                    .map(|&i| i32::from(net.w1[usize::from(i)][j]))
                    .sum::<i32>();
            assert_eq!(i32::from(unit), pre);
            sum += i64::from(pre.clamp(0, QA)) * i64::from(net.w2[j]);
        }
        let expected = (sum - 77) * 300 / i64::from(QA * QB);
        assert_eq!(i64::from(net.evaluate(&active)), expected);
    }
}
