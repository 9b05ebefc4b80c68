//! Clocks: lazily computed, only the side to move's runs, and running out ends the game.

use std::time::Duration;

use pillarz::api::{Seat, Status};
use serde_json::json;

use crate::helpers::{TestApp, assert_problem};

#[tokio::test]
async fn only_the_side_to_move_loses_time_and_increments_are_added() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app
        .create(
            json!({"game": "pyrga", "time_control": {"initial_ms": 60000, "increment_ms": 500}}),
        )
        .await;
    let id = &created.game.id;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let clock = app.clock(id).await;
    assert_eq!(clock.running, Some(Seat::P1));
    assert!(clock.remaining_ms[&Seat::P1] <= 60000 - 150);
    assert_eq!(clock.remaining_ms[&Seat::P2], 60000);
    assert!(clock.server_now >= clock.turn_started_at + 150);

    let response = app.play(id, &created.tokens[&Seat::P1], "Sa1").await;
    assert_eq!(response.status(), 200);
    let clock = app.clock(id).await;
    assert_eq!(clock.running, Some(Seat::P2));
    let p1 = clock.remaining_ms[&Seat::P1];
    assert!(p1 <= 60000 - 150 + 500 && p1 > 59000, "p1 has {p1}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let again = app.clock(id).await;
    assert_eq!(again.remaining_ms[&Seat::P1], p1, "p1's clock is stopped");
    assert!(again.remaining_ms[&Seat::P2] < clock.remaining_ms[&Seat::P2]);
}

#[tokio::test]
async fn a_clock_runs_out_with_nobody_calling_in_between() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app
        .create(json!({"game": "alcazar", "time_control": {"initial_ms": 300, "increment_ms": 0}}))
        .await;
    let id = &created.game.id;
    // Nothing happens on the server while we wait: the clock is computed when next read.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let view = app.view(id).await;
    assert_eq!(view.status, Status::Finished);
    assert_eq!(serde_json::to_value(view.result).unwrap(), "p2");
    assert_eq!(serde_json::to_value(view.termination).unwrap(), "timeout");
    assert_eq!(view.version, 2, "the timeout was written once");
    let clock = view.clock.unwrap();
    assert_eq!(clock.remaining_ms[&Seat::P1], 0);
    assert_eq!(clock.running, None);
    // Reading again does not write again, and a late move is refused.
    assert_eq!(app.view(id).await.version, 2);
    let late = app.play(id, &created.tokens[&Seat::P1], "Kd8").await;
    assert_problem(late, 409, "game_over").await;
    assert_eq!(app.view(id).await.version, 2);
}

#[tokio::test]
async fn a_move_after_the_flag_is_refused_and_ends_the_game() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app
        .create(json!({"game": "pillarz", "time_control": {"initial_ms": 200, "increment_ms": 0}}))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let late = app
        .play(&created.game.id, &created.tokens[&Seat::P1], "a1+b1")
        .await;
    assert_problem(late, 409, "game_over").await;
    let view = app.view(&created.game.id).await;
    assert_eq!(serde_json::to_value(view.termination).unwrap(), "timeout");
    assert!(view.moves.is_empty());
}

/// Replicas whose clocks are five minutes fast and five minutes slow share a game with an
/// honest one: every clock decision uses the store's time, so nobody gains or loses time.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_whose_clock_is_minutes_off_neither_grants_nor_steals_time() {
    let redis = crate::helpers::RedisServer::start();
    let replica = |skew_ms: i64| {
        let mut settings = crate::helpers::settings_for(Some(&redis), "skew");
        settings.clock_skew_ms = skew_ms;
        TestApp::spawn_with(settings)
    };
    let honest = replica(0).await;
    let fast = replica(5 * 60_000).await;
    let slow = replica(-5 * 60_000).await;
    let initial = 60_000;
    // Created by the fast replica: the clock starts now, not in five minutes.
    let created = fast
        .create(
            json!({"game": "pyrga", "time_control": {"initial_ms": initial, "increment_ms": 0}}),
        )
        .await;
    let id = &created.game.id;
    let wall = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let started = created.game.clock.as_ref().unwrap().turn_started_at;
    assert!(started.abs_diff(wall()) < 2000, "the clock started now");
    // p1 thinks 400 ms, then moves through the slow replica (five minutes behind: a naive
    // replica would charge nothing).
    tokio::time::sleep(Duration::from_millis(400)).await;
    let moved = slow.play(id, &created.tokens[&Seat::P1], "Sa1").await;
    assert_eq!(moved.status(), 200);
    // p2 thinks 400 ms, then moves through the fast replica (a naive one would flag p2).
    tokio::time::sleep(Duration::from_millis(400)).await;
    let moved = fast.play(id, &created.tokens[&Seat::P2], "Cb1").await;
    assert_eq!(moved.status(), 200, "p2 did not lose on time");
    let clock = honest.clock(id).await;
    for seat in [Seat::P1, Seat::P2] {
        let used = initial - clock.remaining_ms[&seat];
        assert!(
            (300..1500).contains(&used),
            "{seat:?} was charged {used} ms for about 400 ms of thought"
        );
    }
    // Every replica reports the same clocks.
    for app in [&fast, &slow] {
        let seen = app.clock(id).await;
        assert!(seen.server_now.abs_diff(clock.server_now) < 2000);
        assert_eq!(seen.remaining_ms[&Seat::P2], clock.remaining_ms[&Seat::P2]);
    }
}
