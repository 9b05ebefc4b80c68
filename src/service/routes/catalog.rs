//! `GET /v1/catalog`: what the service plays.

use actix_web::{HttpResponse, web};

use crate::api::{
    AnalysisLimits, Catalog, CatalogGame, CatalogSeat, CatalogVariant, Seat, TimeControlLimits,
};
use crate::rules::{AnyRecord, GameKind, Variant, Variants};
use crate::service::domain::{MAX_INCREMENT_MS, MAX_INITIAL_MS, MIN_INITIAL_MS};
use crate::service::state::AppState;

fn seats(p1: (&str, &str), p2: (&str, &str)) -> Vec<CatalogSeat> {
    [(Seat::P1, p1), (Seat::P2, p2)]
        .into_iter()
        .map(|(seat, (name, colour))| CatalogSeat {
            seat,
            name: name.into(),
            colour: colour.into(),
        })
        .collect()
}

fn entry(kind: GameKind) -> CatalogGame {
    let start = AnyRecord::new(kind, Variants::NONE, None)
        .expect("the start position is valid")
        .position();
    let (title, seats, position_notation, move_notation) = match kind {
        GameKind::Pillarz => (
            "pillarz",
            seats(("x", "white"), ("o", "black")),
            "<rank5>/…/<rank1> <side>; a square is its level 0-4, then x or o for a pawn",
            "c2+d3 (placement), b2-c3^d4 (step, then build), b2-c3 (winning step)",
        ),
        GameKind::Pilastri => (
            "Pilastri",
            seats(("x", "white"), ("o", "black")),
            "<rank N>/…/<rank 1> <side>; squares comma-separated, - or the stack bottom to top (x, o)",
            "c3-c5 (the top piece of c3 onto the first stack towards c5)",
        ),
        GameKind::Pyrga => (
            "Pyrga",
            seats(("light", "light"), ("dark", "dark")),
            "<rank4>/…/<rank1> <side> <last>; a space is - or its pieces S, T (with ^ > v <), C; upper case for p1",
            "Sa1, Cc3, Tb4W (piece, space, and a direction for triangles)",
        ),
        GameKind::Alcazar => (
            "Alcazar",
            seats(("Red", "red"), ("Green", "green")),
            "<walls> <red knight> <green knight> <side> <frozen>, on the 9×9 lattice a1…i9",
            "Kd8 (knight step), e8d9 (wall swing from slot to slot)",
        ),
    };
    CatalogGame {
        game: kind,
        title: title.into(),
        variants: kind
            .supported_variants()
            .iter()
            .map(|v| CatalogVariant {
                name: v.as_str().into(),
                description: match v {
                    Variant::Size8 => "an 8×8 board instead of 6×6".into(),
                    Variant::Jumpers => {
                        "High jumpers: grounded pieces may land on any stack".into()
                    }
                },
            })
            .collect(),
        seats,
        start_position: start,
        position_notation: position_notation.into(),
        move_notation: move_notation.into(),
    }
}

/// The games, their variants, seats and notation, the accepted time controls and the
/// largest analysis the service runs.
#[utoipa::path(
    get,
    path = "/v1/catalog",
    tag = "games",
    responses((status = 200, description = "The catalog", body = Catalog))
)]
pub async fn catalog(state: web::Data<AppState>) -> HttpResponse {
    let caps = state.settings.analysis.caps;
    HttpResponse::Ok().json(Catalog {
        games: GameKind::ALL.into_iter().map(entry).collect(),
        time_controls: TimeControlLimits {
            min_initial_ms: MIN_INITIAL_MS,
            max_initial_ms: MAX_INITIAL_MS,
            max_increment_ms: MAX_INCREMENT_MS,
        },
        analysis_limits: AnalysisLimits {
            max_movetime_ms: caps.max_time_ms,
            max_depth: caps.max_depth,
            max_nodes: caps.max_nodes,
            max_multipv: super::analysis::MAX_MULTIPV,
        },
    })
}
