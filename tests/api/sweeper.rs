//! Games that progress with nobody asking: a clock that falls ends its game (which then
//! expires like any finished game), and an engine seat moves even when the replica that was
//! thinking died — with no client request at all.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pillarz::api::{Seat, Status};
use pillarz::service::configuration::Settings;
use pillarz::service::engine_seats::{Thinker, engine_thinker};
use pillarz::service::store::renewal_slack;
use serde_json::json;

use crate::events::Stream;
use crate::helpers::{Process, RedisServer, TestApp, assert_problem, redis_key, settings_for};

/// A timed game that nobody reads: ended by the sweeper at its flag, then expired after the
/// finished lifetime (not the idle one, an hour here).
async fn an_untouched_timed_game_ends_and_expires(settings: Settings, redis: Option<&RedisServer>) {
    let mut settings = settings;
    settings.idle_ttl = Duration::from_secs(3600);
    settings.finished_ttl = Duration::from_secs(2);
    let app = TestApp::spawn_with(settings).await;
    let created = app
        .create(json!({"game": "pyrga", "time_control": {"initial_ms": 300, "increment_ms": 0}}))
        .await;
    let id = created.game.id.clone();
    if let Some(redis) = redis {
        // Look into Redis, not through the service: the game ended by itself.
        let mut conn = redis.connection();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let live: Option<String> = redis::cmd("HGET")
                .arg(redis_key("sweep", &id, "g"))
                .arg("s")
                .query(&mut conn)
                .unwrap();
            let live = live.expect("the game is stored");
            if live.contains("\"timeout\"") {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the flag was never settled: {live}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let ttl: i64 = redis::cmd("PTTL")
            .arg(redis_key("sweep", &id, "g"))
            .query(&mut conn)
            .unwrap();
        let most = 2000 + renewal_slack(Duration::from_secs(2)).as_millis() as i64;
        assert!(ttl > 0 && ttl <= most, "the finished lifetime: {ttl}");
    }
    // Flag at 0.3 s, swept within about half a second, expired 2 s later: gone by 5 s. Without
    // the sweeper nothing would end it, and it would live the idle hour.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_problem(
        app.get(&format!("/v1/games/{id}")).await,
        404,
        "game_not_found",
    )
    .await;
}

#[tokio::test]
async fn an_untouched_timed_game_ends_on_time_and_expires_redis() {
    let redis = RedisServer::start();
    an_untouched_timed_game_ends_and_expires(settings_for(Some(&redis), "sweep"), Some(&redis))
        .await;
}

#[tokio::test]
async fn an_untouched_timed_game_ends_on_time_and_expires_memory() {
    an_untouched_timed_game_ends_and_expires(Settings::for_tests(), None).await;
}

/// Waits on `stream` for the engine's reply at `ply`.
async fn engine_reply(stream: &mut Stream, ply: u64, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let (_, view) = tokio::time::timeout(within, stream.game())
            .await
            .expect("the engine moved in time")
            .expect("the stream goes on");
        if view.ply >= ply {
            return started.elapsed();
        }
    }
}

/// The replica that was thinking stops dead; another one, asked by nobody, plays the move.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_engine_seat_moves_after_its_replica_dies() {
    let redis = RedisServer::start();
    let a = TestApp::spawn_with(settings_for(Some(&redis), "seats")).await;
    let b = TestApp::spawn_with(settings_for(Some(&redis), "seats")).await;
    let created = a
        .create(json!({"game": "pillarz", "seats": {"p2": {"engine": {"level": 5}}}}))
        .await;
    let id = created.game.id.clone();
    let mut watcher = Stream::open(&b, &id, "text/event-stream", None).await;
    watcher.game().await.unwrap();
    let moved = a.play(&id, &created.tokens[&Seat::P1], "a1+b1").await;
    assert_eq!(moved.status(), 200);
    a.kill().await;
    watcher.game().await.unwrap(); // p1's move
    engine_reply(&mut watcher, 2, Duration::from_secs(15)).await;
}

