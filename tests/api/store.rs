//! The stores themselves, against a real Redis and in memory: a write that was applied but
//! whose reply was lost (a Redis Cluster client resends it after a connection error) answers
//! as applied when it arrives again, instead of as a conflict that would turn an applied move
//! into a `409`.

use std::time::Duration;

use pillarz::api::Seat;
use pillarz::rules::{AnyState, GameKind, Variants};
use pillarz::service::domain::{GameId, SeatToken, StoredGame};
use pillarz::service::store::{
    Creation, MemoryStore, ReadOutcome, RedisStore, Store, StoreClock, Write, WriteOutcome,
};

use crate::helpers::RedisServer;

const LIFETIME: Duration = Duration::from_secs(600);

async fn a_resent_write_answers_as_applied(store: Store) {
    let id = GameId::new_random();
    let key = id.to_string();
    let tokens = [SeatToken::generate(), SeatToken::generate()];
    let now = store.clock().now_ms();
    let state = AnyState::new(GameKind::Pillarz, Variants::NONE, None).unwrap();
    let game = StoredGame::create(id, state, None, [None, None], &tokens, now);
    let created = store
        .create(
            &key,
            Creation {
                snapshot: &game.snapshot(),
                event: "c 1",
                expire_after: LIFETIME,
                due: None,
                now,
            },
        )
        .await
        .unwrap();
    assert_eq!(created, pillarz::service::store::CreateOutcome::Created);
    let mut next = game.clone();
    let change = next.play(Seat::P1, "a1+b1", now, 2000).unwrap();
    let live = next.live_json();
    let event = next.encode(&change.event);
    let write = |write_id: &'static str| Write {
        expected: 1,
        version: 2,
        live: &live,
        mv: change.mv.as_deref(),
        history_key: None,
        event: &event,
        expire_after: LIFETIME,
        answer: None,
        write_id,
        due: None,
        now,
    };
    assert_eq!(
        store.write(&key, write("00000000000000aa")).await.unwrap(),
        WriteOutcome::Applied
    );
    // The same write again (the first reply was lost): applied, and not applied twice.
    assert_eq!(
        store.write(&key, write("00000000000000aa")).await.unwrap(),
        WriteOutcome::Applied
    );
    // Another write computed from the same version is a conflict, with the current game.
    match store.write(&key, write("00000000000000bb")).await.unwrap() {
        WriteOutcome::Conflict(Some(current)) => {
            assert_eq!(current.version, 2);
            assert_eq!(current.moves, "a1+b1 ", "the move is stored once");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let ReadOutcome::Current(stored) = store.read(&key, None).await.unwrap() else {
        panic!("the game is there");
    };
    assert_eq!(stored.moves, "a1+b1 ");
    let events = store.events_after(&key, 0, 10).await.unwrap();
    assert_eq!(events.len(), 2, "one creation and one move: {events:?}");
    assert_eq!(
        store.read(&key, Some(2)).await.unwrap(),
        ReadOutcome::Unchanged
    );
}

#[tokio::test]
async fn a_resent_write_answers_as_applied_redis() {
    let redis = RedisServer::start();
    let store = RedisStore::new(
        &redis.url(),
        "resent",
        None,
        StoreClock::default(),
        Duration::from_secs(3600),
    )
    .unwrap();
    a_resent_write_answers_as_applied(Store::Redis(Box::new(store))).await;
}

#[tokio::test]
async fn a_resent_write_answers_as_applied_memory() {
    let store = MemoryStore::new(10, StoreClock::default());
    a_resent_write_answers_as_applied(Store::Memory(Box::new(store))).await;
}
