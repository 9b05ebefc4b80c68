//! The storage benchmark behind `pillarz bench-storage`: what a game costs in Redis, and
//! whether a request on a long game costs more than on a short one.
//!
//! It plays, through the HTTP API like any client (timed games, an `Idempotency-Key` on every
//! move), a pillarz game that ends at exactly ply 40 and an Alcazar game of 1,000 plies, and
//! sums `MEMORY USAGE` over every Redis key of each game. Then it times `GET /v1/games/{id}`
//! on a 10-ply and the 1,000-ply Alcazar game, alternating between them so both see the same
//! machine, and prints the ratio of their median latencies.

use std::fmt;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::api::{CreateGame, CreatedGame, GameView, SubmitMove, TimeControl};
use crate::rules::{AnyRecord, GameKind, Variants};

/// What to measure.
#[derive(Clone, Debug)]
pub struct Config {
    /// The replica to play and time against.
    pub target: String,
    /// More replicas to time against too (e.g. one started with `--cache-mb 0`).
    pub more_targets: Vec<String>,
    /// The Redis the replicas use.
    pub redis: String,
    /// Timed requests per game and replica.
    pub rounds: usize,
    pub seed: u64,
}

/// A game's footprint in Redis.
pub struct Footprint {
    pub label: String,
    pub plies: u64,
    /// Bytes per key, by key.
    pub keys: Vec<(String, u64)>,
}

impl Footprint {
    pub fn bytes(&self) -> u64 {
        self.keys.iter().map(|(_, b)| b).sum()
    }
}

/// Latencies of one replica on the short and the long game.
pub struct Latency {
    pub target: String,
    pub short: Histogram<u64>,
    pub long: Histogram<u64>,
}

impl Latency {
    /// Median on the long game over median on the short one.
    pub fn ratio(&self) -> f64 {
        self.long.value_at_quantile(0.5) as f64 / self.short.value_at_quantile(0.5).max(1) as f64
    }
}

pub struct Report {
    pub footprints: Vec<Footprint>,
    pub latencies: Vec<Latency>,
}

/// Moves of a pillarz game that ends at exactly `plies`, found by random play.
fn pillarz_game_ending_at(plies: usize, rng: &mut SmallRng) -> Vec<String> {
    loop {
        let mut record =
            AnyRecord::new(GameKind::Pillarz, Variants::NONE, None).expect("the start");
        let mut moves = Vec::new();
        while moves.len() < plies {
            let legal = record.legal_moves();
            let last = moves.len() + 1 == plies;
            let fitting: Vec<&String> = legal
                .iter()
                .filter(|mv| {
                    let mut next = record.clone();
                    next.play(mv).expect("a legal move");
                    next.outcome().is_some() == last
                })
                .collect();
            let Some(mv) =
                (!fitting.is_empty()).then(|| fitting[rng.random_range(0..fitting.len())])
            else {
                break;
            };
            record.play(mv).expect("a legal move");
            moves.push(mv.clone());
        }
        if moves.len() == plies {
            return moves;
        }
    }
}

/// Moves of an Alcazar game that goes on for `plies` without ending.
fn alcazar_game_of(plies: usize, rng: &mut SmallRng) -> Vec<String> {
    loop {
        let mut record =
            AnyRecord::new(GameKind::Alcazar, Variants::NONE, None).expect("the start");
        let mut moves = Vec::new();
        while moves.len() < plies {
            let legal = record.legal_moves();
            let going_on: Vec<&String> = legal
                .iter()
                .filter(|mv| {
                    let mut next = record.state().clone();
                    next.play(mv).expect("a legal move");
                    next.outcome().is_none()
                })
                .collect();
            if going_on.is_empty() {
                break;
            }
            let mv = going_on[rng.random_range(0..going_on.len())];
            record.play(mv).expect("a legal move");
            moves.push(mv.clone());
        }
        if moves.len() == plies {
            return moves;
        }
    }
}

fn failed(what: impl fmt::Display) -> String {
    what.to_string()
}

/// Creates a timed game and plays `moves` through the API; returns its id.
async fn play(
    http: &reqwest::Client,
    target: &str,
    kind: GameKind,
    moves: &[String],
) -> Result<String, String> {
    let create = CreateGame {
        game: kind,
        variants: Vec::new(),
        time_control: Some(TimeControl {
            initial_ms: 3_600_000,
            increment_ms: 1000,
        }),
        position: None,
        seats: Default::default(),
    };
    let created: CreatedGame = http
        .post(format!("{target}/v1/games"))
        .json(&create)
        .send()
        .await
        .map_err(failed)?
        .error_for_status()
        .map_err(failed)?
        .json()
        .await
        .map_err(failed)?;
    let id = created.game.id.clone();
    let mut turn = created.game.turn;
    for (ply, mv) in moves.iter().enumerate() {
        let view: GameView = http
            .post(format!("{target}/v1/games/{id}/moves"))
            .bearer_auth(&created.tokens[&turn])
            .header("idempotency-key", format!("{id}-{ply}"))
            .json(&SubmitMove {
                mv: mv.clone(),
                expected_ply: Some(ply as u64),
            })
            .send()
            .await
            .map_err(failed)?
            .error_for_status()
            .map_err(failed)?
            .json()
            .await
            .map_err(failed)?;
        turn = view.turn;
    }
    Ok(id)
}

