//! Storage stays bounded: every key has a lifetime, unfinished games expire after an idle
//! period that every change renews, and the embedded store sweeps by itself and refuses new
//! games, and writes past its bytes, when full.

use std::time::Duration;

use pillarz::api::{CreatedGame, Seat};
use pillarz::service::configuration::Settings;
use pillarz::service::store::renewal_slack;
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{RedisServer, TestApp, assert_problem, move_with_key, settings_for};

fn pttl(conn: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("PTTL").arg(key).query(conn).unwrap()
}

fn keys(conn: &mut redis::Connection, pattern: &str) -> Vec<String> {
    redis::cmd("KEYS").arg(pattern).query(conn).unwrap()
}

/// The store's clock in milliseconds.
fn redis_now(conn: &mut redis::Connection) -> i64 {
    let (secs, micros): (i64, i64) = redis::cmd("TIME").query(conn).unwrap();
    secs * 1000 + micros / 1000
}

/// Makes a game's keys run out in `ms`, as if that much of their lifetime were left: the keys'
/// lifetimes and the game's note of when they run out (`x`), which a write goes by.
fn run_down(conn: &mut redis::Connection, game_key: &str, keys: &[&String], ms: i64) {
    shorten(conn, keys, ms);
    let deadline = redis_now(conn) + ms;
    let _: i64 = redis::cmd("HSET")
        .arg(game_key)
        .arg("x")
        .arg(deadline)
        .query(conn)
        .unwrap();
}

/// Sets the keys' lifetimes to `ms`, and nothing else.
fn shorten(conn: &mut redis::Connection, keys: &[&String], ms: i64) {
    for key in keys {
        let _: i64 = redis::cmd("PEXPIRE").arg(key).arg(ms).query(conn).unwrap();
    }
}

async fn keyed_move(app: &TestApp, id: &str, token: &str, key: &str, mv: &str) {
    let response = move_with_key(app, id, token, key, mv).await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// Plays the first legal move of the side to move, under the `Idempotency-Key` `key`.
async fn play_first_legal(app: &TestApp, created: &CreatedGame, key: &str) {
    let id = &created.game.id;
    let turn = app.view(id).await.turn;
    let mv = app.legal_moves(id).await[0].clone();
    keyed_move(app, id, &created.tokens[&turn], key, &mv).await;
}

#[tokio::test]
async fn every_redis_key_has_a_lifetime_renewed_by_each_change() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "ttl");
    settings.idle_ttl = Duration::from_secs(100);
    settings.finished_ttl = Duration::from_secs(1000);
    let app = TestApp::spawn_with(settings).await;
    // Redis keeps a game its lifetime after a change, and at most this much more.
    let slack = renewal_slack(Duration::from_secs(100)).as_millis() as i64;
    assert!(slack > 0 && slack < 10_000, "{slack}");
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    let mut conn = redis.connection();
    let game_key = crate::helpers::redis_key("ttl", id, "g");
    let events_key = crate::helpers::redis_key("ttl", id, "e");
    for key in [&game_key, &events_key] {
        let ttl = pttl(&mut conn, key);
        assert!(
            (95_000..=100_000 + slack).contains(&ttl),
            "{key}: a new game lives the idle period, not for ever ({ttl})"
        );
    }
    // Let the lifetimes run down: a move renews them.
    run_down(&mut conn, &game_key, &[&game_key, &events_key], 5000);
    keyed_move(&app, id, &created.tokens[&Seat::P1], "k1", "a1+b1").await;
    for key in [&game_key, &events_key] {
        let ttl = pttl(&mut conn, key);
        assert!(ttl > 99_000, "{key}: renewed by the move ({ttl})");
    }
    // Every key of the service, whatever it is, expires.
    let all = keys(&mut conn, "ttl:*");
    assert!(all.len() >= 3, "{all:?}");
    for key in &all {
        let ttl = pttl(&mut conn, key);
        assert!(ttl > 0, "{key} has no lifetime ({ttl})");
        assert!(
            ttl <= 100_000 + slack,
            "{key} lives longer than the idle period and the slack ({ttl})"
        );
    }
    // Finished: the finished lifetime.
    let resigned = app.resign(id, &created.tokens[&Seat::P2]).await;
    assert_eq!(resigned.status(), StatusCode::OK);
    for key in [&game_key, &events_key] {
        let ttl = pttl(&mut conn, key);
        assert!(ttl > 990_000, "{key}: the finished lifetime ({ttl})");
    }
}

