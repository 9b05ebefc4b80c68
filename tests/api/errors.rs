//! Every error code, with its status, as `application/problem+json`.

use pillarz::api::Seat;
use serde_json::json;

use crate::helpers::{TestApp, assert_problem};

#[tokio::test]
async fn creation_errors() {
    let (app, _redis) = TestApp::spawn().await;
    let cases = [
        (json!({"game": "chess"}), 400, "bad_request"),
        (
            json!({"game": "pilastri", "variants": ["huge"]}),
            400,
            "bad_request",
        ),
        (
            json!({"game": "pillarz", "variants": ["jumpers"]}),
            422,
            "bad_variant",
        ),
        (
            json!({"game": "pillarz", "time_control": {"initial_ms": 0, "increment_ms": 0}}),
            400,
            "bad_request",
        ),
        (
            json!({"game": "pillarz", "time_control": {"initial_ms": 1000}}),
            400,
            "bad_request",
        ),
        (
            json!({"game": "pillarz", "colour": "red"}),
            400,
            "bad_request",
        ),
        (
            json!({"game": "pillarz", "position": "00000/00000 1"}),
            422,
            "bad_position",
        ),
        (
            json!({"game": "pyrga", "position": "-,-,-,-/-,-,-,-/-,S,-,-/-,-,-,- 1 Sb2"}),
            422,
            "bad_position",
        ),
        (
            json!({"game": "alcazar", "position": "b5,c6,d7,e2,e8,f3,g4,h5 b8 b8 1 -"}),
            422,
            "bad_position",
        ),
        (json!({"game": 7}), 400, "bad_request"),
    ];
    for (body, status, code) in cases {
        let response = app.post_json("/v1/games", &body).await;
        let problem = assert_problem(response, status, code).await;
        assert!(problem["type"].as_str().unwrap().ends_with(code));
    }
    let not_json = app
        .client
        .post(app.url("/v1/games"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_problem(not_json, 400, "bad_request").await;
    let wrong_type = app
        .client
        .post(app.url("/v1/games"))
        .header("content-type", "text/plain")
        .body(r#"{"game": "pillarz"}"#)
        .send()
        .await
        .unwrap();
    assert_problem(wrong_type, 415, "unsupported_media_type").await;
    let huge = format!(
        r#"{{"game": "pillarz", "position": "{}"}}"#,
        "0".repeat(100_000)
    );
    let too_large = app
        .client
        .post(app.url("/v1/games"))
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    assert_problem(too_large, 413, "payload_too_large").await;
}

/// JSON leaves a repeated key undefined, and a map would keep its last value without a word:
/// a request that names a seat or a limit twice says two things and is refused, naming the
/// key (a struct's fields were refused already).
#[tokio::test]
async fn a_key_given_twice_is_refused() {
    let app = TestApp::spawn_in_memory().await;
    let post = |path: &'static str, body: &'static str| {
        app.client
            .post(app.url(path))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let twice = [
        (
            "/v1/games",
            r#"{"game": "pillarz", "seats": {"p2": {"engine": {"level": 1}}, "p2": {"engine": {"level": 8}}}}"#,
            "\"p2\" is given twice",
        ),
        (
            "/v1/analysis",
            r#"{"game": "pillarz", "limits": {"depth": 1, "depth": 1000}}"#,
            "\"depth\" is given twice",
        ),
        (
            "/v1/games",
            r#"{"game": "pillarz", "game": "pyrga"}"#,
            "duplicate field `game`",
        ),
    ];
    for (path, body, says) in twice {
        let problem = assert_problem(post(path, body).await.unwrap(), 400, "bad_request").await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(says), "{body}: {detail}");
    }
    // Each key once: the same requests are served.
    let once = post(
        "/v1/games",
        r#"{"game": "pillarz", "seats": {"p2": {"engine": {"level": 1}}}}"#,
    )
    .await
    .unwrap();
    assert_eq!(once.status(), 201);
}

#[tokio::test]
async fn lookup_errors() {
    let (app, _redis) = TestApp::spawn().await;
    for path in [
        "/v1/games/not-a-uuid",
        "/v1/games/6a3e7f3a-0000-4000-8000-000000000000",
        "/v1/games/6a3e7f3a-0000-4000-8000-000000000000/legal-moves",
        "/v1/games/6a3e7f3a-0000-4000-8000-000000000000/clock",
        "/v1/games/%00%ff/legal-moves",
    ] {
        assert_problem(app.get(path).await, 404, "game_not_found").await;
    }
    assert_problem(app.get("/v2/nothing").await, 404, "not_found").await;
    // Under a game's routes too: an unknown route, a trailing slash, and a wrong method.
    for path in [
        "/v1/games/6a3e7f3a-0000-4000-8000-000000000000/nothing",
        "/v1/games/6a3e7f3a-0000-4000-8000-000000000000/",
        "/v1/games/6a3e7f3a-0000-4000-8000-000000000000/moves/extra",
    ] {
        assert_problem(app.get(path).await, 404, "not_found").await;
    }
    let get_moves = app
        .get("/v1/games/6a3e7f3a-0000-4000-8000-000000000000/moves")
        .await;
    assert_eq!(get_moves.headers()["allow"], "POST");
    assert_problem(get_moves, 405, "method_not_allowed").await;
    let delete = app
        .client
        .delete(app.url("/v1/catalog"))
        .send()
        .await
        .unwrap();
    assert_eq!(delete.headers()["allow"], "GET, HEAD");
    assert_problem(delete, 405, "method_not_allowed").await;
    let put = app.client.put(app.url("/v1/games")).send().await.unwrap();
    assert_eq!(put.headers()["allow"], "POST");
    assert_problem(put, 405, "method_not_allowed").await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let untimed = app
        .get(&format!("/v1/games/{}/clock", created.game.id))
        .await;
    // An untimed game has no clock: `null`, as the game's `clock`.
    assert_eq!(untimed.status(), 200);
    assert_eq!(
        untimed.json::<serde_json::Value>().await.unwrap(),
        json!(null)
    );
}

#[tokio::test]
async fn move_errors() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let other = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    let (p1, p2) = (&created.tokens[&Seat::P1], &created.tokens[&Seat::P2]);
    let moves = format!("/v1/games/{id}/moves");

    let no_auth = app.post_json(&moves, &json!({"move": "a1+b1"})).await;
    assert_problem(no_auth, 401, "unauthenticated").await;
    let bad_auth = app
        .client
        .post(app.url(&moves))
        .header("authorization", "Basic abc")
        .json(&json!({"move": "a1+b1"}))
        .send()
        .await
        .unwrap();
    assert_problem(bad_auth, 401, "unauthenticated").await;
    let foreign = app.play(id, &other.tokens[&Seat::P1], "a1+b1").await;
    assert_problem(foreign, 403, "wrong_seat").await;
    assert_problem(app.play(id, p2, "a1+b1").await, 409, "not_your_turn").await;
    let bad = assert_problem(app.play(id, p1, "z9+a1").await, 422, "bad_notation").await;
    assert!(bad["detail"].as_str().unwrap().contains("z9+a1"));
    let illegal = assert_problem(app.play(id, p1, "a1-a2^a3").await, 422, "illegal_move").await;
    assert!(
        illegal["detail"].as_str().unwrap().contains("placed first"),
        "{illegal}"
    );
    let stale = app
        .client
        .post(app.url(&moves))
        .bearer_auth(p1)
        .json(&json!({"move": "a1+b1", "expected_ply": 3}))
        .send()
        .await
        .unwrap();
    assert_problem(stale, 409, "stale_version").await;
    let missing_move = app
        .client
        .post(app.url(&moves))
        .bearer_auth(p1)
        .json(&json!({"mv": "a1+b1"}))
        .send()
        .await
        .unwrap();
    assert_problem(missing_move, 400, "bad_request").await;
    let bad_key = app
        .client
        .post(app.url(&moves))
        .bearer_auth(p1)
        .header("idempotency-key", "x".repeat(200))
        .json(&json!({"move": "a1+b1"}))
        .send()
        .await
        .unwrap();
    assert_problem(bad_key, 400, "bad_request").await;

    // Nothing above changed the game.
    let view = app.view(id).await;
    assert_eq!((view.ply, view.version), (0, 1));

    // A finished game: p1 is trapped in this position and has lost.
    let over = app
        .create(json!({"game": "pillarz", "position": "00000o/0000o0/00000/44400/0x0x200 1"}))
        .await;
    assert_eq!(serde_json::to_value(over.game.termination).unwrap(), "trap");
    let late = app
        .play(&over.game.id, &over.tokens[&Seat::P1], "b1-a2^a3")
        .await;
    assert_problem(late, 409, "game_over").await;
}

#[tokio::test]
async fn every_answer_carries_a_request_id_header() {
    let app = TestApp::spawn_in_memory().await;
    let ok = app.get("/v1/catalog").await;
    assert!(ok.headers().contains_key("x-request-id"));
    let err = app.get("/v1/games/nope").await;
    let header = err.headers()["x-request-id"].to_str().unwrap().to_string();
    let body = assert_problem(err, 404, "game_not_found").await;
    assert_eq!(body["request_id"], header);
}

#[tokio::test]
async fn problem_types_resolve_to_a_page_on_the_service() {
    let app = TestApp::spawn_in_memory().await;
    let missing = app
        .get("/v1/games/6a3e7f3a-0000-4000-8000-000000000000")
        .await;
    let body = assert_problem(missing, 404, "game_not_found").await;
    let kind = body["type"].as_str().unwrap();
    assert_eq!(kind, "/problems/game_not_found");
    let page = app.get(kind).await;
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = page.text().await.unwrap();
    assert!(
        html.contains("<code>game_not_found</code>") && html.contains("404"),
        "{html}"
    );

    let index = app.get("/problems").await.text().await.unwrap();
    for code in pillarz::service::error::ErrorCode::ALL {
        assert!(
            index.contains(&format!("/problems/{}", code.as_str())),
            "{index}"
        );
        assert_eq!(
            app.get(&format!("/problems/{}", code.as_str()))
                .await
                .status(),
            200
        );
    }
    assert_problem(app.get("/problems/no_such_code").await, 404, "not_found").await;
}

#[tokio::test]
async fn cross_origin_refusals_are_problems() {
    let mut settings = crate::helpers::settings_for(None, "");
    settings.cors_origins =
        pillarz::service::cors::AllowedOrigins::Only(vec!["http://a.test".into()]);
    let app = TestApp::spawn_with(settings).await;
    let preflight = |method: &str, headers: &str| {
        let mut request = app
            .client
            .request(reqwest::Method::OPTIONS, app.url("/v1/games"))
            .header("origin", "http://a.test")
            .header("access-control-request-method", method);
        if !headers.is_empty() {
            request = request.header("access-control-request-headers", headers);
        }
        request.send()
    };
    let allowed = preflight("POST", "content-type").await.unwrap();
    assert_eq!(allowed.status(), 200);
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "http://a.test"
    );
    let body = assert_problem(preflight("DELETE", "").await.unwrap(), 400, "bad_request").await;
    assert!(
        body["detail"].as_str().unwrap().contains("method"),
        "{body}"
    );
    assert_problem(
        preflight("POST", "x-foo").await.unwrap(),
        400,
        "bad_request",
    )
    .await;
    let elsewhere = app
        .client
        .request(reqwest::Method::OPTIONS, app.url("/v1/games"))
        .header("origin", "http://b.test")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_problem(elsewhere, 400, "bad_request").await;
}
