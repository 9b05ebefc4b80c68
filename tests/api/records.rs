//! `GET /v1/games/{id}/record`: every move with its ply, seat, time and clocks, the result and
//! the ending, as JSON and as text; a record's position starts a new game.

use pillarz::api::{GameRecord, Seat, Status, TerminationKind};
use serde_json::json;

use crate::helpers::TestApp;

async fn record(app: &TestApp, id: &str) -> GameRecord {
    let response = app.get(&format!("/v1/games/{id}/record")).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_resigned_timed_game_has_every_move_with_its_clocks() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app
        .create(json!({"game": "pillarz",
                       "time_control": {"initial_ms": 60000, "increment_ms": 1000}}))
        .await;
    let id = &created.game.id;
    let tokens = [&created.tokens[&Seat::P1], &created.tokens[&Seat::P2]];
    let mut played = Vec::new();
    for ply in 0..3 {
        let mv = app.legal_moves(id).await[0].clone();
        assert_eq!(app.play(id, tokens[ply % 2], &mv).await.status(), 200);
        played.push(mv);
    }
    assert_eq!(app.resign(id, tokens[1]).await.status(), 200);
    let view = app.view(id).await;

    let rec = record(&app, id).await;
    assert_eq!(rec.id, *id);
    assert_eq!(rec.start_position, view.start_position);
    assert_eq!(rec.position, view.position);
    assert_eq!(rec.status, Status::Finished);
    assert_eq!(rec.termination, Some(TerminationKind::Resign));
    assert_eq!(rec.ended_by, Some(Seat::P2));
    assert_eq!(rec.time_control.unwrap().initial_ms, 60000);
    let moves: Vec<&str> = rec.moves.iter().map(|m| m.mv.as_str()).collect();
    assert_eq!(moves, view.moves);
    assert_eq!(moves, played);
    let seats: Vec<Seat> = rec.moves.iter().map(|m| m.seat).collect();
    assert_eq!(seats, [Seat::P1, Seat::P2, Seat::P1]);
    let mut last = rec.created_at;
    for (i, m) in rec.moves.iter().enumerate() {
        assert_eq!(m.ply, i as u64 + 1);
        assert!(m.at >= last, "times never go back");
        last = m.at;
        let clocks = m.remaining_ms.as_ref().expect("a timed game's clocks");
        // The mover gained its increment; nobody has more than the start plus increments.
        assert!(
            clocks[&m.seat] > 55_000 && clocks[&m.seat] <= 62_000,
            "{clocks:?}"
        );
    }
    assert!(rec.ended_at.unwrap() >= last);

    let text = app
        .client
        .get(app.url(&format!("/v1/games/{id}/record")))
        .header("accept", "text/plain")
        .send()
        .await
        .unwrap();
    assert!(
        text.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    // The answer depends on Accept, and says so to caches.
    let vary = text.headers()["vary"].to_str().unwrap();
    assert!(
        vary.split(',')
            .any(|v| v.trim().eq_ignore_ascii_case("accept")),
        "{vary}"
    );
    let text = text.text().await.unwrap();
    for needle in [
        "[Game \"pillarz\"]".to_string(),
        format!("[Position \"{}\"]", view.position),
        "[Termination \"resign\"]".to_string(),
        format!("1. {}", played[0]),
        format!("3. {}", played[2]),
    ] {
        assert!(text.contains(&needle), "{needle} in\n{text}");
    }

    // The record's position starts a new game.
    let next = app
        .create(json!({"game": "pillarz", "position": rec.position}))
        .await;
    assert_eq!(next.game.position, view.position);
}

#[tokio::test]
async fn a_game_finished_by_the_rules_records_its_ending_untimed() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "pyrga"})).await;
    let id = &created.game.id;
    let mut ply = 0;
    loop {
        let moves = app.legal_moves(id).await;
        if moves.is_empty() {
            break;
        }
        let seat = if ply % 2 == 0 { Seat::P1 } else { Seat::P2 };
        let response = app.play(id, &created.tokens[&seat], &moves[0]).await;
        assert_eq!(response.status(), 200);
        ply += 1;
    }
    let view = app.view(id).await;
    let rec = record(&app, id).await;
    assert_eq!(rec.moves.len() as u64, view.ply);
    assert_eq!(rec.result, view.result);
    assert_eq!(rec.termination, view.termination);
    assert!(rec.termination.is_some());
    assert_eq!(rec.ended_by, None);
    assert_eq!(rec.ended_at, Some(rec.moves.last().unwrap().at));
    assert!(rec.moves.iter().all(|m| m.remaining_ms.is_none()));
    assert!(rec.time_control.is_none());
}

#[tokio::test]
async fn an_unknown_game_has_no_record() {
    let app = TestApp::spawn_in_memory().await;
    let missing = app
        .get("/v1/games/6a3e7f3a-0000-4000-8000-000000000000/record")
        .await;
    crate::helpers::assert_problem(missing, 404, "game_not_found").await;
}