/// A move renews the keys only when they would run out before the lifetime or outlive it by
/// more than the slack: an active game's keys are renewed once per slack, not once per move.
/// So after every move a key lives from the lifetime to the lifetime and the slack, never less.
#[tokio::test]
async fn a_game_within_its_slack_is_not_renewed_by_each_move() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "slack");
    settings.idle_ttl = Duration::from_secs(100);
    let app = TestApp::spawn_with(settings).await;
    let slack = renewal_slack(Duration::from_secs(100)).as_millis() as i64;
    // A timed Alcazar game with keyed moves has every key a game can have: the hash, the log,
    // the history, the answers, and its shard's due index.
    let created = app
        .create(
            json!({"game": "alcazar", "time_control": {"initial_ms": 600_000, "increment_ms": 0}}),
        )
        .await;
    let id = &created.game.id;
    let mut conn = redis.connection();
    let game_key = crate::helpers::redis_key("slack", id, "g");
    let events_key = crate::helpers::redis_key("slack", id, "e");
    let history_key = crate::helpers::redis_key("slack", id, "r");
    let answers_key = crate::helpers::redis_key("slack", id, "i");
    for ply in 0..4 {
        // Inside the band [lifetime, lifetime + slack]: left as it is.
        run_down(
            &mut conn,
            &game_key,
            &[&game_key, &events_key],
            100_000 + slack / 2,
        );
        play_first_legal(&app, &created, &format!("m{ply}")).await;
        // Left as run down (less the second the move may take), not set to the lifetime
        // (100,000) nor to the lifetime and the slack.
        for key in [&game_key, &events_key] {
            let ttl = pttl(&mut conn, key);
            assert!(
                (100_000 + slack / 2 - 1_000..=100_000 + slack / 2).contains(&ttl),
                "{key}: not renewed within the slack ({ttl})"
            );
        }
        // The history and the answers came into being with the first move, and expire.
        for key in [&history_key, &answers_key] {
            let ttl = pttl(&mut conn, key);
            assert!((90_000..=100_000 + slack).contains(&ttl), "{key}: {ttl}");
        }
    }
    // Just below the lifetime: renewed, to the lifetime and the slack.
    let every = [&game_key, &events_key, &history_key, &answers_key];
    run_down(&mut conn, &game_key, &every, 99_000);
    play_first_legal(&app, &created, "last").await;
    for key in every {
        let ttl = pttl(&mut conn, key);
        assert!(
            (100_000 + slack - 5_000..=100_000 + slack).contains(&ttl),
            "{key}: renewed ({ttl})"
        );
    }
    for key in keys(&mut conn, "slack:*") {
        let ttl = pttl(&mut conn, &key);
        assert!(ttl > 0, "{key} has no lifetime ({ttl})");
    }
}

/// A game stored by an earlier build has no note of when its keys run out (`x`): every write
/// renews its keys, as that build did, and leaves it so.
#[tokio::test]
async fn a_game_in_the_earlier_layout_is_renewed_by_every_write() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "earlier");
    settings.idle_ttl = Duration::from_secs(100);
    let app = TestApp::spawn_with(settings).await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    let mut conn = redis.connection();
    let game_key = crate::helpers::redis_key("earlier", id, "g");
    let events_key = crate::helpers::redis_key("earlier", id, "e");
    let answers_key = crate::helpers::redis_key("earlier", id, "i");
    let removed: i64 = redis::cmd("HDEL")
        .arg(&game_key)
        .arg("x")
        .query(&mut conn)
        .unwrap();
    assert_eq!(removed, 1, "this build notes when the keys run out");
    for ply in 0..3 {
        shorten(&mut conn, &[&game_key, &events_key], 5000);
        play_first_legal(&app, &created, &format!("m{ply}")).await;
        for key in [&game_key, &events_key, &answers_key] {
            let ttl = pttl(&mut conn, key);
            assert!(ttl > 99_000, "{key}: renewed by the write ({ttl})");
        }
        let x: Option<String> = redis::cmd("HGET")
            .arg(&game_key)
            .arg("x")
            .query(&mut conn)
            .unwrap();
        assert_eq!(x, None, "still in the earlier layout");
    }
}

