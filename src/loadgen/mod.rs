//! The load generator behind `pillarz loadgen` (and `load-tests/run.sh`): many concurrent games
//! played to the end with random legal moves through several replicas, readers polling game
//! state and clocks, and a trickle of analyses. It counts every move the servers accepted and
//! checks at the end that each game's stored move list holds exactly those moves, in order,
//! and replays legally: lost or duplicated moves are reported, and must be zero.

mod stats;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::api::{CreatedGame, GameView, Status};
use crate::rules::{AnyRecord, GameKind};
pub use stats::{Report, Stats};

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Base URLs of the replicas (requests are spread over them).
    pub targets: Vec<String>,
    pub duration: Duration,
    /// Games played at once.
    pub players: usize,
    /// Tasks polling game views and clocks.
    pub readers: usize,
    /// Analyses per second across all tasks.
    pub analyses_per_sec: f64,
    pub seed: u64,
}

/// A game as the players saw it: every move a server accepted, by ply.
struct Played {
    id: String,
    accepted: Vec<String>,
}

struct Shared {
    config: Config,
    http: reqwest::Client,
    stats: Stats,
    games: Mutex<Vec<Played>>,
    stop: AtomicBool,
}

impl Shared {
    fn target(&self, rng: &mut SmallRng) -> &str {
        &self.config.targets[rng.random_range(0..self.config.targets.len())]
    }

    /// One request, timed and counted under `route`; `None` on a network error.
    async fn call(&self, route: &str, request: reqwest::RequestBuilder) -> Option<(u16, Value)> {
        let started = Instant::now();
        let result = request.send().await;
        let response = match result {
            Ok(r) => r,
            Err(_) => {
                self.stats.record(route, 0, started.elapsed());
                return None;
            }
        };
        let status = response.status().as_u16();
        let body = response.json::<Value>().await.unwrap_or(Value::Null);
        self.stats.record(route, status, started.elapsed());
        Some((status, body))
    }
}

const GAMES: [&str; 4] = ["pillarz", "pilastri", "pyrga", "alcazar"];

async fn player(shared: Arc<Shared>, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    while !shared.stop.load(Ordering::Relaxed) {
        let game = GAMES[rng.random_range(0..GAMES.len())];
        let base = shared.target(&mut rng).to_string();
        let Some((201, body)) = shared
            .call("POST /v1/games", shared.http.post(format!("{base}/v1/games")).json(
                &json!({"game": game, "time_control": {"initial_ms": 600_000, "increment_ms": 1000}}),
            ))
            .await
        else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let Ok(created) = serde_json::from_value::<CreatedGame>(body) else {
            continue;
        };
        let mut played = Played {
            id: created.game.id.clone(),
            accepted: Vec::new(),
        };
        let mut turn = created.game.turn;
        let mut ply = 0u64;
        // The move sent for `ply` whose answer was not seen: a retry must send the same request
        // with the same key (a different move under that key is refused with 422).
        let mut pending: Option<String> = None;
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                break;
            }
            let base = shared.target(&mut rng).to_string();
            let Some((200, legal)) = shared
                .call(
                    "GET /v1/games/{id}/legal-moves",
                    shared
                        .http
                        .get(format!("{base}/v1/games/{}/legal-moves", played.id)),
                )
                .await
            else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let moves: Vec<String> =
                serde_json::from_value(legal["moves"].clone()).unwrap_or_default();
            if moves.is_empty() {
                break;
            }
            let mv = match &pending {
                Some(mv) => mv.clone(),
                None => moves[rng.random_range(0..moves.len())].clone(),
            };
            pending = Some(mv.clone());
            let base = shared.target(&mut rng).to_string();
            let request = shared
                .http
                .post(format!("{base}/v1/games/{}/moves", played.id))
                .bearer_auth(&created.tokens[&turn])
                .header("idempotency-key", format!("{}-{ply}", played.id))
                .json(&json!({"move": mv, "expected_ply": ply}));
            match shared.call("POST /v1/games/{id}/moves", request).await {
                Some((200, view)) => {
                    let Ok(view) = serde_json::from_value::<GameView>(view) else {
                        continue;
                    };
                    // A retry with the same key may replay an earlier answer: count a move
                    // only when the ply advanced to ours.
                    if view.ply == ply + 1 {
                        played.accepted.push(view.moves[ply as usize].clone());
                        ply += 1;
                        pending = None;
                        turn = view.turn;
                        if view.status == Status::Finished {
                            break;
                        }
                    }
                }
                // Not reached, or a 503: try the same ply again (the key makes it safe).
                None | Some((503, _)) => tokio::time::sleep(Duration::from_millis(50)).await,
                Some((status, _)) => {
                    if status == 422 {
                        // Refused as such: this move will never be played.
                        pending = None;
                    }
                    // Someone's state moved on (a timeout, a lost race): re-read.
                    let base = shared.target(&mut rng).to_string();
                    if let Some((200, view)) = shared
                        .call(
                            "GET /v1/games/{id}",
                            shared.http.get(format!("{base}/v1/games/{}", played.id)),
                        )
                        .await
                        && let Ok(view) = serde_json::from_value::<GameView>(view)
                    {
                        if view.status == Status::Finished {
                            break;
                        }
                        turn = view.turn;
                    }
                }
            }
        }
        shared.games.lock().await.push(played);
    }
}

