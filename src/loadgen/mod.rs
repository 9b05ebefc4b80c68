//! The load generator behind `pillarz loadgen` (and `load-tests/run.sh`): many concurrent games
//! played to the end with random legal moves through several replicas, readers polling game
//! state and clocks, and a trickle of analyses. It counts every move the servers accepted and
//! checks at the end that each game's stored move list holds exactly those moves, in order,
//! and replays legally: lost or duplicated moves are reported, and must be zero. It also reads
//! each replica's CPU time from its metrics before and after, for the CPU time per move.
//!
//! In [`Mode::Floor`] the same generator only asks `GET /healthz/live`: the HTTP floor of the
//! same machine, clients and server, to compare the moves per second with.

mod http;
mod stats;
pub mod storage;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hyper::header::{self, HeaderValue};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokio::sync::Mutex;

use crate::api::{
    AnalysisRequest, CreateGame, CreatedGame, GameView, Seat, Status, SubmitMove, TimeControl,
};
use crate::engine::Limit;
use crate::rules::{AnyRecord, GameKind};
use http::{Call, Connections, Target};
pub use stats::{Report, Stats};

/// How long a request may take before it counts as a network error.
const TIMEOUT: Duration = Duration::from_secs(10);

/// What the generator's players do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Play games to the end (with readers and analyses).
    Games,
    /// Only `GET /healthz/live`, as fast as the players can.
    Floor,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    pub mode: Mode,
    /// Base URLs of the replicas (requests are spread over them).
    pub targets: Vec<String>,
    pub duration: Duration,
    /// Games played at once.
    pub players: usize,
    /// Tasks polling game views and clocks.
    pub readers: usize,
    /// Analyses per second across all tasks.
    pub analyses_per_sec: f64,
    /// Pace the players to make about this many moves per second in all (none: as fast as
    /// they can).
    pub moves_per_sec: Option<f64>,
    pub seed: u64,
}

/// A game as the players saw it: every move a server accepted, by ply.
struct Played {
    id: String,
    accepted: Vec<String>,
}

struct Shared {
    config: Config,
    targets: Vec<Target>,
    stats: Stats,
    games: Mutex<Vec<Played>>,
    stop: AtomicBool,
}

/// One task's side of the generator: its connections and its random choices.
struct Client {
    shared: Arc<Shared>,
    connections: Connections,
    rng: SmallRng,
}

