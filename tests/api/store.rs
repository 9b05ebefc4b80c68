//! The stores themselves, against a real Redis and in memory: a write that was applied but
//! whose reply was lost (a Redis Cluster client resends it after a connection error) answers
//! as applied when it arrives again, instead of as a conflict that would turn an applied move
//! into a `409`; a create sent again stores its game once.

use std::time::Duration;

use pillarz::api::Seat;
use pillarz::rules::{AnyState, GameKind, Variants};
use pillarz::service::domain::{GameId, SeatToken, StoredGame};
use pillarz::service::store::{
    Creation, MemoryStore, Newer, ReadOutcome, RedisStore, Store, StoreClock, Write, WriteOutcome,
};

use crate::helpers::RedisServer;

const LIFETIME: Duration = Duration::from_secs(600);

/// A store on `redis` under its own prefix.
fn redis_store(redis: &RedisServer, prefix: &str) -> Store {
    let store = RedisStore::new(
        &redis.url(),
        prefix,
        None,
        StoreClock::default(),
        Duration::from_secs(3600),
    )
    .unwrap();
    Store::Redis(Box::new(store))
}

/// A new untimed game of `kind`, stored under `id`.
async fn store_new_game(store: &Store, id: GameId, kind: GameKind) -> StoredGame {
    store_game(store, id, kind, None).await
}

/// A new untimed game of `kind`, stored under `id` and due at `due`.
async fn store_game(store: &Store, id: GameId, kind: GameKind, due: Option<u64>) -> StoredGame {
    store_game_sent(store, id, kind, due, 1).await
}

/// A new untimed game of `kind`, stored under `id` and due at `due` by the same create sent
/// `times` times (as a client resends one whose reply was lost), each answered as created.
async fn store_game_sent(
    store: &Store,
    id: GameId,
    kind: GameKind,
    due: Option<u64>,
    times: usize,
) -> StoredGame {
    let tokens = [SeatToken::generate(), SeatToken::generate()];
    let now = store.clock().now_ms();
    let state = AnyState::new(kind, Variants::NONE, None).unwrap();
    let game = StoredGame::create(id, state, None, [None, None], &tokens, now);
    let snapshot = game.snapshot();
    let event = game.encode(&pillarz::service::domain::Event::Created { at: now });
    for _ in 0..times {
        let created = store
            .create(
                &id.to_string(),
                Creation {
                    snapshot: &snapshot,
                    event: &event,
                    expire_after: LIFETIME,
                    due,
                    now,
                },
            )
            .await
            .unwrap();
        assert_eq!(created, pillarz::service::store::CreateOutcome::Created);
    }
    game
}

/// A new pyrga game stored under a fresh id, due at `due`; its id.
async fn store_due_game(store: &Store, due: Option<u64>) -> String {
    let id = GameId::new_random();
    store_game(store, id, GameKind::Pyrga, due).await;
    id.to_string()
}

/// The due index answers the earliest due games first, whatever their ids, and `postpone`
/// moves only an entry that is still due: a later due time written meanwhile stands, and a
/// game with no entry gets none.
async fn the_due_index_is_earliest_first_and_postponed_only_when_due(store: Store) {
    let now = store.clock().now_ms();
    let mut by_time = Vec::new();
    for i in 0..10u64 {
        // Due times that the ids' order (random) does not follow.
        by_time.push((
            now - 10_000 + i * 100,
            store_due_game(&store, Some(now - 10_000 + i * 100)).await,
        ));
    }
    let earliest: Vec<String> = by_time.iter().take(3).map(|(_, id)| id.clone()).collect();
    assert_eq!(store.due(now, 3).await.unwrap(), earliest);

    let later = store_due_game(&store, Some(now + 60_000)).await;
    let unindexed = store_due_game(&store, None).await;
    let first = &earliest[0];
    store.postpone(first, now, now + 5_000).await.unwrap();
    store.postpone(&later, now, now + 1_000).await.unwrap();
    store.postpone(&unindexed, now, now + 1_000).await.unwrap();
    let due_now = store.due(now, 100).await.unwrap();
    assert!(!due_now.contains(first), "postponed");
    assert_eq!(due_now.len(), 9);
    let due_soon = store.due(now + 5_000, 100).await.unwrap();
    assert_eq!(due_soon.last(), Some(first), "at the back of the line");
    assert!(!due_soon.contains(&later), "a later due time stands");
    assert!(!due_soon.contains(&unindexed), "no entry is made");
    assert!(store.due(now + 60_000, 100).await.unwrap().contains(&later));
}

