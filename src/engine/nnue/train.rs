//! The trainer: fits the network in `f32` to self-play samples, then quantises it.
//!
//! The target of a sample blends what the search thought with how the game ended:
//! `λ·σ(score/K) + (1-λ)·result`, with `K` (evaluation units per logit) fitted first so that
//! `σ(score/K)` best predicts the results. The network predicts `σ(output)`; the loss is the
//! squared difference (the usual NNUE loss). Adam, mini-batches, each sample seen under a
//! random one of the board's eight symmetries; a held-out tail of the data (later games, so no
//! game is in both parts) measures the validation loss after every epoch.
//!
//! Single-threaded and seeded: a run is reproducible bit for bit. A few hundred lines of our
//! own serve better than an ML framework here: the first layer is sparse (a few dozen of 250
//! inputs active), which dense frameworks spend most of their time ignoring.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::features::{Board, FEATURES};
use super::network::{Accumulator, HIDDEN, Network, QA, QB};
use super::sample::Sample;

/// How to train.
#[derive(Clone, Copy, Debug)]
pub struct TrainConfig {
    pub epochs: usize,
    pub batch: usize,
    /// Adam's learning rate at the start; it falls linearly to a tenth by the last epoch.
    pub learning_rate: f32,
    /// The weight of the search score in the target (the rest is the game's result).
    pub lambda: f32,
    /// The share of the samples held out for validation (the last ones).
    pub validation: f32,
    pub seed: u64,
}

/// What one epoch did.
#[derive(Clone, Copy, Debug)]
pub struct EpochReport {
    pub epoch: usize,
    pub train_loss: f64,
    pub validation_loss: f64,
}

/// The first layer's weights stay within this (so that the quantised accumulator cannot
/// overflow `i16` with every input active).
const W1_LIMIT: f32 = 1.98;
/// The output weights stay within this (quantised with [`QB`], inside `i16`).
const W2_LIMIT: f32 = 8.0;

/// The network in `f32`, the trainer's working copy.
#[derive(Clone, Debug)]
struct Float {
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: f32,
}

impl Float {
    fn zeros() -> Float {
        Float {
            w1: vec![0.0; FEATURES * HIDDEN],
            b1: vec![0.0; HIDDEN],
            w2: vec![0.0; HIDDEN],
            b2: 0.0,
        }
    }

    fn random(rng: &mut SmallRng) -> Float {
        let mut net = Float::zeros();
        net.w1
            .iter_mut()
            .for_each(|w| *w = rng.random_range(-0.2..0.2));
        net.b1.iter_mut().for_each(|b| *b = 0.1);
        let a = 1.0 / (HIDDEN as f32).sqrt();
        net.w2.iter_mut().for_each(|w| *w = rng.random_range(-a..a));
        net
    }

    fn params_mut(&mut self) -> impl Iterator<Item = &mut f32> {
        self.w1
            .iter_mut()
            .chain(&mut self.b1)
            .chain(&mut self.w2)
            .chain(std::iter::once(&mut self.b2))
    }

    fn params(&self) -> impl Iterator<Item = &f32> {
        self.w1
            .iter()
            .chain(&self.b1)
            .chain(&self.w2)
            .chain(std::iter::once(&self.b2))
    }

    /// The hidden layer before activation, and the output logit.
    fn forward(&self, active: &[u16], hidden: &mut [f32; HIDDEN]) -> f32 {
        hidden.copy_from_slice(&self.b1);
        for &i in active {
            let row = &self.w1[usize::from(i) * HIDDEN..][..HIDDEN];
            hidden.iter_mut().zip(row).for_each(|(h, w)| *h += w);
        }
        self.b2
            + hidden
                .iter()
                .zip(&self.w2)
                .map(|(h, w)| h.clamp(0.0, 1.0) * w)
                .sum::<f32>()
    }

