//! The game cache is bounded by the weights it is told (`--cache-mb`), so a weight must not
//! undercount what a cached game holds: measured here by counting what the allocator hands
//! out for games of every kind, at their start and after moves, with and without their
//! legal-moves answer. (A test binary of its own: the count is of the whole process.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, Ordering};

use pillarz::rules::{AnyState, GameKind, Variants};
use pillarz::service::cache::Loaded;
use pillarz::service::domain::{GameId, SeatToken, StoredGame};

/// The system allocator, counting the bytes held.
struct Counting;

static HELD: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HELD.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A game of `kind` after `plies` moves (fewer if it ended).
fn game(kind: GameKind, plies: u64, tokens: &[SeatToken; 2]) -> StoredGame {
    let state = AnyState::new(kind, Variants::NONE, None).unwrap();
    let mut game = StoredGame::create(GameId::new_random(), state, None, [None; 2], tokens, 1_000);
    for ply in 0..plies {
        let moves = game.rules().legal_moves();
        if moves.is_empty() || game.is_finished() {
            break;
        }
        let mv = &moves[(ply as usize * 7) % moves.len()];
        game.play(game.rules().turn(), mv, 2_000 + ply, 2000)
            .unwrap();
    }
    game
}

/// Bytes held by 100 cached games of `kind` at `plies`, and the sum of their weights.
fn held_and_weighed(kind: GameKind, plies: u64, with_legal_moves: bool) -> (usize, usize) {
    let tokens = [SeatToken::generate(), SeatToken::generate()];
    // Whatever a first game sets up for good (the random generator, tables) is not the games'.
    Loaded::new(game(kind, plies, &tokens)).legal_moves_json();
    let mut cached: Vec<Arc<Loaded>> = Vec::with_capacity(100);
    let before = HELD.load(Ordering::Relaxed);
    for _ in 0..100 {
        let game = game(kind, plies, &tokens);
        cached.push(match with_legal_moves {
            true => Loaded::with_legal_moves(game),
            false => Loaded::new(game),
        });
    }
    let held = (HELD.load(Ordering::Relaxed) - before) as usize;
    let weighed = cached.iter().map(|loaded| loaded.weight()).sum();
    (held, weighed)
}

#[test]
fn a_cached_games_weight_covers_what_it_holds() {
    for kind in GameKind::ALL {
        for plies in [0, 30] {
            for with_legal_moves in [false, true] {
                let (held, weighed) = held_and_weighed(kind, plies, with_legal_moves);
                let case = format!("{kind} after {plies} plies, legal moves {with_legal_moves}");
                assert!(
                    weighed >= held,
                    "{case}: weighed {weighed} bytes, but the games hold {held}"
                );
                assert!(
                    weighed <= 2 * held,
                    "{case}: weighed {weighed} bytes, more than twice the {held} they hold"
                );
            }
        }
    }
}
