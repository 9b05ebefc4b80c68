//! A full game of each of the four games, played over HTTP to its end.

use pillarz::api::{GameView, Status};
use pillarz::rules::{AnyRecord, GameKind};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::helpers::TestApp;

/// Plays random legal moves (an immediate win when there is one) until the game ends; checks
/// the result against the rules library replaying the same moves.
async fn play_to_the_end(app: &TestApp, body: serde_json::Value, seed: u64) -> GameView {
    let created = app.create(body).await;
    let id = created.game.id.clone();
    let kind: GameKind = created.game.game;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut view = created.game.clone();
    while view.status == Status::Ongoing {
        let moves = app.legal_moves(&id).await;
        assert!(!moves.is_empty(), "an ongoing game has moves");
        let record = AnyRecord::replay(
            kind,
            kind.with_variants(&view.variants).unwrap(),
            &view.start_position,
            &view.moves,
        )
        .unwrap();
        let winning = moves.iter().find(|mv| {
            let mut next = record.clone();
            next.play(mv).unwrap();
            next.outcome().is_some()
        });
        let mv = winning
            .cloned()
            .unwrap_or_else(|| moves[rng.random_range(0..moves.len())].clone());
        let response = app.play(&id, &created.tokens[&view.turn], &mv).await;
        assert_eq!(response.status(), 200, "{mv} at {}", view.position);
        let next: GameView = response.json().await.unwrap();
        assert_eq!(next.ply, view.ply + 1);
        assert_eq!(next.moves.last(), Some(&mv));
        view = next;
    }
    let record = AnyRecord::replay(
        kind,
        kind.with_variants(&view.variants).unwrap(),
        &view.start_position,
        &view.moves,
    )
    .unwrap();
    let outcome = record.outcome().expect("the rules agree the game is over");
    assert_eq!(
        serde_json::to_value(view.result).unwrap(),
        outcome.winner.as_str()
    );
    assert_eq!(
        serde_json::to_value(view.termination).unwrap(),
        outcome.termination.as_str()
    );
    assert_eq!(view.position, record.position());
    assert_eq!(
        app.view(&id).await,
        GameView {
            clock: view.clock.clone(),
            ..view.clone()
        }
    );
    view
}

#[tokio::test]
async fn full_games_of_all_four_games() {
    let (app, _redis) = TestApp::spawn().await;
    let pillarz = play_to_the_end(&app, json!({"game": "pillarz"}), 1).await;
    assert!(pillarz.ply >= 3);
    let pilastri = play_to_the_end(
        &app,
        json!({"game": "pilastri", "variants": ["jumpers"]}),
        2,
    )
    .await;
    assert_eq!(
        serde_json::to_value(pilastri.termination).unwrap(),
        "no_moves"
    );
    let pyrga = play_to_the_end(&app, json!({"game": "pyrga"}), 3).await;
    assert!(pyrga.ply <= 30);
    let alcazar = play_to_the_end(&app, json!({"game": "alcazar"}), 4).await;
    assert!(alcazar.result.is_some());
    // The winner is never the seat that would move next, except in Pyrga's tie-break.
    for view in [&pillarz, &pilastri, &alcazar] {
        let winner = serde_json::to_value(view.result).unwrap();
        let turn = serde_json::to_value(view.turn).unwrap();
        assert_ne!(winner, turn, "{}", view.game);
    }
}
