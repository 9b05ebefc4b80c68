//! Board pictures over HTTP: content type, ETags and 304s, `?ply=`, and errors.

use pillarz::api::Seat;
use serde_json::json;

use crate::helpers::{TestApp, assert_problem};

#[tokio::test]
async fn game_and_position_boards() {
    let app = TestApp::spawn_in_memory().await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    app.play(id, &created.tokens[&Seat::P1], "a1+b1").await;
    app.play(id, &created.tokens[&Seat::P2], "d5+e5").await;
    let now = app.get(&format!("/v1/games/{id}/board.svg")).await;
    assert_eq!(now.status(), 200);
    assert_eq!(now.headers()["content-type"], "image/svg+xml");
    assert_eq!(now.headers()["cache-control"], "no-cache");
    let etag = now.headers()["etag"].to_str().unwrap().to_string();
    let svg = now.text().await.unwrap();
    assert!(
        svg.starts_with("<svg")
            && svg.contains("<title>0000o0o/00000/00000/00000/0x0x000 1</title>"),
        "{svg}"
    );
    let again = app
        .client
        .get(app.url(&format!("/v1/games/{id}/board.svg")))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    // Compared weakly, and `*` matches any picture.
    for tag in [format!("W/{etag}"), "*".to_string()] {
        let again = app
            .client
            .get(app.url(&format!("/v1/games/{id}/board.svg")))
            .header("if-none-match", &tag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304, "{tag}");
    }
    let first = app.get(&format!("/v1/games/{id}/board.svg?ply=1")).await;
    assert_eq!(
        first.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    let first = first.text().await.unwrap();
    assert!(
        first.contains("<title>00000/00000/00000/00000/0x0x000 2</title>"),
        "{first}"
    );
    assert_ne!(first, svg);
    assert_problem(
        app.get(&format!("/v1/games/{id}/board.svg?ply=9")).await,
        404,
        "not_found",
    )
    .await;
    assert_problem(
        app.get(&format!("/v1/games/{id}/board.svg?ply=x")).await,
        400,
        "bad_request",
    )
    .await;

    let position = app
        .client
        .get(app.url("/v1/board.svg"))
        .query(&[
            ("game", "pilastri"),
            (
                "position",
                "o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o 1",
            ),
            ("variants", "jumpers"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(position.status(), 200);
    assert!(position.text().await.unwrap().contains("<ellipse"));
    let bad = app
        .client
        .get(app.url("/v1/board.svg"))
        .query(&[("game", "alcazar"), ("position", "nonsense")])
        .send()
        .await
        .unwrap();
    assert_problem(bad, 422, "bad_position").await;
    assert_problem(
        app.get("/v1/board.svg?game=alcazar").await,
        400,
        "bad_request",
    )
    .await;
}

/// A `last` move must name squares of the pictured board. Pilastri's notation reaches h8 on
/// every board, so a 6×6 position with `last=h8-h7` once wrapped the picture's coordinates (and
/// panicked a debug build), whether or not the game was over.
#[tokio::test]
async fn a_last_move_off_the_board_is_refused() {
    let app = TestApp::spawn_in_memory().await;
    let start = "o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o 1";
    // Every stack on one corner square: P1 controls it, P2 has no move, the game is over.
    let over = "-,-,-,-,-,-/-,-,-,-,-,-/-,-,-,-,-,-/-,-,-,-,-,-/-,-,-,-,-,-/oxoxoxoxoxoxoxoxoxoxoxoxoxoxoxoxoxox,-,-,-,-,- 2";
    let board = |position: &'static str, last: &'static str| {
        app.client
            .get(app.url("/v1/board.svg"))
            .query(&[("game", "pilastri"), ("position", position), ("last", last)])
            .send()
    };
    for position in [start, over] {
        for last in ["h8-h7", "a1-a7", "g1-a1"] {
            assert_problem(board(position, last).await.unwrap(), 422, "bad_notation").await;
        }
    }
    // A move on the board is marked, legal here or not (it was played before this position).
    for last in ["a1-a2", "f6-a6"] {
        let response = board(start, last).await.unwrap();
        assert_eq!(response.status(), 200, "{last}");
        assert!(response.text().await.unwrap().contains("stroke-dasharray"));
    }
}