async fn reader(shared: Arc<Shared>, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    while !shared.stop.load(Ordering::Relaxed) {
        let id = {
            let games = shared.games.lock().await;
            if games.is_empty() {
                None
            } else {
                Some(games[rng.random_range(0..games.len())].id.clone())
            }
        };
        let Some(id) = id else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let base = shared.target(&mut rng).to_string();
        shared
            .call(
                "GET /v1/games/{id}",
                shared.http.get(format!("{base}/v1/games/{id}")),
            )
            .await;
        shared
            .call(
                "GET /v1/games/{id}/clock",
                shared.http.get(format!("{base}/v1/games/{id}/clock")),
            )
            .await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn analyst(shared: Arc<Shared>, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    if shared.config.analyses_per_sec <= 0.0 {
        return;
    }
    let pause = Duration::from_secs_f64(1.0 / shared.config.analyses_per_sec);
    while !shared.stop.load(Ordering::Relaxed) {
        let base = shared.target(&mut rng).to_string();
        let body = json!({"game": "pillarz", "position": "00000/00o00x0/00000/00x00o0/00000 1",
                          "limits": {"movetime_ms": 50}});
        shared
            .call(
                "POST /v1/analysis",
                shared.http.post(format!("{base}/v1/analysis")).json(&body),
            )
            .await;
        tokio::time::sleep(pause).await;
    }
}

/// Checks every game against what its players saw; returns (games, lost, duplicated, illegal).
async fn audit(shared: &Shared) -> (usize, usize, usize, usize) {
    let games = shared.games.lock().await;
    let (mut lost, mut duplicated, mut illegal) = (0, 0, 0);
    for played in games.iter() {
        let mut view = None;
        for attempt in 0..50 {
            // Any replica will do (one may be down after a fault test).
            let base = &shared.config.targets[attempt % shared.config.targets.len()];
            if let Ok(r) = shared
                .http
                .get(format!("{base}/v1/games/{}", played.id))
                .send()
                .await
                && r.status() == 200
                && let Ok(v) = r.json::<GameView>().await
            {
                view = Some(v);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let Some(view) = view else {
            lost += played.accepted.len();
            continue;
        };
        let stored = &view.moves;
        let common = stored
            .iter()
            .zip(&played.accepted)
            .take_while(|(a, b)| a == b)
            .count();
        lost += played.accepted.len() - common;
        // Every request retries with its ply's Idempotency-Key, so any stored move the players
        // did not see accepted would be a duplicate.
        duplicated += stored.len() - common;
        let kind: GameKind = view.game.parse().expect("a known game");
        let variants = kind.variants(&view.variants).expect("known variants");
        if AnyRecord::replay(kind, variants, &view.start_position, stored).is_err() {
            illegal += 1;
        }
    }
    (games.len(), lost, duplicated, illegal)
}

/// Runs the load for `config.duration`, then audits every game.
pub async fn run(config: Config) -> Report {
    let shared = Arc::new(Shared {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .pool_max_idle_per_host(256)
            .build()
            .expect("a client builds"),
        stats: Stats::default(),
        games: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
        config,
    });
    let started = Instant::now();
    let mut tasks = Vec::new();
    let seed = shared.config.seed;
    for i in 0..shared.config.players {
        tasks.push(tokio::spawn(player(
            shared.clone(),
            seed ^ (i as u64 * 7919),
        )));
    }
    for i in 0..shared.config.readers {
        tasks.push(tokio::spawn(reader(
            shared.clone(),
            seed ^ (0xABCD + i as u64),
        )));
    }
    tasks.push(tokio::spawn(analyst(shared.clone(), seed ^ 0x5EED)));
    tokio::time::sleep(shared.config.duration).await;
    shared.stop.store(true, Ordering::Relaxed);
    for t in tasks {
        let _ = t.await;
    }
    let elapsed = started.elapsed();
    let (games, lost, duplicated, illegal) = audit(&shared).await;
    let moves: usize = shared
        .games
        .lock()
        .await
        .iter()
        .map(|g| g.accepted.len())
        .sum();
    shared
        .stats
        .report(elapsed, games, moves, lost, duplicated, illegal)
}
