//! Computer opponents: full games against each level-1 engine, engines across replicas, and
//! a lease left by a dead replica.

use std::time::{Duration, Instant};

use pillarz::api::{GameView, Seat, Status};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::helpers::{RedisServer, TestApp, settings_for};

/// Polls the game until `done` holds (or fails after 20 s).
async fn wait_for(app: &TestApp, id: &str, done: impl Fn(&GameView) -> bool) -> GameView {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let view = app.view(id).await;
        if done(&view) {
            return view;
        }
        assert!(Instant::now() < deadline, "timed out waiting: {view:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn full_games_against_each_level_1_engine() {
    let (app, _redis) = TestApp::spawn().await;
    let mut rng = SmallRng::seed_from_u64(5);
    for (i, game) in ["pillarz", "pilastri", "pyrga", "alcazar"]
        .into_iter()
        .enumerate()
    {
        let human = if i % 2 == 0 { Seat::P1 } else { Seat::P2 };
        let engine = if human == Seat::P1 { "p2" } else { "p1" };
        let created = app
            .create(json!({"game": game, "seats": {engine: {"engine": {"level": 1}}}}))
            .await;
        assert_eq!(created.tokens.len(), 1, "no token for the engine's seat");
        assert!(created.tokens.contains_key(&human));
        assert_eq!(created.game.engine_seats.len(), 1);
        let id = created.game.id.clone();
        let token = created.tokens[&human].clone();
        let mut engine_moves = 0;
        loop {
            let view = wait_for(&app, &id, |v| {
                v.status == Status::Finished || v.turn == human
            })
            .await;
            if view.status == Status::Finished {
                assert!(
                    engine_moves > 0 || view.ply <= 1,
                    "{game}: the engine played"
                );
                break;
            }
            engine_moves += usize::from(view.ply > 0 && (view.ply > 1 || human == Seat::P2));
            let moves = app.legal_moves(&id).await;
            let mv = &moves[rng.random_range(0..moves.len())];
            let response = app.play(&id, &token, mv).await;
            assert_eq!(response.status(), 200, "{game} {mv}");
        }
        let view = app.view(&id).await;
        assert!(view.result.is_some(), "{game} finished with a result");
        pillarz::rules::AnyRecord::replay(
            view.game,
            Default::default(),
            &view.start_position,
            &view.moves,
        )
        .expect("every move, the engine's too, was legal");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_engine_game_across_two_replicas_runs_to_its_end() {
    let redis = RedisServer::start();
    let a = TestApp::spawn_with(settings_for(Some(&redis), "bots")).await;
    let b = TestApp::spawn_with(settings_for(Some(&redis), "bots")).await;
    let created = a
        .create(json!({"game": "pyrga", "seats": {"p1": {"engine": {"level": 2}}, "p2": {"engine": {"level": 1}}}}))
        .await;
    assert!(created.tokens.is_empty());
    let id = created.game.id.clone();
    // Both replicas keep looking at the game, so both are nudged all the time.
    let mut last_ply = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let view = if last_ply % 2 == 0 {
            a.view(&id).await
        } else {
            b.view(&id).await
        };
        assert!(view.ply >= last_ply);
        last_ply = view.ply;
        if view.status == Status::Finished {
            assert_eq!(view.moves.len() as u64, view.ply);
            pillarz::rules::AnyRecord::replay(
                "pyrga".parse().unwrap(),
                Default::default(),
                &view.start_position,
                &view.moves,
            )
            .unwrap();
            break;
        }
        assert!(Instant::now() < deadline, "stalled at ply {}", view.ply);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_lease_left_by_a_dead_replica_lapses_and_the_engine_resumes() {
    let redis = RedisServer::start();
    let app = TestApp::spawn_with(settings_for(Some(&redis), "lease")).await;
    let created = app
        .create(json!({"game": "pillarz", "seats": {"p2": {"engine": {"level": 1}}}}))
        .await;
    let id = created.game.id.clone();
    // A replica that died while thinking for p2 left its lease behind.
    let mut conn = redis.connection();
    let _: () = redis::cmd("SET")
        .arg(crate::helpers::redis_key("lease", &id, "l"))
        .arg("dead-replica")
        .arg("PX")
        .arg(1200)
        .query(&mut conn)
        .unwrap();
    let started = Instant::now();
    assert_eq!(
        app.play(&id, &created.tokens[&Seat::P1], "a1+b1")
            .await
            .status(),
        200
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        app.view(&id).await.ply,
        1,
        "nobody moves while the lease is held"
    );
    let view = wait_for(&app, &id, |v| v.ply == 2).await;
    assert!(started.elapsed() >= Duration::from_millis(1000));
    assert_eq!(view.turn, Seat::P1);
}

#[tokio::test]
async fn bad_engine_levels_are_refused() {
    let app = TestApp::spawn_in_memory().await;
    for body in [
        json!({"game": "pillarz", "seats": {"p2": {"engine": {"level": 0}}}}),
        json!({"game": "pillarz", "seats": {"p2": {"engine": {"level": 9}}}}),
        json!({"game": "pillarz", "seats": {"p3": {"engine": {"level": 1}}}}),
        json!({"game": "pillarz", "seats": {"p2": {"robot": {}}}}),
    ] {
        crate::helpers::assert_problem(app.post_json("/v1/games", &body).await, 400, "bad_request")
            .await;
    }
}

/// A game's engine seats think on its creator's analysis time, as an analysis would: one
/// caller cannot take every thinking thread by creating games of engines. Once the creator's
/// time is spent, its engines wait until it has time again, and its own analyses are
/// refused.
async fn engines_think_on_their_creators_analysis_time(
    mut settings: pillarz::service::configuration::Settings,
) {
    use pillarz::service::quota::Quotas;
    settings.anon_quotas = Some(Quotas::parse("analysis=100/min", Quotas::ANONYMOUS).unwrap());
    let app = TestApp::spawn_with(settings).await;
    // Level 8 thinks 1.5 s a move; a game of Pyrga lasts far longer than the few plies here.
    let created = app
        .create(json!({"game": "pyrga", "seats": {"p1": {"engine": {"level": 8}}, "p2": {"engine": {"level": 8}}}}))
        .await;
    let id = created.game.id.clone();
    wait_for(&app, &id, |v| v.ply >= 1).await;
    let analysis = app
        .post_json(
            "/v1/analysis",
            &json!({"game": "pillarz", "position": "00000/00o00x0/00000/00x00o0/00000 1",
                    "limits": {"depth": 1}}),
        )
        .await;
    crate::helpers::assert_problem(analysis, 429, "rate_limited").await;
    // A search is charged at most a window's worth (GCRA): the second seat thinks once the
    // creator is back under its limit, about a second later, and then owes a whole minute.
    wait_for(&app, &id, |v| v.ply >= 2).await;
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(app.view(&id).await.ply, 2, "an engine thought unpaid");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn engines_think_on_their_creators_analysis_time_redis() {
    let redis = RedisServer::start();
    engines_think_on_their_creators_analysis_time(settings_for(Some(&redis), "pay")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn engines_think_on_their_creators_analysis_time_memory() {
    engines_think_on_their_creators_analysis_time(
        pillarz::service::configuration::Settings::for_tests(),
    )
    .await;
}
