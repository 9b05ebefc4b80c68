//! Two replicas sharing one Redis: racing submissions land exactly once, and none is lost.

use std::sync::Arc;

use pillarz::api::{GameView, Seat};
use serde_json::json;

use crate::helpers::{RedisServer, TestApp, settings_for};

async fn two_replicas(redis: &RedisServer) -> (Arc<TestApp>, Arc<TestApp>) {
    let a = TestApp::spawn_with(settings_for(Some(redis), "shared")).await;
    let b = TestApp::spawn_with(settings_for(Some(redis), "shared")).await;
    (Arc::new(a), Arc::new(b))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_submissions_of_one_ply_land_exactly_once() {
    let redis = RedisServer::start();
    let (a, b) = two_replicas(&redis).await;
    let created = a.create(json!({"game": "pillarz"})).await;
    let id = created.game.id.clone();
    let token = created.tokens[&Seat::P1].clone();
    // 24 clients, half on each replica, each placing p1's pawns somewhere different.
    let squares = [
        "a1", "b1", "c1", "d1", "e1", "a2", "b2", "c2", "d2", "e2", "a3", "b3",
    ];
    let mut tasks = Vec::new();
    for i in 0..24 {
        let app = if i % 2 == 0 { a.clone() } else { b.clone() };
        let (id, token) = (id.clone(), token.clone());
        let mv = format!("{}+e5", squares[i % squares.len()]);
        tasks.push(tokio::spawn(async move {
            let response = app.play(&id, &token, &mv).await;
            (response.status().as_u16(), mv)
        }));
    }
    let mut landed = Vec::new();
    for task in tasks {
        let (status, mv) = task.await.unwrap();
        match status {
            200 => landed.push(mv),
            409 => {}
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(landed.len(), 1, "exactly one placement lands: {landed:?}");
    let view = b.view(&id).await;
    assert_eq!(view.ply, 1);
    assert_eq!(view.version, 2);
    let canonical: pillarz::rules::pillarz::Move = landed[0].parse().unwrap();
    assert_eq!(view.moves, [canonical.to_string()]);
}

/// Both seats play as fast as they can, each through both replicas; every accepted move is in
/// the final move list exactly once, in order, and the list replays legally.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_move_is_lost_or_duplicated_under_contention() {
    let redis = RedisServer::start();
    let (a, b) = two_replicas(&redis).await;
    let created = a.create(json!({"game": "alcazar"})).await;
    let id = created.game.id.clone();
    let mut players = Vec::new();
    for (k, seat) in [Seat::P1, Seat::P1, Seat::P2, Seat::P2]
        .into_iter()
        .enumerate()
    {
        let app = if k % 2 == 0 { a.clone() } else { b.clone() };
        let (id, token) = (id.clone(), created.tokens[&seat].clone());
        players.push(tokio::spawn(async move {
            let mut accepted = Vec::new();
            // The budget counts this player's own turns, not its polls while the other seat
            // moves: a slow machine must not run it out before the game gets anywhere. The polls
            // have a cap too (about ten seconds of them), so a stalled game still ends the test.
            let (mut attempts, mut polls) = (0, 0);
            while attempts < 200 && polls < 10_000 {
                let view = app.view(&id).await;
                if view.status != pillarz::api::Status::Ongoing || view.ply >= 40 {
                    break;
                }
                if view.turn != seat {
                    polls += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    continue;
                }
                attempts += 1;
                let moves = app.legal_moves(&id).await;
                let Some(mv) = moves.get((view.ply as usize * 7 + k) % moves.len().max(1)) else {
                    continue;
                };
                let response = app
                    .client
                    .post(app.url(&format!("/v1/games/{id}/moves")))
                    .bearer_auth(&token)
                    .json(&json!({"move": mv, "expected_ply": view.ply}))
                    .send()
                    .await
                    .unwrap();
                match response.status().as_u16() {
                    200 => {
                        let after: GameView = response.json().await.unwrap();
                        accepted.push((after.ply, mv.clone()));
                    }
                    409 | 422 => {}
                    other => panic!("unexpected status {other}"),
                }
            }
            accepted
        }));
    }
    let mut accepted = Vec::new();
    for p in players {
        accepted.extend(p.await.unwrap());
    }
    accepted.sort();
    let view = a.view(&id).await;
    assert!(view.ply >= 10, "the game advanced: {}", view.ply);
    assert_eq!(
        accepted.len() as u64,
        view.ply,
        "accepted moves: {accepted:?}"
    );
    for (ply, mv) in &accepted {
        assert_eq!(&view.moves[*ply as usize - 1], mv);
    }
    let kind: pillarz::rules::GameKind = "alcazar".parse().unwrap();
    pillarz::rules::AnyRecord::replay(kind, Default::default(), &view.start_position, &view.moves)
        .expect("the stored moves replay legally");
}