impl Client {
    fn new(shared: &Arc<Shared>, seed: u64) -> Client {
        Client {
            connections: Connections::new(&shared.targets, TIMEOUT),
            shared: shared.clone(),
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// One request to a random replica, timed and counted under `route`; `None` on a network
    /// error.
    async fn call(&mut self, route: &'static str, call: Call<'_>) -> Option<(u16, bytes::Bytes)> {
        let target = self.rng.random_range(0..self.shared.targets.len());
        self.call_to(target, route, call).await
    }

    async fn call_to(
        &mut self,
        target: usize,
        route: &'static str,
        call: Call<'_>,
    ) -> Option<(u16, bytes::Bytes)> {
        let started = Instant::now();
        let answer = self.connections.send(target, call).await.ok();
        let status = answer.as_ref().map_or(0, |(status, _)| *status);
        self.shared.stats.record(route, status, started.elapsed());
        answer
    }
}

fn json(value: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec(value).expect("a request serializes")
}

/// What a player needs of a move's answer (a game view; the rest of it is skipped).
#[derive(serde::Deserialize)]
struct Answer {
    ply: u64,
    turn: Seat,
    status: Status,
}

/// What a player needs of the legal moves (borrowed from the answer's bytes).
#[derive(serde::Deserialize)]
struct Legal<'a> {
    #[serde(borrow)]
    moves: Vec<std::borrow::Cow<'a, str>>,
}

async fn player(shared: Arc<Shared>, seed: u64) {
    let mut client = Client::new(&shared, seed);
    // With a target rate, each player makes its share of the moves, one per `interval`.
    let interval = shared
        .config
        .moves_per_sec
        .map(|rate| Duration::from_secs_f64(shared.config.players as f64 / rate));
    let mut next_move = Instant::now();
    while !shared.stop.load(Ordering::Relaxed) {
        let game = GameKind::ALL[client.rng.random_range(0..GameKind::ALL.len())];
        let create = CreateGame {
            game,
            variants: Vec::new(),
            time_control: Some(TimeControl {
                initial_ms: 600_000,
                increment_ms: 1000,
            }),
            position: None,
            seats: Default::default(),
        };
        let Some((201, body)) = client
            .call("POST /v1/games", Call::post("/v1/games", json(&create)))
            .await
        else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let Ok(created) = serde_json::from_slice::<CreatedGame>(&body) else {
            continue;
        };
        let mut played = Played {
            id: created.game.id.clone(),
            accepted: Vec::new(),
        };
        let legal_path = format!("/v1/games/{}/legal-moves", played.id);
        let moves_path = format!("/v1/games/{}/moves", played.id);
        let view_path = format!("/v1/games/{}", played.id);
        let bearer = |seat: Seat| {
            HeaderValue::from_str(&format!("Bearer {}", created.tokens[&seat]))
                .expect("a token is a header value")
        };
        let tokens = Seat::BOTH.map(bearer);
        let mut turn = created.game.turn;
        let mut ply = 0u64;
        // The move sent for `ply` whose answer was not seen: a retry must send the same request
        // with the same key (a different move under that key is refused with 422).
        let mut pending: Option<String> = None;
        let mut resolving = 0;
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                // A move in doubt is resolved before leaving: its retry answers as it went.
                if pending.is_none() || resolving >= 50 {
                    break;
                }
                resolving += 1;
            }
            if let Some(interval) = interval {
                tokio::time::sleep_until(next_move.into()).await;
                next_move = next_move.max(Instant::now() - interval) + interval;
            }
            let Some((200, legal)) = client
                .call("GET /v1/games/{id}/legal-moves", Call::get(&legal_path))
                .await
            else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let moves = serde_json::from_slice::<Legal>(&legal)
                .map(|l| l.moves)
                .unwrap_or_default();
            let mv = match &pending {
                // Sent before, answer unseen: send it again, even if the game looks over now
                // (it may be over because of it).
                Some(mv) => mv.clone(),
                None if moves.is_empty() => break,
                None => moves[client.rng.random_range(0..moves.len())].to_string(),
            };
            pending = Some(mv.clone());
            let headers = [
                (header::AUTHORIZATION, tokens[turn.index()].clone()),
                (
                    header::HeaderName::from_static("idempotency-key"),
                    HeaderValue::from_str(&format!("{}-{ply}", played.id))
                        .expect("a key is a header value"),
                ),
            ];
            let body = json(&SubmitMove {
                mv: mv.clone(),
                expected_ply: Some(ply),
            });
            let answer = client
                .call(
                    "POST /v1/games/{id}/moves",
                    Call::post(&moves_path, body).with_headers(&headers),
                )
                .await;
            match answer {
                Some((200, view)) => {
                    let Ok(view) = serde_json::from_slice::<Answer>(&view) else {
                        continue;
                    };
                    // A retry with the same key may replay an earlier answer: count a move
                    // only when the ply advanced to ours.
                    if view.ply == ply + 1 {
                        // The move sent came from the legal moves: it is canonical.
                        played.accepted.push(mv);
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
                    if (400..500).contains(&status) && status != 408 && status != 429 {
                        // Refused as such (a retry of a move that was played would have been
                        // answered as played): this move will never be played.
                        pending = None;
                    }
                    // Someone's state moved on (a timeout, a lost race): re-read.
                    if let Some((200, view)) = client
                        .call("GET /v1/games/{id}", Call::get(&view_path))
                        .await
                        && let Ok(view) = serde_json::from_slice::<GameView>(&view)
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
    let mut client = Client::new(&shared, seed);
    while !shared.stop.load(Ordering::Relaxed) {
        let id = {
            let games = shared.games.lock().await;
            if games.is_empty() {
                None
            } else {
                Some(games[client.rng.random_range(0..games.len())].id.clone())
            }
        };
        let Some(id) = id else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let target = client.rng.random_range(0..shared.targets.len());
        let view = format!("/v1/games/{id}");
        client
            .call_to(target, "GET /v1/games/{id}", Call::get(&view))
            .await;
        let clock = format!("/v1/games/{id}/clock");
        client
            .call_to(target, "GET /v1/games/{id}/clock", Call::get(&clock))
            .await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn analyst(shared: Arc<Shared>, seed: u64) {
    let mut client = Client::new(&shared, seed);
    if shared.config.analyses_per_sec <= 0.0 {
        return;
    }
    let pause = Duration::from_secs_f64(1.0 / shared.config.analyses_per_sec);
    let body = json(&AnalysisRequest {
        game: GameKind::Pillarz,
        variants: Vec::new(),
        position: "00000/00o00x0/00000/00x00o0/00000 1".into(),
        limits: Limit::MovetimeMs(50),
        multipv: None,
    });
    while !shared.stop.load(Ordering::Relaxed) {
        client
            .call(
                "POST /v1/analysis",
                Call::post("/v1/analysis", body.clone()),
            )
            .await;
        tokio::time::sleep(pause).await;
    }
}

/// Checks every game against what its players saw; returns (games, lost, duplicated, illegal).
async fn audit(shared: &Shared) -> (usize, usize, usize, usize) {
    let mut connections = Connections::new(&shared.targets, TIMEOUT);
    let games = shared.games.lock().await;
    let (mut lost, mut duplicated, mut illegal) = (0, 0, 0);
    for played in games.iter() {
        let mut view = None;
        let path = format!("/v1/games/{}", played.id);
        for attempt in 0..50 {
            // Any replica will do (one may be down after a fault test).
            if let Ok((200, body)) = connections
                .send(attempt % shared.targets.len(), Call::get(&path))
                .await
                && let Ok(v) = serde_json::from_slice::<GameView>(&body)
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
        let kind = view.game;
        let variants = kind.with_variants(&view.variants).expect("known variants");
        if AnyRecord::replay(kind, variants, &view.start_position, stored).is_err() {
            illegal += 1;
        }
    }
    (games.len(), lost, duplicated, illegal)
}

async fn floor(shared: Arc<Shared>, seed: u64) {
    let mut client = Client::new(&shared, seed);
    while !shared.stop.load(Ordering::Relaxed) {
        client
            .call("GET /healthz/live", Call::get("/healthz/live"))
            .await;
    }
}

/// The CPU seconds each replica's process used so far, from its metrics.
async fn cpu_seconds(connections: &mut Connections, targets: usize) -> Vec<Option<f64>> {
    let mut seconds = Vec::new();
    for target in 0..targets {
        let answer = connections.send(target, Call::get("/metrics")).await;
        seconds.push(answer.ok().and_then(|(_, body)| {
            std::str::from_utf8(&body)
                .ok()?
                .lines()
                .find_map(|l| l.strip_prefix("pillarz_process_cpu_seconds_total "))
                .and_then(|v| v.trim().parse().ok())
        }));
    }
    seconds
}

/// Runs the load for `config.duration`, then audits every game. Fails only on a target that is
/// not a plain `http://host:port` URL.
pub async fn run(config: Config) -> Result<Report, String> {
    let targets = config
        .targets
        .iter()
        .map(|t| Target::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    let shared = Arc::new(Shared {
        targets,
        stats: Stats::default(),
        games: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
        config,
    });
    let mut metrics = Connections::new(&shared.targets, TIMEOUT);
    let cpu_before = cpu_seconds(&mut metrics, shared.targets.len()).await;
    let started = Instant::now();
    let mut tasks = Vec::new();
    let seed = shared.config.seed;
    for i in 0..shared.config.players {
        let seed = seed ^ (i as u64 * 7919);
        tasks.push(match shared.config.mode {
            Mode::Games => tokio::spawn(player(shared.clone(), seed)),
            Mode::Floor => tokio::spawn(floor(shared.clone(), seed)),
        });
    }
    if shared.config.mode == Mode::Games {
        for i in 0..shared.config.readers {
            tasks.push(tokio::spawn(reader(
                shared.clone(),
                seed ^ (0xABCD + i as u64),
            )));
        }
        tasks.push(tokio::spawn(analyst(shared.clone(), seed ^ 0x5EED)));
    }
    tokio::time::sleep(shared.config.duration).await;
    shared.stop.store(true, Ordering::Relaxed);
    for t in tasks {
        let _ = t.await;
    }
    let elapsed = started.elapsed();
    let cpu_after = cpu_seconds(&mut metrics, shared.targets.len()).await;
    let cpu = shared
        .config
        .targets
        .iter()
        .zip(cpu_before.into_iter().zip(cpu_after))
        .filter_map(|(target, (before, after))| Some((target.clone(), after? - before?)))
        .collect();
    let (games, lost, duplicated, illegal) = audit(&shared).await;
    let moves: usize = shared
        .games
        .lock()
        .await
        .iter()
        .map(|g| g.accepted.len())
        .sum();
    let mut report = shared
        .stats
        .report(elapsed, games, moves, lost, duplicated, illegal);
    report.cpu = cpu;
    Ok(report)
}
