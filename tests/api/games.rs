//! The happy paths of every endpoint.

use pillarz::api::{Catalog, GameView, Seat, Status};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem};

#[tokio::test]
async fn catalog_lists_the_four_games_with_their_start_positions() {
    let app = TestApp::spawn_in_memory().await;
    let response = app.get("/v1/catalog").await;
    assert_eq!(response.status(), StatusCode::OK);
    let catalog: Catalog = response.json().await.unwrap();
    let names: Vec<&str> = catalog.games.iter().map(|g| g.game.as_str()).collect();
    assert_eq!(names, ["pillarz", "pilastri", "pyrga", "alcazar"]);
    let pilastri = &catalog.games[1];
    let variants: Vec<&str> = pilastri.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(variants, ["size-8", "jumpers"]);
    assert_eq!(
        catalog.games[3].start_position,
        "b5,c6,d7,e2,e8,f3,g4,h5 b8 h2 1 -"
    );
    assert_eq!(catalog.games[3].seats[0].name, "Red");
    assert!(catalog.time_controls.max_initial_ms > catalog.time_controls.min_initial_ms);
    // The analysis caps are the service's configuration (Settings::for_tests).
    assert_eq!(catalog.analysis_limits.max_movetime_ms, 5000);
    assert_eq!(catalog.analysis_limits.max_depth, 32);
    assert_eq!(catalog.analysis_limits.max_multipv, 16);
}

#[tokio::test]
async fn create_answers_201_with_location_view_and_tokens() {
    let (app, redis) = TestApp::spawn().await;
    let response = app
        .post_json("/v1/games", &json!({"game": "pillarz"}))
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let body: Value = response.json().await.unwrap();
    let id = body["game"]["id"].as_str().unwrap();
    assert_eq!(location, format!("/v1/games/{id}"));
    assert_eq!(body["game"]["position"], "00000/00000/00000/00000/00000 1");
    assert_eq!(body["game"]["status"], "ongoing");
    assert_eq!(body["game"]["version"], 1);
    let (p1, p2) = (
        body["tokens"]["p1"].as_str().unwrap(),
        body["tokens"]["p2"].as_str().unwrap(),
    );
    assert_eq!(p1.len(), 64);
    assert_ne!(p1, p2);

    // The store holds a compact record with token digests, never the tokens themselves.
    let mut conn = redis.connection();
    let (header, live): (String, String) = redis::cmd("HMGET")
        .arg(crate::helpers::redis_key("test", id, "g"))
        .arg("c")
        .arg("s")
        .query(&mut conn)
        .unwrap();
    for data in [&header, &live] {
        assert!(!data.contains(p1) && !data.contains(p2));
        assert!(data.len() < 400, "compact record: {data}");
    }

    // The tokens are shown only at creation.
    let view: Value = app.get(&location).await.json().await.unwrap();
    assert!(view.get("tokens").is_none());
}

#[tokio::test]
async fn create_from_a_position_with_variants_and_a_clock() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app
        .create(json!({
            "game": "pilastri",
            "variants": ["jumpers"],
            "position": "o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o 2",
            "time_control": {"initial_ms": 60000, "increment_ms": 1000}
        }))
        .await;
    let view = created.game;
    assert_eq!(view.variants, [pillarz::api::Variant::Jumpers]);
    assert_eq!(view.turn, Seat::P2);
    let clock = view.clock.unwrap();
    assert_eq!(clock.initial_ms, 60000);
    assert_eq!(clock.running, Some(Seat::P2));

    // An 8×8 position means size-8 even when not asked for.
    let created = app
        .create(json!({"game": "pilastri", "position": "o,x,o,x,o,x,o,x/x,o,x,o,x,o,x,o/o,x,o,x,o,x,o,x/x,o,x,o,x,o,x,o/o,x,o,x,o,x,o,x/x,o,x,o,x,o,x,o/o,x,o,x,o,x,o,x/x,o,x,o,x,o,x,o 1"}))
        .await;
    assert_eq!(created.game.variants, [pillarz::api::Variant::Size8]);
}

