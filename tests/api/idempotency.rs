//! `Idempotency-Key`: scoped to (game, seat, operation), bound to the request it first came
//! with, checked after the seat token, and never a `409` for an honest retry — on Redis (one
//! or two replicas) and on the memory store.

use std::sync::Arc;

use pillarz::api::{CreatedGame, GameView, Seat, Status};
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{
    RedisServer, TestApp, assert_problem, move_with_key, redis_key, settings_for,
};

async fn resign_with_key(app: &TestApp, id: &str, token: &str, key: &str) -> Response {
    app.client
        .post(app.url(&format!("/v1/games/{id}/resign")))
        .bearer_auth(token)
        .header("idempotency-key", key)
        .send()
        .await
        .unwrap()
}

async fn pillarz_game(app: &TestApp) -> (CreatedGame, String, String) {
    let created = app.create(json!({"game": "pillarz"})).await;
    let p1 = created.tokens[&Seat::P1].clone();
    let p2 = created.tokens[&Seat::P2].clone();
    (created, p1, p2)
}

/// p1 moves with key `1`; p2 then sends a different legal move with the same key: it is
/// played (the key is p2's own), not answered with p1's old game.
async fn other_seat_reusing_a_key_gets_its_move_played(app: &TestApp) {
    let (created, p1, p2) = pillarz_game(app).await;
    let id = &created.game.id;
    let first = move_with_key(app, id, &p1, "1", "a1+b1").await;
    assert_eq!(first.status(), StatusCode::OK);
    let p2_move = app.legal_moves(id).await[0].clone();
    let second = move_with_key(app, id, &p2, "1", &p2_move).await;
    assert_eq!(second.status(), StatusCode::OK);
    let answer: GameView = second.json().await.unwrap();
    assert_eq!(answer.ply, 2, "p2's own answer, not p1's replayed");
    let view = app.view(id).await;
    assert_eq!(
        view.moves.len(),
        2,
        "p2's move was played: {:?}",
        view.moves
    );
    assert_eq!(view.moves[1], p2_move);
}

#[tokio::test]
async fn another_seat_reusing_a_key_has_its_move_played_redis() {
    let (app, _redis) = TestApp::spawn().await;
    other_seat_reusing_a_key_gets_its_move_played(&app).await;
}

#[tokio::test]
async fn another_seat_reusing_a_key_has_its_move_played_memory() {
    let app = TestApp::spawn_in_memory().await;
    other_seat_reusing_a_key_gets_its_move_played(&app).await;
}

/// A resignation sent with the key of an earlier move is a resignation.
async fn resignation_reusing_a_move_key_resigns(app: &TestApp) {
    let (created, p1, _) = pillarz_game(app).await;
    let id = &created.game.id;
    let first = move_with_key(app, id, &p1, "k", "a1+b1").await;
    assert_eq!(first.status(), StatusCode::OK);
    let resigned = resign_with_key(app, id, &p1, "k").await;
    assert_eq!(resigned.status(), StatusCode::OK);
    let answer: GameView = resigned.json().await.unwrap();
    assert_eq!(answer.status, Status::Finished);
    let view = app.view(id).await;
    assert_eq!(view.status, Status::Finished, "the game ended");
    assert_eq!(serde_json::to_value(view.termination).unwrap(), "resign");
    assert_eq!(serde_json::to_value(view.result).unwrap(), "p2");
    // And the resignation's own retry gets the resignation's answer.
    let again = resign_with_key(app, id, &p1, "k").await;
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(
        again.json::<GameView>().await.unwrap().version,
        view.version
    );
}

#[tokio::test]
async fn a_resignation_reusing_a_move_key_resigns_redis() {
    let (app, _redis) = TestApp::spawn().await;
    resignation_reusing_a_move_key_resigns(&app).await;
}

#[tokio::test]
async fn a_resignation_reusing_a_move_key_resigns_memory() {
    let app = TestApp::spawn_in_memory().await;
    resignation_reusing_a_move_key_resigns(&app).await;
}

/// The same seat reusing a key for a different move gets `422 idempotency_key_reused`, and
/// the first answer is still what the first request's retries get.
async fn same_key_different_request_is_refused(app: &TestApp) {
    let (created, p1, p2) = pillarz_game(app).await;
    let id = &created.game.id;
    let first = move_with_key(app, id, &p1, "k", "a1+b1").await;
    assert_eq!(first.status(), StatusCode::OK);
    let first: Value = first.json().await.unwrap();
    let p2_move = app.legal_moves(id).await[0].clone();
    assert_eq!(app.play(id, &p2, &p2_move).await.status(), StatusCode::OK);
    // p1 to move again: a different move under the old key is not a retry.
    let other = app.legal_moves(id).await[0].clone();
    let reused = move_with_key(app, id, &p1, "k", &other).await;
    let body = assert_problem(reused, 422, "idempotency_key_reused").await;
    assert!(body["detail"].as_str().unwrap().contains("Idempotency-Key"));
    assert_eq!(app.view(id).await.ply, 2, "nothing was played");
    // The honest retry still gets the first answer.
    let retry = move_with_key(app, id, &p1, "k", "a1+b1").await;
    assert_eq!(retry.status(), StatusCode::OK);
    assert_eq!(retry.json::<Value>().await.unwrap(), first);
}

