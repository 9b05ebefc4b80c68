//! `POST /v1/analysis` and `POST /v1/games/{id}/analysis`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use actix_web::{HttpRequest, HttpResponse, web};

use super::game_id;
use crate::api::{AnalysisLineView, AnalysisRequest, AnalysisView, GameAnalysisRequest, Problem};
use crate::engine::any::{Analysis, analyse};
use crate::engine::{Limit, Params};
use crate::rules::AnyState;
use crate::service::analysis_pool::Worker;
use crate::service::error::{ApiError, ErrorCode};
use crate::service::games;
use crate::service::peer::{Peer, unless_gone};
use crate::service::quota::{self, Class};
use crate::service::state::AppState;
use crate::wall_clock::WallClock;

/// Most lines a request may ask for.
pub const MAX_MULTIPV: usize = 16;

fn view(a: Analysis) -> AnalysisView {
    AnalysisView {
        best_move: a.best_move,
        score: a.score,
        pv: a.pv,
        lines: a
            .lines
            .into_iter()
            .map(|l| AnalysisLineView {
                mv: l.mv,
                score: l.score,
                pv: l.pv,
            })
            .collect(),
        depth: a.depth,
        nodes: a.nodes,
        time_ms: a.time_ms,
    }
}

fn check(limits: Limit, multipv: Option<usize>) -> Result<usize, ApiError> {
    let zero = match limits {
        Limit::Depth(d) => d == 0,
        Limit::Nodes(n) => n == 0,
        Limit::MovetimeMs(t) => t == 0,
    };
    if zero {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "limits must be at least 1",
        ));
    }
    match multipv.unwrap_or(1) {
        n @ 1..=MAX_MULTIPV => Ok(n),
        n => Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("multipv must be between 1 and {MAX_MULTIPV}, not {n}"),
        )),
    }
}

/// Sets its flag when dropped: a handler dropped before its search ends (the client left)
/// stops that search.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What to analyse and how far.
struct Question {
    rules: AnyState,
    limits: Limit,
    multipv: usize,
    /// The plies before the service's ply cap draws the game (a stored game's only).
    plies_to_limit: Option<u32>,
}

/// Runs an analysis for a caller admitted with analysis time left (at least 1 ms: the time a
/// search takes is known only once it is done), then charges the time it took.
///
/// The handler waits for a worker of the pool; the search and its charge are then a task of
/// their own, which the handler awaits. A client that leaves (it resets the connection, or
/// closes its side of it: see `peer`) ends the handler: while it waits, its place in the
/// queue is given back; while it searches, the search stops at its next look at its limits
/// (no worker thinks for nobody), and the task still charges the time it ran (leaving is no
/// way around the quota).
async fn run(
    state: &web::Data<AppState>,
    req: &HttpRequest,
    admission: quota::Admission,
    question: Question,
) -> Result<HttpResponse, ApiError> {
    let caller = admission.caller.as_ref().map(|caller| caller.id.as_str());
    let peer = Peer::of(req);
    let worker = unless_gone(peer.as_ref(), state.analysis.admit(caller)).await??;
    let stop = Arc::new(AtomicBool::new(false));
    let _hang_up = StopOnDrop(stop.clone());
    let task = actix_web::rt::spawn(search_and_charge(
        worker,
        state.clone(),
        admission.caller,
        question,
        stop,
    ));
    let analysis = unless_gone(peer.as_ref(), task)
        .await?
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("analysis failed: {e}")))??;
    let mut response = HttpResponse::Ok();
    for header in admission.headers {
        response.insert_header(header);
    }
    Ok(response.json(view(analysis)))
}

