//! `GET /metrics`: the process's metrics in the Prometheus text format.

use actix_web::{HttpResponse, web};
use prometheus::{Encoder, TextEncoder};

use crate::service::metrics::METRICS;
use crate::service::state::AppState;

pub async fn scrape(state: web::Data<AppState>) -> HttpResponse {
    METRICS.analysis_queue.set(state.analysis.depth() as i64);
    let mut body = Vec::new();
    TextEncoder::new()
        .encode(&METRICS.gather(), &mut body)
        .expect("metrics encode");
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(body)
}
