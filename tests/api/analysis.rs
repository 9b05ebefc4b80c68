//! `POST /v1/analysis` and `POST /v1/games/{id}/analysis`: every game, limits and caps, and
//! `503 busy` when the pool is saturated.

use pillarz::api::{AnalysisView, Seat};
use pillarz::engine::Score;
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem};

async fn analyse(app: &TestApp, body: Value) -> AnalysisView {
    let response = app.post_json("/v1/analysis", &body).await;
    assert_eq!(response.status(), 200, "{body}");
    response.json().await.unwrap()
}

#[tokio::test]
async fn every_game_is_analysed() {
    let app = TestApp::spawn_in_memory().await;
    let cases = [
        ("pillarz", "00000/00o00x0/00000/00x00o0/00000 1"),
        (
            "pilastri",
            "o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o 1",
        ),
        ("pyrga", "-,-,-,-/-,-,-,-/-,S,t^,-/-,-,-,- 1 Tc2N"),
        ("alcazar", "b5,c6,d7,e2,e8,f3,g4,h5 b8 h2 1 -"),
    ];
    for (game, position) in cases {
        let view = analyse(
            &app,
            json!({"game": game, "position": position, "limits": {"depth": 3}, "multipv": 3}),
        )
        .await;
        assert_eq!(view.depth, 3, "{game}");
        assert_eq!(view.lines.len(), 3, "{game}");
        assert_eq!(view.best_move.as_ref(), Some(&view.lines[0].mv));
        assert_eq!(view.pv, view.lines[0].pv);
        assert!(view.nodes > 0);
        // The best move is legal: a game from that position accepts it.
        let created = app
            .create(json!({"game": game, "position": position}))
            .await;
        let turn = created.game.turn;
        let played = app
            .play(
                &created.game.id,
                &created.tokens[&turn],
                view.best_move.as_ref().unwrap(),
            )
            .await;
        assert_eq!(played.status(), 200, "{game}");
    }
}