/// The search on `worker`, stopped early if `stop` is set, and its time charged to
/// `caller`.
async fn search_and_charge(
    worker: Worker,
    state: web::Data<AppState>,
    caller: Option<quota::Caller>,
    question: Question,
    stop: Arc<AtomicBool>,
) -> Result<Analysis, ApiError> {
    let Question {
        rules,
        limits,
        multipv,
        plies_to_limit,
    } = question;
    let caps = state.settings.analysis.caps;
    let game = rules.kind().as_str();
    let analysis = worker
        .run(move || {
            let clock = WallClock::start();
            analyse(
                &rules,
                &Params {
                    caps,
                    multipv,
                    stop: Some(&stop),
                    plies_to_limit,
                    ..Params::analysis(limits, &clock)
                },
            )
        })
        .await?;
    crate::service::metrics::METRICS
        .analysis_seconds
        .with_label_values(&[game])
        .observe(analysis.time_ms as f64 / 1000.0);
    if let Some(caller) = &caller {
        // The analysis is done and its answer stands even if the store cannot take the
        // charge now; the caller then got that time for free.
        if let Err(e) = state
            .quotas
            .charge(
                &state.store,
                caller,
                Class::Analysis,
                analysis.time_ms.max(1),
            )
            .await
        {
            tracing::warn!(error = %e, "analysis time not charged");
        }
    }
    Ok(analysis)
}

/// Analyse any position: best move, score (proven wins and losses in plies), principal
/// variation, and the `multipv` best lines. Limits are capped by the server's configuration.
#[utoipa::path(
    post,
    path = "/v1/analysis",
    tag = "analysis",
    request_body = AnalysisRequest,
    responses(
        (status = 200, description = "The analysis", body = AnalysisView),
        (status = 400, description = "`bad_request`: bad JSON, or a value outside this document's schema (unknown game or variant, bad limits or multipv)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`bad_position`: the position does not parse for this game; `bad_variant`: a variant this game does not have", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`: over the caller's quota (analysis time, requests in flight, key lookups), or the caller already holds its share of this replica's analysis pool (as many analyses running or waiting as the pool has workers, at most a quarter of its places; without `RateLimit` headers); `Retry-After` says when to try again, `RateLimit` and `RateLimit-Policy` (also on successful answers) how much analysis time is left", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`busy`: the analysis pool and its queue are full; see `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn analyse_position(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<AnalysisRequest>,
) -> Result<HttpResponse, ApiError> {
    let request = body.into_inner();
    let kind = request.game;
    let variants = kind.with_variants(&request.variants)?;
    let multipv = check(request.limits, request.multipv)?;
    let rules = AnyState::new(kind, variants, Some(&request.position))?;
    let admission = match quota::admit(&state, &req, Class::Analysis, 1).await {
        Ok(admission) => admission,
        Err(refusal) => return Ok(refusal),
    };
    run(
        &state,
        &req,
        admission,
        Question {
            rules,
            limits: request.limits,
            multipv,
            plies_to_limit: None,
        },
    )
    .await
}

/// Analyse a stored game's current position, its history included, and the service's ply cap:
/// a line that reaches it is a draw.
#[utoipa::path(
    post,
    path = "/v1/games/{id}/analysis",
    tag = "analysis",
    params(("id" = String, Path, description = "The game's UUID")),
    request_body = GameAnalysisRequest,
    responses(
        (status = 200, description = "The analysis", body = AnalysisView),
        (status = 400, description = "`bad_request`: bad JSON, or a value outside this document's schema (bad limits or multipv)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`game_not_found`", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`rate_limited`: over the caller's quota (analysis time, requests in flight, key lookups), or the caller already holds its share of this replica's analysis pool (as many analyses running or waiting as the pool has workers, at most a quarter of its places; without `RateLimit` headers); `Retry-After` says when to try again, `RateLimit` and `RateLimit-Policy` (also on successful answers) how much analysis time is left", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`busy`, `store_unavailable`, or `store_full` (a write the store has no room for: Redis at its `maxmemory`), with `Retry-After`", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn analyse_game(
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
    body: web::Json<GameAnalysisRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path)?;
    let request = body.into_inner();
    let multipv = check(request.limits, request.multipv)?;
    // Admitted before the game is read: a caller out of analysis time costs the store nothing.
    let admission = match quota::admit(&state, &req, Class::Analysis, 1).await {
        Ok(admission) => admission,
        Err(refusal) => return Ok(refusal),
    };
    let (loaded, _) = games::read(&state, id).await?;
    run(
        &state,
        &req,
        admission,
        Question {
            rules: loaded.game.rules().clone(),
            limits: request.limits,
            multipv,
            plies_to_limit: Some(loaded.game.plies_to_limit(state.settings.max_plies)),
        },
    )
    .await
}