#[tokio::test]
async fn the_same_key_with_a_different_move_is_refused_redis() {
    let (app, _redis) = TestApp::spawn().await;
    same_key_different_request_is_refused(&app).await;
}

#[tokio::test]
async fn the_same_key_with_a_different_move_is_refused_memory() {
    let app = TestApp::spawn_in_memory().await;
    same_key_different_request_is_refused(&app).await;
}

/// A token that holds no seat never sees a stored answer: `403`, not a replay.
async fn the_token_is_checked_before_a_replay(app: &TestApp) {
    let (created, p1, _) = pillarz_game(app).await;
    let id = &created.game.id;
    assert_eq!(
        move_with_key(app, id, &p1, "k", "a1+b1").await.status(),
        StatusCode::OK
    );
    let stranger = "ab".repeat(32);
    let replayed = move_with_key(app, id, &stranger, "k", "a1+b1").await;
    assert_problem(replayed, 403, "wrong_seat").await;
    let other_game = app.create(json!({"game": "pillarz"})).await;
    let foreign = &other_game.tokens[&Seat::P1];
    let replayed = move_with_key(app, id, foreign, "k", "a1+b1").await;
    assert_problem(replayed, 403, "wrong_seat").await;
}

#[tokio::test]
async fn the_seat_token_is_checked_before_an_answer_is_replayed_redis() {
    let (app, _redis) = TestApp::spawn().await;
    the_token_is_checked_before_a_replay(&app).await;
}

#[tokio::test]
async fn the_seat_token_is_checked_before_an_answer_is_replayed_memory() {
    let app = TestApp::spawn_in_memory().await;
    the_token_is_checked_before_a_replay(&app).await;
}

/// Many copies of one request, sent at once through two replicas: every copy gets the same
/// `200`, and the move lands once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_identical_retries_all_get_the_first_answer() {
    let redis = RedisServer::start();
    let a = Arc::new(TestApp::spawn_with(settings_for(Some(&redis), "shared")).await);
    let b = Arc::new(TestApp::spawn_with(settings_for(Some(&redis), "shared")).await);
    for round in 0..5 {
        let (created, p1, _) = pillarz_game(&a).await;
        let id = created.game.id.clone();
        let mut tasks = Vec::new();
        for i in 0..16 {
            let app = if i % 2 == 0 { a.clone() } else { b.clone() };
            let (id, p1) = (id.clone(), p1.clone());
            tasks.push(tokio::spawn(async move {
                let response = move_with_key(&app, &id, &p1, "same", "a1+b1").await;
                let status = response.status().as_u16();
                (status, response.text().await.unwrap())
            }));
        }
        let mut bodies = Vec::new();
        for task in tasks {
            let (status, body) = task.await.unwrap();
            assert_eq!(status, 200, "round {round}: an honest retry got {body}");
            bodies.push(serde_json::from_str::<Value>(&body).unwrap());
        }
        assert!(bodies.iter().all(|b| *b == bodies[0]), "one answer for all");
        assert_eq!(b.view(&id).await.moves, ["a1+b1"], "the move landed once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_identical_retries_all_get_the_first_answer_memory() {
    let app = Arc::new(TestApp::spawn_in_memory().await);
    for round in 0..5 {
        let (created, p1, _) = pillarz_game(&app).await;
        let id = created.game.id.clone();
        let mut tasks = Vec::new();
        for _ in 0..16 {
            let (app, id, p1) = (app.clone(), id.clone(), p1.clone());
            tasks.push(tokio::spawn(async move {
                let response = move_with_key(&app, &id, &p1, "same", "a1+b1").await;
                let status = response.status().as_u16();
                (status, response.text().await.unwrap())
            }));
        }
        for task in tasks {
            let (status, body) = task.await.unwrap();
            assert_eq!(status, 200, "round {round}: an honest retry got {body}");
        }
        assert_eq!(app.view(&id).await.moves, ["a1+b1"], "the move landed once");
    }
}

/// The first replica answers and dies; the client's retry reaches the other one and gets the
/// first answer, not a second move or a `409`.
#[tokio::test]
async fn a_retry_on_another_replica_after_a_crash_gets_the_first_answer() {
    let redis = RedisServer::start();
    let a = TestApp::spawn_with(settings_for(Some(&redis), "shared")).await;
    let b = TestApp::spawn_with(settings_for(Some(&redis), "shared")).await;
    let (created, p1, _) = pillarz_game(&a).await;
    let id = &created.game.id;
    let first = move_with_key(&a, id, &p1, "once", "a1+b1").await;
    assert_eq!(first.status(), StatusCode::OK);
    let first: Value = first.json().await.unwrap();
    a.kill().await;
    let retry = move_with_key(&b, id, &p1, "once", "a1+b1").await;
    assert_eq!(retry.status(), StatusCode::OK);
    assert_eq!(retry.json::<Value>().await.unwrap(), first);
    let view = b.view(id).await;
    assert_eq!(view.moves, ["a1+b1"]);
    // One answer was saved, and it expires with its game.
    let mut conn = redis.connection();
    let answers = redis_key("shared", id, "i");
    let saved: i64 = redis::cmd("HLEN").arg(&answers).query(&mut conn).unwrap();
    assert_eq!(saved, 1);
    let ttl: i64 = redis::cmd("PTTL").arg(&answers).query(&mut conn).unwrap();
    assert!(ttl > 0, "the answer expires");
}