#[tokio::test]
async fn get_answers_with_an_etag_and_honours_if_none_match() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "alcazar"})).await;
    let path = format!("/v1/games/{}", created.game.id);
    let response = app.get(&path).await;
    assert_eq!(response.headers()["etag"], "\"1\"");
    let response = app
        .client
        .get(app.url(&path))
        .header("if-none-match", "\"1\"")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    // If-None-Match compares weakly (RFC 9110, 13.1.2): a tag a proxy marked weak, one of a
    // list, several header lines, or `*` match too.
    for tags in [
        &["W/\"1\""][..],
        &["\"7\", W/\"1\""],
        &["\"7\"", "\"1\""],
        &["*"],
    ] {
        let mut request = app.client.get(app.url(&path));
        for tag in tags {
            request = request.header("if-none-match", *tag);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_MODIFIED, "{tags:?}");
    }
    let response = app
        .client
        .get(app.url(&path))
        .header("if-none-match", "W/\"2\", \"11\"")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mv = app
        .play(&created.game.id, &created.tokens[&Seat::P1], "e8d9")
        .await;
    assert_eq!(mv.headers()["etag"], "\"2\"");
    let response = app
        .client
        .get(app.url(&path))
        .header("if-none-match", "\"1\"")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn moves_are_parsed_leniently_and_answered_canonically() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    let response = app.play(id, &created.tokens[&Seat::P1], "  D3 + c2 ").await;
    assert_eq!(response.status(), StatusCode::OK);
    let view: GameView = response.json().await.unwrap();
    assert_eq!(view.moves, ["c2+d3"]);
    assert_eq!(view.ply, 1);
    assert_eq!(view.version, 2);
    assert_eq!(view.turn, Seat::P2);
    assert_eq!(view.position, "00000/00000/0000x0/000x00/00000 2");
}

#[tokio::test]
async fn legal_moves_lists_every_move_canonically() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "alcazar"})).await;
    let mut moves = app.legal_moves(&created.game.id).await;
    moves.sort();
    assert_eq!(moves.len(), 30);
    assert!(moves.contains(&"Kd8".to_string()) && moves.contains(&"h5i6".to_string()));
    let created = app
        .create(json!({"game": "pyrga", "position": "-,-,-,-/-,-,-,-/-,S,t^,-/-,-,-,- 1 Tc2N"}))
        .await;
    assert_eq!(app.legal_moves(&created.game.id).await.len(), 9);
}

#[tokio::test]
async fn resign_ends_the_game_for_the_opponent() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "pyrga"})).await;
    let id = &created.game.id;
    let response = app.resign(id, &created.tokens[&Seat::P2]).await;
    assert_eq!(response.status(), StatusCode::OK);
    let view: GameView = response.json().await.unwrap();
    assert_eq!(view.status, Status::Finished);
    assert_eq!(serde_json::to_value(view.result).unwrap(), "p1");
    assert_eq!(serde_json::to_value(view.termination).unwrap(), "resign");
    assert!(app.legal_moves(id).await.is_empty());
    let again = app.resign(id, &created.tokens[&Seat::P1]).await;
    assert_problem(again, 409, "game_over").await;
}

#[tokio::test]
async fn a_retried_move_with_the_same_idempotency_key_gets_the_first_answer() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    let send = || {
        app.client
            .post(app.url(&format!("/v1/games/{id}/moves")))
            .bearer_auth(&created.tokens[&Seat::P1])
            .header("idempotency-key", "move-1")
            .json(&json!({"move": "a1+b1"}))
            .send()
    };
    let first = send().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let first: Value = first.json().await.unwrap();
    let second = send().await.unwrap();
    assert_eq!(second.status(), StatusCode::OK);
    let second: Value = second.json().await.unwrap();
    assert_eq!(first, second);
    let view = app.view(id).await;
    assert_eq!(view.moves, ["a1+b1"], "the move landed once");
    // Without the key the same request is a new move: now it is p2's turn.
    let third = app.play(id, &created.tokens[&Seat::P1], "a1+b1").await;
    assert_problem(third, 409, "not_your_turn").await;
}

#[tokio::test]
async fn health_endpoints_answer() {
    let (app, _redis) = TestApp::spawn().await;
    assert_eq!(app.get("/healthz/live").await.status(), StatusCode::OK);
    let ready = app.get("/healthz/ready").await;
    assert_eq!(ready.status(), StatusCode::OK);
    assert_eq!(ready.json::<Value>().await.unwrap()["status"], "ok");
}
