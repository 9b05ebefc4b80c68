//! The service-wide ply cap: a game that reaches it ends as a draw by `move_limit`.

use pillarz::api::{GameView, Seat, Status};
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{RedisServer, TestApp, assert_problem, settings_for};

/// Plays legal moves up to the cap of 6 plies: the 6th move ends the game as a draw, and the
/// game refuses a 7th.
async fn a_game_at_the_cap_is_drawn(app: &TestApp) {
    let created = app.create(json!({"game": "alcazar"})).await;
    let id = &created.game.id;
    let mut view: GameView = created.game.clone();
    for ply in 0..6 {
        assert_eq!(view.status, Status::Ongoing, "ongoing at ply {ply}");
        let mv = app.legal_moves(id).await[0].clone();
        let response = app.play(id, &created.tokens[&view.turn], &mv).await;
        assert_eq!(response.status(), StatusCode::OK, "ply {ply}");
        view = response.json().await.unwrap();
    }
    assert_eq!(view.ply, 6);
    assert_eq!(view.status, Status::Finished);
    assert_eq!(serde_json::to_value(view.result).unwrap(), "draw");
    assert_eq!(
        serde_json::to_value(view.termination).unwrap(),
        "move_limit"
    );
    assert_eq!(app.view(id).await.status, Status::Finished, "as stored");
    assert!(app.legal_moves(id).await.is_empty());
    let after = app.play(id, &created.tokens[&view.turn], "a1").await;
    assert_problem(after, 409, "game_over").await;
    // A game below the cap is unaffected, and resigning still works.
    let other = app.create(json!({"game": "alcazar"})).await;
    let resigned = app.resign(&other.game.id, &other.tokens[&Seat::P1]).await;
    assert_eq!(resigned.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_game_that_reaches_the_ply_cap_ends_as_a_draw_redis() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "cap");
    settings.max_plies = 6;
    let app = TestApp::spawn_with(settings).await;
    a_game_at_the_cap_is_drawn(&app).await;
    // The finished game got the finished lifetime.
    let mut conn = redis.connection();
    let keys: Vec<String> = redis::cmd("KEYS").arg("cap:*:g").query(&mut conn).unwrap();
    assert!(!keys.is_empty());
}

#[tokio::test]
async fn a_game_that_reaches_the_ply_cap_ends_as_a_draw_memory() {
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.max_plies = 6;
    let app = TestApp::spawn_with(settings).await;
    a_game_at_the_cap_is_drawn(&app).await;
}

/// Both seats engines: the service itself stops at the cap. (Pyrga cannot end by its rules
/// within 6 plies: three towers take at least nine pieces.)
#[tokio::test]
async fn engine_against_engine_stops_at_the_ply_cap() {
    const CAP: u64 = 6;
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.max_plies = CAP;
    let app = TestApp::spawn_with(settings).await;
    let created = app
        .create(json!({"game": "pyrga", "seats": {"p1": {"engine": {"level": 1}}, "p2": {"engine": {"level": 1}}}}))
        .await;
    let id = &created.game.id;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let view = app.view(id).await;
        assert!(
            view.ply <= CAP,
            "the engines played past the cap: {}",
            view.ply
        );
        if view.status == Status::Finished {
            assert_eq!(view.ply, CAP);
            assert_eq!(
                serde_json::to_value(view.termination).unwrap(),
                "move_limit"
            );
            assert_eq!(serde_json::to_value(view.result).unwrap(), "draw");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the engines stopped at {}",
            view.ply
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Nothing moves after the end.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(app.view(id).await.ply, CAP);
}

/// A stored game is analysed as the service will play it on: a line that reaches the cap is a
/// draw, so a win that would land beyond it is no win, and a game the cap ended is a draw.
#[tokio::test]
async fn analysis_of_a_stored_game_knows_the_cap() {
    // Seat p2 to move wins in 3 plies (tests/api/analysis.rs proves it with no cap).
    const WIN_IN_3: &str = "0o00x00/1231x0/21o040/11200/01000 2";
    for (cap, wins) in [(3, true), (2, false)] {
        let mut settings = pillarz::service::configuration::Settings::for_tests();
        settings.max_plies = cap;
        let app = TestApp::spawn_with(settings).await;
        let created = app
            .create(json!({"game": "pillarz", "position": WIN_IN_3}))
            .await;
        let analysis = analyse_stored(&app, &created.game.id).await;
        if wins {
            assert_eq!(analysis["score"], json!({"win_in": 3}), "cap {cap}");
        } else {
            assert!(
                analysis["score"].get("value").is_some(),
                "cap {cap}: {analysis}"
            );
        }
    }
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.max_plies = 2;
    let app = TestApp::spawn_with(settings).await;
    let created = app.create(json!({"game": "alcazar"})).await;
    let id = &created.game.id;
    for seat in [Seat::P1, Seat::P2] {
        let mv = app.legal_moves(id).await[0].clone();
        assert_eq!(
            app.play(id, &created.tokens[&seat], &mv).await.status(),
            200
        );
    }
    assert_eq!(
        serde_json::to_value(app.view(id).await.termination).unwrap(),
        "move_limit"
    );
    let analysis = analyse_stored(&app, id).await;
    assert_eq!(analysis["score"], json!("draw"), "{analysis}");
    assert_eq!(analysis["best_move"], serde_json::Value::Null, "{analysis}");
}

async fn analyse_stored(app: &TestApp, id: &str) -> serde_json::Value {
    let response = app
        .post_json(
            &format!("/v1/games/{id}/analysis"),
            &json!({"limits": {"depth": 9}}),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

/// An engine seat thinks knowing how many plies are left before the cap.
#[tokio::test]
async fn an_engine_seat_thinks_with_the_plies_left_before_the_cap() {
    use pillarz::service::engine_seats::{Thinker, engine_thinker};
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let engine = engine_thinker();
    let player: Thinker = Arc::new(move |seat_engine, state, turn| {
        record.lock().unwrap().push(turn.plies_to_limit);
        engine(seat_engine, state, turn)
    });
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.max_plies = 6;
    let app = TestApp::spawn_with_player(settings, player).await;
    let created = app
        .create(json!({"game": "pyrga", "seats": {"p2": {"engine": {"level": 1}}}}))
        .await;
    let id = &created.game.id;
    let played = app.play(id, &created.tokens[&Seat::P1], "Sa1").await;
    assert_eq!(played.status(), StatusCode::OK);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while app.view(id).await.ply < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the engine did not move"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|&left| left == Some(5)), "{seen:?}");
}
