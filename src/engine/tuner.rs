//! The evaluation tuner: fits the weights of a linear evaluation to the results of games
//! (Texel's method). Each sample is a position's feature counts and the side to move's result
//! (1 a win, ½ a draw, 0 a loss); the tuner minimises the mean squared difference between
//! results and `sigmoid(scale · eval)`. The scale is fitted first, with the current weights, so
//! that the evaluation keeps its units (about 100 per pawn-level) and the search's margins keep
//! their meaning; then the weights move by Adam steps on the full batch.

use super::eval::linear::Counts;

/// One position: its features and the side to move's result.
#[derive(Clone, Debug)]
pub struct Sample {
    pub features: Counts,
    pub result: f64,
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn eval(weights: &[f64], features: &Counts) -> f64 {
    features
        .0
        .iter()
        .map(|&(i, c)| weights[usize::from(i)] * f64::from(c))
        .sum()
}

/// The mean squared error of `weights` at `scale` over `samples`.
pub fn error(samples: &[Sample], weights: &[f64], scale: f64) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| (s.result - sigmoid(scale * eval(weights, &s.features))).powi(2))
        .sum();
    total / samples.len().max(1) as f64
}

/// The scale at which `weights` predict the results best (a golden-section search).
pub fn fit_scale(samples: &[Sample], weights: &[f64]) -> f64 {
    let (mut lo, mut hi) = (1e-5f64, 0.1f64);
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let a = hi - phi * (hi - lo);
        let b = lo + phi * (hi - lo);
        if error(samples, weights, a) < error(samples, weights, b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    (lo + hi) / 2.0
}

/// How the weights are fitted.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub epochs: usize,
    /// Adam's step size, in evaluation units.
    pub rate: f64,
}

/// Fits `weights` to `samples` at `scale`; `progress` hears the error every 50 epochs.
pub fn tune(
    samples: &[Sample],
    weights: &[f64],
    scale: f64,
    settings: Settings,
    mut progress: impl FnMut(usize, f64),
) -> Vec<f64> {
    let n = weights.len();
    let mut w = weights.to_vec();
    let (mut m, mut v) = (vec![0.0; n], vec![0.0; n]);
    let (beta1, beta2, epsilon) = (0.9, 0.999, 1e-8);
    let mut gradient = vec![0.0; n];
    for epoch in 1..=settings.epochs {
        gradient.fill(0.0);
        for s in samples {
            let p = sigmoid(scale * eval(&w, &s.features));
            // d/dw of (r - p)² = -2 (r - p) p (1 - p) scale x.
            let g = -2.0 * (s.result - p) * p * (1.0 - p) * scale;
            for &(i, c) in &s.features.0 {
                gradient[usize::from(i)] += g * f64::from(c);
            }
        }
        let count = samples.len().max(1) as f64;
        for i in 0..n {
            let g = gradient[i] / count;
            m[i] = beta1 * m[i] + (1.0 - beta1) * g;
            v[i] = beta2 * v[i] + (1.0 - beta2) * g * g;
            let m_hat = m[i] / (1.0 - beta1.powi(epoch as i32));
            let v_hat = v[i] / (1.0 - beta2.powi(epoch as i32));
            w[i] -= settings.rate * m_hat / (v_hat.sqrt() + epsilon);
        }
        if epoch % 50 == 0 || epoch == settings.epochs {
            progress(epoch, error(samples, &w, scale));
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results drawn from a known linear model are fitted back to it.
    #[test]
    fn recovers_the_weights_of_a_known_model() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        let truth = [120.0, -60.0, 30.0];
        let scale = 0.01;
        let mut rng = SmallRng::seed_from_u64(3);
        let samples: Vec<Sample> = (0..4000)
            .map(|_| {
                let features = Counts(
                    (0..3u16)
                        .map(|i| (i, rng.random_range(-3i16..=3)))
                        .filter(|&(_, c)| c != 0)
                        .collect(),
                );
                let p = sigmoid(scale * eval(&truth, &features));
                let result = if rng.random::<f64>() < p { 1.0 } else { 0.0 };
                Sample { features, result }
            })
            .collect();
        let fitted = tune(
            &samples,
            &[0.0; 3],
            scale,
            Settings {
                epochs: 600,
                rate: 2.0,
            },
            |_, _| {},
        );
        for (f, t) in fitted.iter().zip(truth) {
            assert!((f - t).abs() < 0.2 * t.abs(), "{fitted:?}");
        }
        assert!(error(&samples, &fitted, scale) < error(&samples, &[0.0; 3], scale));
    }
}