#[tokio::test]
async fn the_due_index_is_earliest_first_and_postponed_only_when_due_redis() {
    let redis = RedisServer::start();
    the_due_index_is_earliest_first_and_postponed_only_when_due(redis_store(&redis, "due")).await;
}

#[tokio::test]
async fn the_due_index_is_earliest_first_and_postponed_only_when_due_memory() {
    the_due_index_is_earliest_first_and_postponed_only_when_due(Store::Memory(Box::new(
        MemoryStore::new(100, 1 << 30, StoreClock::default()),
    )))
    .await;
}

/// An embedded store.
fn memory_store() -> Store {
    Store::Memory(Box::new(MemoryStore::new(
        10,
        1 << 30,
        StoreClock::default(),
    )))
}

async fn a_resent_write_answers_as_applied(store: Store) {
    let id = GameId::new_random();
    let key = id.to_string();
    let game = store_new_game(&store, id, GameKind::Pillarz).await;
    let now = game.changed_at();
    let mut next = game.clone();
    let change = next.play(Seat::P1, "a1+b1", now, 2000).unwrap();
    let live = next.live_json();
    let event = next.encode(&change.event);
    let write = |write_id: &'static str| Write {
        expected: game.known(),
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
        WriteOutcome::Conflict(Some(newer)) => {
            let current = StoredGame::from_newer(id, Some(&game), &newer)
                .unwrap()
                .unwrap();
            assert_eq!(current.snapshot(), next.snapshot());
            assert_eq!(
                current.moves().collect::<Vec<_>>(),
                ["a1+b1"],
                "stored once"
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let ReadOutcome::Current(stored) = store.read(&key, None).await.unwrap() else {
        panic!("the game is there");
    };
    assert_eq!(
        StoredGame::from_newer(id, None, &stored)
            .unwrap()
            .unwrap()
            .snapshot(),
        next.snapshot()
    );
    let events = store.events_after(&key, 0, 10).await.unwrap();
    assert_eq!(events.len(), 2, "one creation and one move: {events:?}");
    assert_eq!(
        store.read(&key, Some(next.known())).await.unwrap(),
        ReadOutcome::Unchanged
    );
}

#[tokio::test]
async fn a_resent_write_answers_as_applied_redis() {
    let redis = RedisServer::start();
    a_resent_write_answers_as_applied(redis_store(&redis, "resent")).await;
}

#[tokio::test]
async fn a_resent_write_answers_as_applied_memory() {
    a_resent_write_answers_as_applied(memory_store()).await;
}

async fn a_resent_create_stores_the_game_once(store: Store) {
    let id = GameId::new_random();
    let key = id.to_string();
    let game = store_game_sent(&store, id, GameKind::Pillarz, None, 2).await;
    let events = store.events_after(&key, 0, 10).await.unwrap();
    assert_eq!(events.len(), 1, "one creation: {events:?}");
    let ReadOutcome::Current(stored) = store.read(&key, None).await.unwrap() else {
        panic!("the game is there");
    };
    let read = StoredGame::from_newer(id, None, &stored).unwrap().unwrap();
    assert_eq!(read.snapshot(), game.snapshot());
}

#[tokio::test]
async fn a_resent_create_stores_the_game_once_redis() {
    let redis = RedisServer::start();
    a_resent_create_stores_the_game_once(redis_store(&redis, "recreate")).await;
}

#[tokio::test]
async fn a_resent_create_stores_the_game_once_memory() {
    a_resent_create_stores_the_game_once(memory_store()).await;
}

/// Stores an Alcazar game (a game with a repetition history) and plays `plies` moves on it
/// through the store; returns every version of it, oldest first.
async fn play_through(store: &Store, id: GameId, plies: usize) -> Vec<StoredGame> {
    let key = id.to_string();
    let game = store_new_game(store, id, GameKind::Alcazar).await;
    let now = game.changed_at();
    let mut versions = vec![game];
    for ply in 0..plies {
        let current = versions.last().unwrap();
        let mut next = current.clone();
        let legal = next.rules().legal_moves();
        let mv = &legal[(ply * 7) % legal.len()];
        let change = next.play(next.rules().turn(), mv, now, 2000).unwrap();
        let written = store
            .write(
                &key,
                Write {
                    expected: current.known(),
                    version: next.version(),
                    live: &next.live_json(),
                    mv: change.mv.as_deref(),
                    history_key: change.history_key,
                    event: &next.encode(&change.event),
                    expire_after: LIFETIME,
                    answer: None,
                    write_id: &format!("{ply:016x}"),
                    due: None,
                    now,
                },
            )
            .await
            .unwrap();
        assert_eq!(written, WriteOutcome::Applied);
        versions.push(next);
    }
    versions
}

/// A reader holding any earlier version (or none) gets exactly the current game: moves,
/// history, live part and header, whether the store answers with the whole game or with what
/// changed since; so does a writer whose write lost the race.
async fn every_reader_gets_the_current_game(store: Store) {
    let id = GameId::new_random();
    let key = id.to_string();
    let versions = play_through(&store, id, 24).await;
    let last = versions.last().unwrap();
    assert_eq!(
        last.rules().history().len(),
        24,
        "Alcazar keeps a key per ply"
    );
    let ReadOutcome::Current(whole) = store.read(&key, None).await.unwrap() else {
        panic!("the game is there");
    };
    assert_eq!(
        StoredGame::from_newer(id, None, &whole)
            .unwrap()
            .unwrap()
            .snapshot(),
        last.snapshot()
    );
    for held in &versions[..versions.len() - 1] {
        let ReadOutcome::Current(newer) = store.read(&key, Some(held.known())).await.unwrap()
        else {
            panic!("version {} is not the current one", held.version());
        };
        let read = StoredGame::from_newer(id, Some(held), &newer)
            .unwrap()
            .unwrap();
        assert_eq!(read.snapshot(), last.snapshot(), "from {}", held.version());
        let lost = store
            .write(
                &key,
                Write {
                    expected: held.known(),
                    version: held.version() + 1,
                    live: &held.live_json(),
                    mv: None,
                    history_key: None,
                    event: "t 1 p1",
                    expire_after: LIFETIME,
                    answer: None,
                    write_id: "00000000000000cc",
                    due: None,
                    now: store.clock().now_ms(),
                },
            )
            .await
            .unwrap();
        let WriteOutcome::Conflict(Some(newer)) = lost else {
            panic!("a stale write is a conflict: {lost:?}");
        };
        let current = StoredGame::from_newer(id, Some(held), &newer)
            .unwrap()
            .unwrap();
        assert_eq!(
            current.snapshot(),
            last.snapshot(),
            "from {}",
            held.version()
        );
    }
    assert_eq!(
        store.read(&key, Some(last.known())).await.unwrap(),
        ReadOutcome::Unchanged
    );
}

#[tokio::test]
async fn every_reader_gets_the_current_game_redis() {
    let redis = RedisServer::start();
    every_reader_gets_the_current_game(redis_store(&redis, "since")).await;
}

#[tokio::test]
async fn every_reader_gets_the_current_game_memory() {
    every_reader_gets_the_current_game(memory_store()).await;
}

/// Only what is newer crosses the wire: a reader one move behind gets one event and one
/// key, not the game's whole log and history.
#[tokio::test]
async fn a_reader_one_move_behind_gets_one_event() {
    let redis = RedisServer::start();
    let store = redis_store(&redis, "delta");
    let id = GameId::new_random();
    let versions = play_through(&store, id, 30).await;
    let held = &versions[versions.len() - 2];
    let ReadOutcome::Current(Newer::Logged(logged)) = store
        .read(&id.to_string(), Some(held.known()))
        .await
        .unwrap()
    else {
        panic!("the Redis store answers from its log");
    };
    assert_eq!((logged.after, logged.version), (30, 31));
    assert_eq!(logged.header, None);
    assert_eq!(logged.events.len(), 1, "{:?}", logged.events);
    assert_eq!(logged.history.len(), 8, "one key");
}

/// A game stored by an earlier build (its moves in the field `m`, its keys in the field `r`)
/// is read whole and from any version: its history is the field `r` followed by the key `r`.
#[tokio::test]
async fn a_game_in_the_earlier_layout_is_read_whole_and_from_any_version() {
    let redis = RedisServer::start();
    let prefix = "earlier";
    let store = redis_store(&redis, prefix);
    let id = GameId::new_random();
    let key = id.to_string();
    let versions = play_through(&store, id, 12).await;
    // Rewrite it as the earlier layout stored it: moves and keys in the hash.
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let shard = &key[..2];
    let base = format!("{prefix}:{{{shard}}}:{key}");
    let old = &versions[8];
    let old_keys: Vec<u8> = old
        .rules()
        .history()
        .iter()
        .flat_map(|k| k.to_le_bytes())
        .collect();
    let moves: String = versions[12].moves().map(|m| format!("{m} ")).collect();
    let () = redis::cmd("HSET")
        .arg(format!("{base}:g"))
        .arg("m")
        .arg(moves)
        .arg("r")
        .arg(old_keys)
        .query_async(&mut conn)
        .await
        .unwrap();
    // The keys after version 9 were appended to the key `r` by this build.
    let newer_keys: Vec<u8> = versions[12].rules().history()[old.rules().history().len()..]
        .iter()
        .flat_map(|k| k.to_le_bytes())
        .collect();
    let () = redis::cmd("SET")
        .arg(format!("{base}:r"))
        .arg(newer_keys)
        .query_async(&mut conn)
        .await
        .unwrap();
    let last = &versions[12];
    let ReadOutcome::Current(whole) = store.read(&key, None).await.unwrap() else {
        panic!("the game is there");
    };
    let read = StoredGame::from_newer(id, None, &whole).unwrap().unwrap();
    assert_eq!(read.snapshot(), last.snapshot());
    for held in &versions[..12] {
        let ReadOutcome::Current(newer) = store.read(&key, Some(held.known())).await.unwrap()
        else {
            panic!("not current");
        };
        let read = StoredGame::from_newer(id, Some(held), &newer)
            .unwrap()
            .unwrap();
        assert_eq!(read.snapshot(), last.snapshot(), "from {}", held.version());
    }
}

/// A copy that is not the store's version of its number (a store that lost writes and took
/// others under the same numbers) is not patched with what followed: the reader is told to
/// read the whole game.
#[tokio::test]
async fn a_copy_the_store_does_not_hold_is_not_patched() {
    let redis = RedisServer::start();
    let store = redis_store(&redis, "diverged");
    let id = GameId::new_random();
    let versions = play_through(&store, id, 6).await;
    // Version 6 as another line of play would have it: another move from version 5.
    let mut diverged = versions[4].clone();
    let stored_move = versions[5].last_move().unwrap().to_string();
    let other = diverged
        .rules()
        .legal_moves()
        .into_iter()
        .find(|m| *m != stored_move)
        .unwrap();
    let turn = diverged.rules().turn();
    diverged
        .play(turn, &other, store.clock().now_ms() + 5, 2000)
        .unwrap();
    assert_eq!(diverged.version(), versions[5].version());
    let ReadOutcome::Current(newer) = store
        .read(&id.to_string(), Some(diverged.known()))
        .await
        .unwrap()
    else {
        panic!("the store is at a later version");
    };
    assert!(
        StoredGame::from_newer(id, Some(&diverged), &newer)
            .unwrap()
            .is_none(),
        "the diverged copy is not patched"
    );
    let read = StoredGame::from_newer(id, Some(&versions[5]), &newer)
        .unwrap()
        .unwrap();
    assert_eq!(
        read.snapshot(),
        versions[6].snapshot(),
        "the store's own copy is"
    );
}

/// A due game that cannot be read (here its event log is gone) is put back in the due index
/// for later, so that it does not stay at its shard's head, where the few games each sweep
/// takes of a shard would be it and others like it for ever.
#[tokio::test]
async fn an_unreadable_due_game_waits_behind_the_others() {
    let redis = RedisServer::start();
    let store = redis_store(&redis, "stuck");
    let now = store.clock().now_ms();
    let id = store_due_game(&store, Some(now - 1_000)).await;
    let key = |part: &str| format!("stuck:{{{}}}:{id}:{part}", &id[..2]);
    let _: () = redis::cmd("DEL")
        .arg(key("e"))
        .query(&mut redis.connection())
        .unwrap();
    let app =
        crate::helpers::TestApp::spawn_with(crate::helpers::settings_for(Some(&redis), "stuck"))
            .await;
    assert_eq!(app.get(&format!("/v1/games/{id}")).await.status(), 500);
    let index = format!("stuck:{{{}}}:due", &id[..2]);
    let due = || -> f64 {
        redis::cmd("ZSCORE")
            .arg(&index)
            .arg(&id)
            .query(&mut redis.connection())
            .unwrap()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while due() < (now + 30_000) as f64 {
        assert!(
            std::time::Instant::now() < deadline,
            "the unreadable game is still due at {}",
            due()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