#[tokio::test]
async fn an_idle_unfinished_game_expires_from_redis() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "idle");
    settings.idle_ttl = Duration::from_secs(1);
    let app = TestApp::spawn_with(settings).await;
    let created = app.create(json!({"game": "pyrga"})).await;
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let mut conn = redis.connection();
    assert!(keys(&mut conn, "idle:*").is_empty(), "nothing is left");
    let gone = app.get(&format!("/v1/games/{}", created.game.id)).await;
    assert_problem(gone, 404, "game_not_found").await;
}

fn bounded_memory(capacity: usize, idle: Duration) -> Settings {
    let mut settings = Settings::for_tests();
    settings.memory_max_games = capacity;
    settings.idle_ttl = idle;
    settings
}

#[tokio::test]
async fn the_memory_store_refuses_new_games_when_full() {
    let app = TestApp::spawn_with(bounded_memory(3, Duration::from_secs(3600))).await;
    for _ in 0..3 {
        app.create(json!({"game": "pyrga"})).await;
    }
    let full = app.post_json("/v1/games", &json!({"game": "pyrga"})).await;
    let retry_after = full
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    assert!(
        retry_after.is_some_and(|s| s.parse::<u32>().unwrap() > 0),
        "Retry-After"
    );
    let body = assert_problem(full, 503, "store_full").await;
    assert!(body["detail"].as_str().unwrap().contains('3'), "{body}");
}

/// A game grows with its moves (its log, its saved answers), so a count of games bounds
/// nothing useful: the embedded store also counts bytes, and refuses the write that would pass
/// its budget as Redis at its `maxmemory` does (`503 store_full`), changing nothing; reads go
/// on.
#[tokio::test]
async fn the_memory_store_refuses_moves_past_its_byte_budget() {
    let mut settings = bounded_memory(10_000, Duration::from_secs(3600));
    settings.memory_max_bytes = 256 << 10;
    let app = TestApp::spawn_with(settings).await;
    let mut played = 0;
    let refused = 'games: loop {
        let created = app
            .post_json("/v1/games", &json!({"game": "alcazar"}))
            .await;
        assert_eq!(
            created.status(),
            StatusCode::CREATED,
            "moves fill the store first"
        );
        let created: CreatedGame = created.json().await.unwrap();
        let id = created.game.id.clone();
        let mut view = created.game.clone();
        while view.status != pillarz::api::Status::Finished {
            let moves = app.legal_moves(&id).await;
            let mv = &moves[view.ply as usize * 7 % moves.len()];
            let key = format!("k{played}");
            let answer = move_with_key(&app, &id, &created.tokens[&view.turn], &key, mv).await;
            if answer.status() == StatusCode::SERVICE_UNAVAILABLE {
                break 'games (id, view.version, answer);
            }
            assert_eq!(answer.status(), StatusCode::OK);
            view = answer.json().await.unwrap();
            played += 1;
            assert!(played < 20_000, "{played} moves and never refused");
        }
    };
    let (id, version, answer) = refused;
    assert!(answer.headers().contains_key("retry-after"));
    let body = assert_problem(answer, 503, "store_full").await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("maximum of 256 KiB"),
        "{body}"
    );
    // About 1,400 moves fit (under 200 bytes each with their answers), not tens of thousands.
    assert!((300..5_000).contains(&played), "{played} moves");
    let view = app.view(&id).await;
    assert_eq!(view.version, version, "the refused move changed nothing");
    assert!(!app.legal_moves(&id).await.is_empty(), "reads go on");
}

