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