    fn quantise(&self, scale: f32) -> Network {
        let q = |v: f32, s: i32| (v * s as f32).round() as i16;
        let mut w1 = Box::new([[0i16; HIDDEN]; FEATURES]);
        for (i, row) in w1.iter_mut().enumerate() {
            for (j, w) in row.iter_mut().enumerate() {
                *w = q(self.w1[i * HIDDEN + j], QA);
            }
        }
        let b1: Accumulator = std::array::from_fn(|j| q(self.b1[j], QA));
        let w2 = std::array::from_fn(|j| q(self.w2[j], QB));
        let b2 = (self.b2 * (QA * QB) as f32).round() as i32;
        Network::from_parts(w1, b1, w2, b2, scale.round() as i32)
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The result as a probability of winning for the side to move.
fn result01(s: &Sample) -> f32 {
    (f32::from(s.result) + 1.0) / 2.0
}

/// The `K` (evaluation units per logit) for which `σ(score/K)` best predicts the results, by
/// a search over a grid (on at most 100,000 samples; proven scores left out).
pub fn fit_scale(samples: &[Sample]) -> f32 {
    let heuristic: Vec<&Sample> = samples.iter().filter(|s| !s.proven).take(100_000).collect();
    let loss = |k: f32| -> f64 {
        heuristic
            .iter()
            .map(|s| f64::from((sigmoid(f32::from(s.score) / k) - result01(s)).powi(2)))
            .sum()
    };
    (2..=200)
        .map(|i| i as f32 * 10.0)
        .min_by(|&a, &b| loss(a).total_cmp(&loss(b)))
        .expect("a grid")
}

fn target(s: &Sample, scale: f32, lambda: f32) -> f32 {
    lambda * sigmoid(f32::from(s.score) / scale) + (1.0 - lambda) * result01(s)
}

/// Adam's moments for every parameter.
struct Adam {
    m: Vec<f32>,
    v: Vec<f32>,
    steps: i32,
}

impl Adam {
    fn step(&mut self, net: &mut Float, grad: &Float, lr: f32) {
        const B1: f32 = 0.9;
        const B2: f32 = 0.999;
        self.steps += 1;
        let c1 = 1.0 - B1.powi(self.steps);
        let c2 = 1.0 - B2.powi(self.steps);
        for (((p, g), m), v) in net
            .params_mut()
            .zip(grad.params())
            .zip(&mut self.m)
            .zip(&mut self.v)
        {
            *m = B1 * *m + (1.0 - B1) * g;
            *v = B2 * *v + (1.0 - B2) * g * g;
            *p -= lr * (*m / c1) / ((*v / c2).sqrt() + 1e-8);
        }
        net.w1
            .iter_mut()
            .chain(&mut net.b1)
            .for_each(|w| *w = w.clamp(-W1_LIMIT, W1_LIMIT));
        net.w2
            .iter_mut()
            .for_each(|w| *w = w.clamp(-W2_LIMIT, W2_LIMIT));
    }
}

/// The mean loss of `net` on `samples` (no symmetry applied).
fn mean_loss(net: &Float, samples: &[Sample], scale: f32, lambda: f32) -> f64 {
    let mut hidden = [0.0; HIDDEN];
    let total: f64 = samples
        .iter()
        .map(|s| {
            let p = sigmoid(net.forward(s.board.active().as_slice(), &mut hidden));
            f64::from((p - target(s, scale, lambda)).powi(2))
        })
        .sum();
    total / samples.len().max(1) as f64
}

/// Trains a network on `samples` (in the order generated) and returns it quantised;
/// `each_epoch` hears about every epoch.
pub fn train(
    samples: &[Sample],
    config: &TrainConfig,
    mut each_epoch: impl FnMut(&EpochReport),
) -> Network {
    let mut rng = SmallRng::seed_from_u64(config.seed);
    let held = ((samples.len() as f32 * config.validation) as usize).min(samples.len());
    let (training, validation) = samples.split_at(samples.len() - held);
    let scale = fit_scale(training);
    let (lambda, batch) = (config.lambda, config.batch.max(1));
    let mut net = Float::random(&mut rng);
    let mut grad = Float::zeros();
    let params = net.params().count();
    let mut adam = Adam {
        m: vec![0.0; params],
        v: vec![0.0; params],
        steps: 0,
    };
    let mut order: Vec<u32> = (0..training.len() as u32).collect();
    let mut hidden = [0.0f32; HIDDEN];
    for epoch in 0..config.epochs {
        let progress = epoch as f32 / config.epochs.max(1) as f32;
        let lr = config.learning_rate * (1.0 - 0.9 * progress);
        order.shuffle(&mut rng);
        let mut total = 0.0f64;
        for chunk in order.chunks(batch) {
            grad.params_mut().for_each(|g| *g = 0.0);
            for &i in chunk {
                let s = &training[i as usize];
                let board: Board = s.board.transformed(rng.random_range(0..8));
                let active = board.active();
                let out = net.forward(active.as_slice(), &mut hidden);
                let p = sigmoid(out);
                let t = target(s, scale, lambda);
                total += f64::from((p - t).powi(2));
                let d_out = 2.0 * (p - t) * p * (1.0 - p) / chunk.len() as f32;
                grad.b2 += d_out;
                for ((h, g), w) in hidden.iter_mut().zip(&mut grad.w2).zip(&net.w2) {
                    *g += d_out * h.clamp(0.0, 1.0);
                    // The clipped ReLU passes a gradient only between its clips; `hidden`
                    // now holds the gradient of each unit's input.
                    *h = if *h > 0.0 && *h < 1.0 { d_out * w } else { 0.0 };
                }
                grad.b1.iter_mut().zip(&hidden).for_each(|(g, d)| *g += d);
                for &input in active.as_slice() {
                    let row = &mut grad.w1[usize::from(input) * HIDDEN..][..HIDDEN];
                    row.iter_mut().zip(&hidden).for_each(|(g, d)| *g += d);
                }
            }
            adam.step(&mut net, &grad, lr);
        }
        each_epoch(&EpochReport {
            epoch: epoch + 1,
            train_loss: total / training.len().max(1) as f64,
            validation_loss: mean_loss(&net, validation, scale, lambda),
        });
    }
    net.quantise(scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Limit;
    use crate::engine::nnue::generate::play_game;
    use crate::engine::search::Engine;
    use crate::engine::selfplay::SelfPlayConfig;
    use crate::rules::pillarz::Position;

    fn samples() -> Vec<Sample> {
        let config = SelfPlayConfig {
            limit: Limit::Nodes(400),
            random_plies: (2, 6),
            seed: 3,
        };
        let mut engine = Engine::<Position>::new(14);
        (0..60)
            .flat_map(|i| play_game(&mut engine, &config, i))
            .collect()
    }

    #[test]
    fn training_learns_and_reproduces() {
        let data = samples();
        assert!(data.len() > 1000, "{} samples", data.len());
        let config = TrainConfig {
            epochs: 8,
            batch: 256,
            learning_rate: 0.005,
            lambda: 0.5,
            validation: 0.2,
            seed: 1,
        };
        let mut reports = Vec::new();
        let net = train(&data, &config, |r| reports.push(*r));
        assert_eq!(reports.len(), 8);
        // Better than the best constant guess on the held-out games.
        let held = &data[data.len() - data.len() / 5..];
        let scale = fit_scale(&data[..data.len() - held.len()]);
        let targets: Vec<f64> = held
            .iter()
            .map(|s| f64::from(target(s, scale, 0.5)))
            .collect();
        let mean = targets.iter().sum::<f64>() / targets.len() as f64;
        let constant =
            targets.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / targets.len() as f64;
        let last = reports.last().expect("epochs").validation_loss;
        assert!(
            last < 0.92 * constant,
            "validation {last} vs constant {constant}"
        );
        assert!(reports[0].train_loss > reports[7].train_loss);
        // Seeded: the same run gives the same network.
        assert_eq!(train(&data, &config, |_| {}), net);
    }

    #[test]
    fn the_quantised_network_agrees_with_the_float_one() {
        let mut rng = SmallRng::seed_from_u64(4);
        let float = Float::random(&mut rng);
        let scale = 250.0;
        let net = float.quantise(scale);
        let mut hidden = [0.0; HIDDEN];
        for s in samples().iter().step_by(50) {
            let active = s.board.active();
            let exact = float.forward(active.as_slice(), &mut hidden) * scale;
            let quantised = net.evaluate(active.as_slice()) as f32;
            assert!((exact - quantised).abs() < 4.0, "{exact} vs {quantised}");
        }
    }
}