/// Every Redis key of game `id` with its `MEMORY USAGE`.
async fn footprint(
    redis: &mut redis::aio::MultiplexedConnection,
    label: &str,
    id: &str,
    plies: usize,
) -> Result<Footprint, String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("*{id}*"))
        .query_async(redis)
        .await
        .map_err(failed)?;
    keys.sort();
    let mut sized = Vec::new();
    for key in keys {
        let bytes: u64 = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(&key)
            .arg("SAMPLES")
            .arg(0)
            .query_async(redis)
            .await
            .map_err(failed)?;
        sized.push((key, bytes));
    }
    Ok(Footprint {
        label: label.to_string(),
        plies: plies as u64,
        keys: sized,
    })
}

/// Times `GET /v1/games/{id}` on the two games, alternating.
async fn latency(
    http: &reqwest::Client,
    target: &str,
    short: &str,
    long: &str,
    rounds: usize,
) -> Result<Latency, String> {
    let histogram = || Histogram::<u64>::new_with_bounds(1, 10_000_000, 3).expect("valid bounds");
    let mut result = Latency {
        target: target.to_string(),
        short: histogram(),
        long: histogram(),
    };
    // Warm up connections and caches.
    for id in [short, long] {
        for _ in 0..20 {
            get(http, target, id).await?;
        }
    }
    for _ in 0..rounds {
        let took = get(http, target, short).await?;
        let _ = result.short.record(took.as_micros().max(1) as u64);
        let took = get(http, target, long).await?;
        let _ = result.long.record(took.as_micros().max(1) as u64);
    }
    Ok(result)
}

async fn get(http: &reqwest::Client, target: &str, id: &str) -> Result<Duration, String> {
    let started = Instant::now();
    let response = http
        .get(format!("{target}/v1/games/{id}"))
        .send()
        .await
        .map_err(failed)?
        .error_for_status()
        .map_err(failed)?;
    response.bytes().await.map_err(failed)?;
    Ok(started.elapsed())
}

pub async fn run(config: Config) -> Result<Report, String> {
    let http = reqwest::Client::new();
    let client = redis::Client::open(config.redis.as_str()).map_err(failed)?;
    let mut redis = client
        .get_multiplexed_async_connection()
        .await
        .map_err(failed)?;
    let mut rng = SmallRng::seed_from_u64(config.seed);
    let pillarz = pillarz_game_ending_at(40, &mut rng);
    let alcazar = alcazar_game_of(1000, &mut rng);
    let pillarz_id = play(&http, &config.target, GameKind::Pillarz, &pillarz).await?;
    let long_id = play(&http, &config.target, GameKind::Alcazar, &alcazar).await?;
    let short_id = play(&http, &config.target, GameKind::Alcazar, &alcazar[..10]).await?;
    let footprints = vec![
        footprint(&mut redis, "pillarz, finished at ply 40", &pillarz_id, 40).await?,
        footprint(&mut redis, "alcazar, 1,000 plies", &long_id, 1000).await?,
    ];
    let mut latencies = Vec::new();
    for target in std::iter::once(&config.target).chain(&config.more_targets) {
        latencies.push(latency(&http, target, &short_id, &long_id, config.rounds).await?);
    }
    Ok(Report {
        footprints,
        latencies,
    })
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for footprint in &self.footprints {
            writeln!(
                f,
                "{}: {} bytes in Redis ({:.1} per ply)",
                footprint.label,
                footprint.bytes(),
                footprint.bytes() as f64 / footprint.plies as f64
            )?;
            for (key, bytes) in &footprint.keys {
                writeln!(f, "  {key}: {bytes}")?;
            }
        }
        for l in &self.latencies {
            let ms = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
            writeln!(
                f,
                "GET /v1/games/{{id}} on {}: ply 10 p50 {:.3} ms p99 {:.3} ms; ply 1,000 p50 {:.3} ms p99 {:.3} ms; ratio of medians {:.2}",
                l.target,
                ms(&l.short, 0.5),
                ms(&l.short, 0.99),
                ms(&l.long, 0.5),
                ms(&l.long, 0.99),
                l.ratio()
            )?;
        }
        Ok(())
    }
}
