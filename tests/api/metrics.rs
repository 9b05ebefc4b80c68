//! `GET /metrics`: Prometheus text with the service's counters and histograms.

use pillarz::api::Seat;
use serde_json::json;

use crate::helpers::TestApp;

fn value(text: &str, prefix: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

#[tokio::test]
async fn metrics_count_requests_moves_and_analyses() {
    let app = TestApp::spawn_in_memory().await;
    let before = app.get("/metrics").await.text().await.unwrap();
    let created = app.create(json!({"game": "pillarz"})).await;
    assert_eq!(
        app.play(&created.game.id, &created.tokens[&Seat::P1], "a1+b1")
            .await
            .status(),
        200
    );
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
    let text = response.text().await.unwrap();
    assert!(
        value(&text, "pillarz_moves_applied_total")
            >= value(&before, "pillarz_moves_applied_total") + 1.0
    );
    assert!(text.contains(r#"pillarz_http_requests_total{method="POST",route="/v1/games/{id}/moves",status="200"}"#), "{text}");
    assert!(
        text.contains(
            r#"pillarz_http_request_duration_seconds_bucket{method="GET",route="/metrics""#
        )
    );
    assert!(text.contains(r#"pillarz_analysis_duration_seconds_count{game="pyrga"}"#));
    for name in [
        "pillarz_cas_conflicts_total",
        "pillarz_store_errors_total",
        "pillarz_analysis_queue_depth",
    ] {
        assert!(text.contains(name), "{name}");
    }
}
