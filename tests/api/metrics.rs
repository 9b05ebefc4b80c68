//! `GET /metrics`: Prometheus text whose counters and histograms move with the requests served.
//!
//! The metrics are the process's, shared by every test app of this binary running at the same
//! time: a test can only see its own requests as a lower bound on how far a counter moved.

use pillarz::api::Seat;
use serde_json::json;

use crate::helpers::TestApp;

/// The sum of every sample whose line starts with `prefix` (0 when there is none).
fn value(text: &str, prefix: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

/// Asserts that the samples starting with `prefix` grew by at least `by` from `before` to
/// `after`.
pub fn assert_grew(before: &str, after: &str, prefix: &str, by: f64) {
    let (was, is) = (value(before, prefix), value(after, prefix));
    assert!(
        is >= was + by,
        "{prefix}: {was} -> {is}, expected +{by}\n{after}"
    );
}

#[tokio::test]
async fn metrics_count_requests_errors_moves_and_analyses() {
    let app = TestApp::spawn_in_memory().await;
    let before = app.get("/metrics").await.text().await.unwrap();
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    let p1 = &created.tokens[&Seat::P1];
    assert_eq!(app.play(id, p1, "a1+b1").await.status(), 200);
    // Errors, each counted under its route and status: a move off the board's rules, twice,
    // and a game that does not exist.
    let p2 = &created.tokens[&Seat::P2];
    for _ in 0..2 {
        assert_eq!(app.play(id, p2, "a1+b1").await.status(), 422);
    }
    let missing = "00000000-0000-4000-8000-000000000000";
    assert_eq!(app.get(&format!("/v1/games/{missing}")).await.status(), 404);
    app.post_json(
        "/v1/analysis",
        &json!({"game": "pyrga", "position": "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 -", "limits": {"depth": 2}}),
    )
    .await;
    let response = app.get("/metrics").await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let after = response.text().await.unwrap();
    let requests = "pillarz_http_requests_total";
    assert_grew(
        &before,
        &after,
        &format!(r#"{requests}{{method="POST",route="/v1/games",status="201"}}"#),
        1.0,
    );
    assert_grew(
        &before,
        &after,
        &format!(r#"{requests}{{method="POST",route="/v1/games/{{id}}/moves",status="200"}}"#),
        1.0,
    );
    assert_grew(
        &before,
        &after,
        &format!(r#"{requests}{{method="POST",route="/v1/games/{{id}}/moves",status="422"}}"#),
        2.0,
    );
    assert_grew(
        &before,
        &after,
        &format!(r#"{requests}{{method="GET",route="/v1/games/{{id}}",status="404"}}"#),
        1.0,
    );
    // The first scrape was timed before the second one began.
    assert_grew(
        &before,
        &after,
        r#"pillarz_http_request_duration_seconds_count{method="GET",route="/metrics"}"#,
        1.0,
    );
    assert_grew(
        &before,
        &after,
        r#"pillarz_http_request_duration_seconds_count{method="POST",route="/v1/games/{id}/moves"}"#,
        3.0,
    );
    assert_grew(&before, &after, "pillarz_moves_applied_total", 1.0);
    assert_grew(
        &before,
        &after,
        r#"pillarz_analysis_duration_seconds_count{game="pyrga"}"#,
        1.0,
    );
    for name in [
        "pillarz_cas_conflicts_total",
        "pillarz_store_errors_total",
        "pillarz_analysis_queue_depth",
    ] {
        assert!(after.contains(name), "{name}");
    }
}