/// A real `kill -9` of the process that was thinking, then of every replica: the engine seat
/// is played each time by a replica nobody asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_engine_seat_survives_kill_9_and_a_restart_of_every_replica() {
    let redis = RedisServer::start();
    let env = [("PILLARZ_REDIS_URL", redis.url())];
    let mut a = Process::serve(&env).await;
    let b = Process::serve(&env).await;
    let created = a
        .app
        .create(json!({"game": "pillarz", "seats": {"p2": {"engine": {"level": 8}}}}))
        .await;
    let id = created.game.id.clone();
    let p1 = created.tokens[&Seat::P1].clone();
    let mut watcher = Stream::open(&b.app, &id, "application/x-ndjson", None).await;
    watcher.game().await.unwrap();
    // Level 8 thinks 1.5 s: `a` is thinking when it dies.
    assert_eq!(a.app.play(&id, &p1, "a1+b1").await.status(), 200);
    a.kill();
    watcher.game().await.unwrap();
    engine_reply(&mut watcher, 2, Duration::from_secs(20)).await;
    // Now every replica dies while p2 is to move; a new one finds the seat due.
    let mut b = b;
    let moves = b.app.legal_moves(&id).await;
    assert_eq!(b.app.play(&id, &p1, &moves[0]).await.status(), 200);
    b.kill();
    drop(watcher);
    let c = Process::serve(&env).await;
    let mut watcher = Stream::open(&c.app, &id, "application/x-ndjson", None).await;
    let (_, view) = watcher.game().await.unwrap();
    if view.ply < 4 {
        engine_reply(&mut watcher, 4, Duration::from_secs(20)).await;
    }
    assert!(c.app.view(&id).await.ply >= 4);
}

/// A search that panics is logged, counted and retried: the seat still moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_panicking_search_is_retried_not_dropped() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let engine = engine_thinker();
    let player: Thinker = Arc::new(move |seat_engine, state, turn| {
        if counted.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("a bug in the engine");
        }
        engine(seat_engine, state, turn)
    });
    let app = TestApp::spawn_with_player(Settings::for_tests(), player).await;
    let created = app
        .create(json!({"game": "pyrga", "seats": {"p2": {"engine": {"level": 1}}}}))
        .await;
    let id = created.game.id.clone();
    let mut watcher = Stream::open(&app, &id, "text/event-stream", None).await;
    watcher.game().await.unwrap();
    assert_eq!(
        app.play(&id, &created.tokens[&Seat::P1], "Sa1")
            .await
            .status(),
        200
    );
    watcher.game().await.unwrap();
    engine_reply(&mut watcher, 2, Duration::from_secs(15)).await;
    assert!(calls.load(Ordering::SeqCst) >= 2, "searched again");
    let metrics = app.get("/metrics").await.text().await.unwrap();
    let failures = metrics
        .lines()
        .find_map(|l| l.strip_prefix("pillarz_engine_failures_total "))
        .expect("the failure counter");
    assert!(failures.parse::<f64>().unwrap() >= 1.0, "{failures}");
    let view = app.view(&id).await;
    assert_eq!(view.status, Status::Ongoing);
    assert_eq!(view.turn, Seat::P1);
}

/// Many games whose two seats are engines, more than a sweep looks at, wait for the one thread
/// such games may hold: they must not crowd the timed games out of the sweeper's view. Every
/// timed game's flag is settled with nobody reading it, wherever its id falls in the index.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiting_engine_games_do_not_starve_the_sweeper() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "crowd");
    settings.engine_threads = 2;
    settings.engine_only_threads = 1;
    // The engine-only thread is taken by the first such game and held until the test ends.
    let released = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hold = released.clone();
    let player: Thinker = Arc::new(move |_, _, _| {
        let until = Instant::now() + Duration::from_secs(30);
        while !hold.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    });
    let app = TestApp::spawn_with_player(settings, player).await;
    for _ in 0..300 {
        let response = app
            .post_json(
                "/v1/games",
                &json!({"game": "pyrga", "seats": {"p1": {"engine": {"level": 1}}, "p2": {"engine": {"level": 1}}}}),
            )
            .await;
        assert_eq!(response.status(), 201);
    }
    let mut timed = Vec::new();
    for _ in 0..8 {
        let created = app
            .create(
                json!({"game": "pyrga", "time_control": {"initial_ms": 300, "increment_ms": 0}}),
            )
            .await;
        timed.push(created.game.id);
    }
    let mut conn = redis.connection();
    let deadline = Instant::now() + Duration::from_secs(12);
    for id in &timed {
        loop {
            let stored: String = redis::cmd("HGET")
                .arg(redis_key("crowd", id, "g"))
                .arg("s")
                .query(&mut conn)
                .unwrap();
            if stored.contains("\"timeout\"") {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "game {id}'s flag was never settled"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    released.store(true, Ordering::SeqCst);
}
