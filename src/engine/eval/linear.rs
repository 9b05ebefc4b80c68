//! Linear evaluations: a position described by counted features, each with a weight.
//!
//! A game's evaluation lists its features once ([`Linear::features`], written against a
//! [`FeatureSink`]); the search sums their weights ([`Linear::linear_eval`]), and the tuner
//! (`engine::tuner`) reads the counts themselves to fit the weights to the results of
//! self-play games. Because both go through the same code, the tuned numbers are exactly the
//! ones the search uses. A game whose evaluation stops being linear (a network) implements
//! [`super::Searchable::evaluate`] another way and keeps this only for its tuner.

/// Receives a position's features: `count` occurrences of feature `index`. Counts are from the
/// side to move's point of view: its own features positive, the opponent's negative.
pub trait FeatureSink {
    fn add(&mut self, index: usize, count: i32);
}

/// The weighted sum of the features (what the search uses).
struct Weighted<'a> {
    weights: &'a [i32],
    total: i32,
}

impl FeatureSink for Weighted<'_> {
    #[inline(always)]
    fn add(&mut self, index: usize, count: i32) {
        self.total += self.weights[index] * count;
    }
}

/// The features as a sparse list of `(index, count)`, zero counts dropped, indices merged (what
/// the tuner uses).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts(pub Vec<(u16, i16)>);

impl FeatureSink for Counts {
    fn add(&mut self, index: usize, count: i32) {
        if count == 0 {
            return;
        }
        match self.0.iter_mut().find(|(i, _)| usize::from(*i) == index) {
            Some((_, c)) => *c += count as i16,
            None => self.0.push((index as u16, count as i16)),
        }
    }
}

/// An evaluation that is a weighted sum of features.
pub trait Linear {
    /// The features' names, in weight order (for the tuner's output).
    const FEATURES: &'static [&'static str];
    /// The weights the search uses (written by the tuner).
    const WEIGHTS: &'static [i32];

    /// Reports every feature of this position (which is not over) to `sink`.
    fn features(&self, sink: &mut impl FeatureSink);

    /// The weighted sum of [`Linear::features`].
    #[inline]
    fn linear_eval(&self) -> i32 {
        let mut sum = Weighted {
            weights: Self::WEIGHTS,
            total: 0,
        };
        self.features(&mut sum);
        sum.total
    }

    /// The features as counts (for the tuner).
    fn feature_counts(&self) -> Counts {
        let mut counts = Counts::default();
        self.features(&mut counts);
        counts.0.retain(|(_, c)| *c != 0);
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Toy;

    impl Linear for Toy {
        const FEATURES: &'static [&'static str] = &["a", "b", "c"];
        const WEIGHTS: &'static [i32] = &[10, -3, 7];

        fn features(&self, sink: &mut impl FeatureSink) {
            sink.add(0, 2);
            sink.add(1, 1);
            sink.add(1, -1);
            sink.add(2, -1);
        }
    }

    #[test]
    fn the_sum_and_the_counts_agree() {
        assert_eq!(Toy.linear_eval(), 20 - 7);
        assert_eq!(Toy.feature_counts(), Counts(vec![(0, 2), (2, -1)]));
    }
}
