//! Every request gets an id: echoed in `X-Request-Id`, written in its log line and in the body
//! of every error answer, so a client's complaint leads straight to the log. The same middleware
//! counts and times every request for the metrics.

use std::time::Instant;

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use uuid::Uuid;

tokio::task_local! {
    static REQUEST_ID: String;
}

pub const HEADER: &str = "x-request-id";

/// The route that served a request (set by the route itself): its pattern, and the methods it
/// serves (its `Allow` header: `POST`, or `GET, HEAD`).
#[derive(Clone, Copy, Debug)]
pub struct RouteLabel {
    pub pattern: &'static str,
    pub allow: &'static str,
}

impl RouteLabel {
    /// Whether the route serves `method`.
    fn serves(&self, method: &actix_web::http::Method) -> bool {
        self.allow.split(", ").any(|m| m == method.as_str())
    }
}

/// The id of the request being served, if called while serving one.
pub fn current() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// The method as a metric label: the standard ones by name, anything else `other` (a client
/// can send any token as a method; the label space must stay bounded).
fn method_label(method: &actix_web::http::Method) -> &'static str {
    use actix_web::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// Middleware: assigns the id, logs the request, sets the header.
pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = Uuid::new_v4().to_string();
    let method = req.method().clone();
    let path = req.path().to_string();
    let started = Instant::now();
    let result = REQUEST_ID.scope(id.clone(), next.call(req)).await;
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    match result {
        Ok(mut res) => {
            let code = res.status();
            let status = code.as_u16();
            // The route's pattern, not its path, so that game ids do not explode the label
            // space; and on a route, its own methods or `other`, so that a client trying
            // every method on every route adds a series or two a route, not ten.
            let (route, method_label) = match res.request().extensions().get::<RouteLabel>() {
                Some(label) if label.serves(&method) => (label.pattern, method_label(&method)),
                Some(label) => (label.pattern, "other"),
                None => ("unmatched", method_label(&method)),
            };
            let metrics = &super::metrics::METRICS;
            metrics
                .requests
                .with_label_values(&[route, method_label, code.as_str()])
                .inc();
            metrics
                .latency
                .with_label_values(&[route, method_label])
                .observe(millis / 1000.0);
            if status >= 500 {
                tracing::warn!(request_id = %id, %method, %path, status, millis, "request");
            } else {
                tracing::info!(request_id = %id, %method, %path, status, millis, "request");
            }
            if let Ok(value) = HeaderValue::from_str(&id) {
                res.headers_mut()
                    .insert(HeaderName::from_static(HEADER), value);
            }
            Ok(res)
        }
        Err(e) => {
            tracing::warn!(request_id = %id, %method, %path, error = %e, "request failed");
            Err(e)
        }
    }
}