/// Nobody touches the games: the store's own sweep expires them and frees room.
#[tokio::test]
async fn the_memory_store_expires_idle_games_by_itself() {
    let app = TestApp::spawn_with(bounded_memory(2, Duration::from_millis(700))).await;
    let first = app.create(json!({"game": "pyrga"})).await;
    app.create(json!({"game": "pyrga"})).await;
    let full = app.post_json("/v1/games", &json!({"game": "pyrga"})).await;
    assert_problem(full, 503, "store_full").await;
    // No request reads either game; only the sweep can make room.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    app.create(json!({"game": "pyrga"})).await;
    app.create(json!({"game": "pyrga"})).await;
    let gone = app.get(&format!("/v1/games/{}", first.game.id)).await;
    assert_problem(gone, 404, "game_not_found").await;
}

/// A game that keeps changing is never idle.
#[tokio::test]
async fn each_change_renews_an_unfinished_game_in_memory() {
    let app = TestApp::spawn_with(bounded_memory(10, Duration::from_millis(1200))).await;
    let created = app.create(json!({"game": "alcazar"})).await;
    let id = &created.game.id;
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let view = app.view(id).await;
        let mv = app.legal_moves(id).await[0].clone();
        let played = app.play(id, &created.tokens[&view.turn], &mv).await;
        assert_eq!(played.status(), StatusCode::OK);
    }
    tokio::time::sleep(Duration::from_millis(1800)).await;
    let gone = app.get(&format!("/v1/games/{id}")).await;
    assert_problem(gone, 404, "game_not_found").await;
}

/// Storage grows by a few dozen bytes per ply: an event is the change, not the game again
/// (and the log is the move list), and the game keeps its position and its repetition history
/// instead of replaying moves.
#[tokio::test]
async fn storage_grows_linearly_with_the_plies() {
    let redis = RedisServer::start();
    let app = TestApp::spawn_with(settings_for(Some(&redis), "linear")).await;
    let created = app.create(json!({"game": "alcazar"})).await;
    let id = created.game.id.clone();
    let plies = 120;
    let mut view = created.game.clone();
    let mut last = String::new();
    while view.ply < plies {
        // A move that does not end the game (a knight step back and forth would repeat).
        let moves = app.legal_moves(&id).await;
        let n = moves.len();
        let mut played = None;
        for k in 0..n {
            let mv = &moves[(view.ply as usize * 7 + k) % n];
            let mut probe = pillarz::rules::AnyRecord::replay(
                pillarz::rules::GameKind::Alcazar,
                Default::default(),
                &view.start_position,
                &view.moves,
            )
            .unwrap();
            probe.play(mv).unwrap();
            if probe.outcome().is_none() {
                played = Some(mv.clone());
                break;
            }
        }
        let mv = played.expect("a move that does not end the game");
        let response = app.play(&id, &created.tokens[&view.turn], &mv).await;
        assert_eq!(response.status(), StatusCode::OK);
        view = response.json().await.unwrap();
        last = mv;
    }
    let mut conn = redis.connection();
    let events: Vec<String> = redis::cmd("LRANGE")
        .arg(crate::helpers::redis_key("linear", &id, "e"))
        .arg(0)
        .arg(-1)
        .query(&mut conn)
        .unwrap();
    assert_eq!(events.len() as u64, plies + 1);
    for line in &events {
        assert!(line.len() < 48, "an event is the change only: {line:?}");
    }
    assert!(events.last().unwrap().contains(&last));
    let game = crate::helpers::redis_key("linear", &id, "g");
    let (live, moves): (String, Option<String>) = redis::cmd("HMGET")
        .arg(&game)
        .arg("s")
        .arg("m")
        .query(&mut conn)
        .unwrap();
    assert!(live.len() < 200, "the live part does not grow: {live}");
    assert_eq!(
        moves, None,
        "the log is the move list: the moves are not kept twice"
    );
    let history: Vec<u8> = redis::cmd("GET")
        .arg(crate::helpers::redis_key("linear", &id, "r"))
        .query(&mut conn)
        .unwrap();
    assert_eq!(
        history.len() as u64,
        8 * plies,
        "one key per earlier position"
    );
    let ttl = pttl(&mut conn, &crate::helpers::redis_key("linear", &id, "r"));
    assert!(ttl > 0, "the history expires with its game ({ttl})");
}