#[tokio::test]
async fn proven_wins_and_finished_positions() {
    let app = TestApp::spawn_in_memory().await;
    let win = analyse(
        &app,
        json!({"game": "pillarz", "position": "0o00x00/1231x0/21o040/11200/01000 2", "limits": {"depth": 5}}),
    )
    .await;
    assert_eq!(win.score, Score::WinIn(3));
    let raw: Value = app
        .post_json(
            "/v1/analysis",
            &json!({"game": "pillarz", "position": "0o00x00/1231x0/21o040/11200/01000 2", "limits": {"depth": 5}}),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(raw["score"], json!({"win_in": 3}));
    let over = analyse(
        &app,
        json!({"game": "pillarz", "position": "00000o/0000o0/00000/44400/0x0x200 1", "limits": {"depth": 3}}),
    )
    .await;
    assert_eq!(over.best_move, None);
    assert_eq!(over.score, Score::LossIn(0));
}

#[tokio::test]
async fn limits_are_capped_by_the_server() {
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.analysis.caps.max_depth = 2;
    settings.analysis.caps.max_time_ms = 200;
    let app = TestApp::spawn_with(settings).await;
    let deep = analyse(
        &app,
        json!({"game": "pilastri", "position": "o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o 1", "limits": {"depth": 30}}),
    )
    .await;
    assert_eq!(deep.depth, 2);
    let long = analyse(
        &app,
        json!({"game": "alcazar", "position": "b5,c6,d7,e2,e8,f3,g4,h5 b8 h2 1 -", "limits": {"movetime_ms": 60000}}),
    )
    .await;
    assert!(
        long.time_ms < 2000,
        "capped at 200 ms, took {}",
        long.time_ms
    );
}

#[tokio::test]
async fn bad_analysis_requests() {
    let app = TestApp::spawn_in_memory().await;
    let start = "b5,c6,d7,e2,e8,f3,g4,h5 b8 h2 1 -";
    let cases = [
        (
            json!({"game": "go", "position": start, "limits": {"depth": 2}}),
            "bad_request",
        ),
        (
            json!({"game": "alcazar", "position": start, "limits": {"depth": 0}}),
            "bad_request",
        ),
        (
            json!({"game": "alcazar", "position": start, "limits": {"plies": 2}}),
            "bad_request",
        ),
        (
            json!({"game": "alcazar", "position": start, "limits": {"depth": 2, "nodes": 5}}),
            "bad_request",
        ),
        (
            json!({"game": "alcazar", "position": start, "limits": {"depth": 2}, "multipv": 0}),
            "bad_request",
        ),
        (
            json!({"game": "alcazar", "position": start, "limits": {"depth": 2}, "multipv": 17}),
            "bad_request",
        ),
        (json!({"game": "alcazar", "position": start}), "bad_request"),
    ];
    for (body, code) in cases {
        assert_problem(app.post_json("/v1/analysis", &body).await, 400, code).await;
    }
    // Well formed, but the position does not parse: the content cannot be applied.
    let bad_position = json!({"game": "alcazar", "position": "b5 b8", "limits": {"depth": 2}});
    assert_problem(
        app.post_json("/v1/analysis", &bad_position).await,
        422,
        "bad_position",
    )
    .await;
    let missing = app
        .post_json(
            "/v1/games/6a3e7f3a-0000-4000-8000-000000000000/analysis",
            &json!({"limits": {"depth": 1}}),
        )
        .await;
    assert_problem(missing, 404, "game_not_found").await;
}

#[tokio::test]
async fn a_stored_game_is_analysed_with_its_history() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "alcazar"})).await;
    let id = &created.game.id;
    for (seat, mv) in [(Seat::P1, "Kd8"), (Seat::P2, "Kf2"), (Seat::P1, "Kb8")] {
        assert_eq!(app.play(id, &created.tokens[&seat], mv).await.status(), 200);
    }
    let response = app
        .post_json(
            &format!("/v1/games/{id}/analysis"),
            &json!({"limits": {"depth": 2}, "multipv": 16}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let view: AnalysisView = response.json().await.unwrap();
    assert!(!view.lines.is_empty());
    // Kh2 would repeat the start position: the game's history rules it out.
    assert!(view.lines.iter().all(|l| l.mv != "Kh2"));
    let same_position = analyse(
        &app,
        json!({"game": "alcazar", "position": app.view(id).await.position, "limits": {"depth": 2}, "multipv": 16}),
    )
    .await;
    assert!(same_position.lines.iter().any(|l| l.mv == "Kh2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_saturated_pool_answers_503_with_retry_after() {
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.analysis.workers = 1;
    settings.analysis.queue = 1;
    let app = std::sync::Arc::new(TestApp::spawn_with(settings).await);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let app = app.clone();
        tasks.push(tokio::spawn(async move {
            app.post_json(
                "/v1/analysis",
                &json!({"game": "pilastri", "position": "o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o 1", "limits": {"movetime_ms": 400}}),
            )
            .await
        }));
    }
    let (mut ok, mut busy) = (0, 0);
    for task in tasks {
        let response = task.await.unwrap();
        match response.status().as_u16() {
            200 => ok += 1,
            503 => {
                assert_eq!(response.headers()["retry-after"], "1");
                assert_problem(response, 503, "busy").await;
                busy += 1;
            }
            other => panic!("status {other}"),
        }
    }
    assert!((1..=2 + 2).contains(&ok), "{ok} served");
    assert!(busy >= 4, "{busy} refused");
}

/// How a client leaves an analysis it no longer waits for.
#[derive(Clone, Copy, Debug)]
enum Leaving {
    /// A reset (a socket closed with a zero linger time), as a careless or hostile client may.
    Reset,
    /// A close with nothing left unread, which sends a FIN: what a client's timeout or an
    /// interrupted command does, and what a proxy in front does when its own client leaves.
    Close,
}

/// Starts an analysis of up to 20 s and leaves it after 300 ms.
async fn leave_a_long_analysis(app: &TestApp, how: Leaving) {
    use tokio::io::AsyncWriteExt;
    let body = json!({"game": "pilastri", "position": "o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o/o,x,o,x,o,x/x,o,x,o,x,o 1", "limits": {"movetime_ms": 20000}}).to_string();
    let port: u16 = app.address.rsplit(':').next().unwrap().parse().unwrap();
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!(
        "POST /v1/analysis HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    if let Leaving::Reset = how {
        socket.set_zero_linger().unwrap();
    }
    drop(socket);
}

/// Settings that let an analysis search for 20 s.
fn long_searches() -> pillarz::service::configuration::Settings {
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.analysis.caps.max_time_ms = 20_000;
    settings.analysis.caps.max_depth = 64;
    settings
}

/// Posts a depth-1 analysis every `every` until one is answered `wanted` (and returns it);
/// any other answer than those in `meanwhile`, or none in 5 s, fails with `why`.
async fn probe_until(
    app: &TestApp,
    wanted: u16,
    meanwhile: &[u16],
    every: std::time::Duration,
    why: &str,
) -> reqwest::Response {
    let probe = json!({"game": "pillarz", "position": "00000/00o00x0/00000/00x00o0/00000 1",
                       "limits": {"depth": 1}});
    let started = std::time::Instant::now();
    loop {
        let response = app.post_json("/v1/analysis", &probe).await;
        let status = response.status().as_u16();
        if status == wanted {
            return response;
        }
        assert!(meanwhile.contains(&status), "status {status}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{why}"
        );
        tokio::time::sleep(every).await;
    }
}

/// A search keeps a pool worker only while someone waits for it: the worker of a client that
/// left (a reset or a close) is free again long before the search's 20 s.
#[tokio::test]
async fn a_search_stops_when_its_client_leaves() {
    for how in [Leaving::Reset, Leaving::Close] {
        let mut settings = long_searches();
        settings.analysis.workers = 1;
        settings.analysis.queue = 0;
        let app = TestApp::spawn_with(settings).await;
        leave_a_long_analysis(&app, how).await;
        probe_until(
            &app,
            200,
            &[503],
            std::time::Duration::from_millis(50),
            &format!("after a {how:?}, the pool is still busy with a search nobody waits for"),
        )
        .await;
    }
}

/// Resetting the connection does not make a search free: the time it ran is charged to the
/// caller, whose next analysis is refused.
#[tokio::test]
async fn a_search_whose_client_reset_the_connection_is_charged() {
    let mut settings = long_searches();
    settings.anon_quotas = Some(
        pillarz::service::quota::Quotas::parse(
            "analysis=150/min",
            pillarz::service::quota::Quotas::ANONYMOUS,
        )
        .unwrap(),
    );
    // A share of two places in the pool: the abandoned search and a probe (the refusal sought
    // is the analysis time's, not the share's).
    settings.analysis.queue = 8;
    let app = TestApp::spawn_with(settings).await;
    leave_a_long_analysis(&app, Leaving::Reset).await;
    // A probe every half second costs about 1 ms of the 150 each; only the abandoned search
    // can exhaust them within 5 s.
    let refused = probe_until(
        &app,
        429,
        &[200, 503],
        std::time::Duration::from_millis(500),
        "the abandoned search was not charged",
    )
    .await;
    assert_eq!(
        refused.headers()["ratelimit-policy"],
        "\"analysis\";q=150;w=60"
    );
    assert_problem(refused, 429, "rate_limited").await;
}

/// A client that leaves (a reset or a close) while its analysis waits in the queue gives its
/// place back at once: the next caller waits for the busy worker instead of being refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_place_in_the_queue_is_given_back_when_its_client_leaves() {
    for how in [Leaving::Reset, Leaving::Close] {
        let mut settings = long_searches();
        settings.analysis.workers = 1;
        settings.analysis.queue = 1;
        let app = std::sync::Arc::new(TestApp::spawn_with(settings).await);
        let busy = {
            let app = app.clone();
            tokio::spawn(async move {
                let body = json!({"game": "pillarz", "position": "00000/00o00x0/00000/00x00o0/00000 1",
                                  "limits": {"movetime_ms": 2000}});
                app.post_json("/v1/analysis", &body).await.status()
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        leave_a_long_analysis(&app, how).await;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let probe = json!({"game": "pillarz", "position": "00000/00o00x0/00000/00x00o0/00000 1",
                           "limits": {"depth": 1}});
        let next = app.post_json("/v1/analysis", &probe).await;
        assert_eq!(
            next.status(),
            200,
            "after a {how:?}, the queue's one place was still held"
        );
        assert_eq!(busy.await.unwrap(), 200);
    }
}
