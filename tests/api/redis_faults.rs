//! Redis stopped and restarted under a running server: clear 503s, then recovery by itself.

use std::time::{Duration, Instant};

use pillarz::api::Seat;
use pillarz::service::store::renewal_slack;
use serde_json::json;

use crate::helpers::{RedisServer, TestApp, assert_problem, settings_for};
use crate::metrics::assert_grew;

#[tokio::test]
async fn redis_down_means_503_with_retry_after_and_the_service_recovers() {
    let mut redis = RedisServer::start_durable();
    let app = TestApp::spawn_with(settings_for(Some(&redis), "faults")).await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = created.game.id.clone();
    let p1 = created.tokens[&Seat::P1].clone();
    assert_eq!(app.play(&id, &p1, "a1+b1").await.status(), 200);

    let metrics_before = app.get("/metrics").await.text().await.unwrap();
    redis.stop();
    let started = Instant::now();
    let down = app.get(&format!("/v1/games/{id}")).await;
    assert!(down.headers().contains_key("retry-after"));
    assert_problem(down, 503, "store_unavailable").await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "no hang while Redis is down"
    );
    let p2 = created.tokens[&Seat::P2].clone();
    assert_problem(app.play(&id, &p2, "a5+b5").await, 503, "store_unavailable").await;
    assert_problem(
        app.post_json("/v1/games", &json!({"game": "pyrga"})).await,
        503,
        "store_unavailable",
    )
    .await;
    assert_problem(app.get("/healthz/ready").await, 503, "store_unavailable").await;
    assert_eq!(app.get("/healthz/live").await.status(), 200);
    // Each of the four answers above was one request failed by the store.
    let metrics_after = app.get("/metrics").await.text().await.unwrap();
    assert_grew(
        &metrics_before,
        &metrics_after,
        "pillarz_store_errors_total",
        4.0,
    );
    assert_grew(
        &metrics_before,
        &metrics_after,
        r#"pillarz_http_requests_total{method="GET",route="/healthz/ready",status="503"}"#,
        1.0,
    );

    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if app.get("/healthz/ready").await.status() == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "the service did not recover");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Nothing was lost, and the refused move can now be played.
    let view = app.view(&id).await;
    assert_eq!(view.moves, ["a1+b1"]);
    assert_eq!(app.play(&id, &p2, "a5+b5").await.status(), 200);
    assert_eq!(app.view(&id).await.ply, 2);
}

#[tokio::test]
async fn the_service_starts_while_redis_is_down() {
    let mut redis = RedisServer::start();
    redis.stop();
    let app = TestApp::spawn_with(settings_for(Some(&redis), "late")).await;
    assert_eq!(app.get("/healthz/live").await.status(), 200);
    assert_problem(app.get("/healthz/ready").await, 503, "store_unavailable").await;
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    while app.get("/healthz/ready").await.status() != 200 {
        assert!(Instant::now() < deadline, "the service did not connect");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    app.create(json!({"game": "alcazar"})).await;
}

#[tokio::test]
async fn finished_games_expire_after_the_configured_ttl() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "ttl");
    settings.finished_ttl = Duration::from_secs(1);
    let app = TestApp::spawn_with(settings).await;
    let created = app.create(json!({"game": "pyrga"})).await;
    let id = created.game.id.clone();
    let resign = app.resign(&id, &created.tokens[&Seat::P1]).await;
    assert_eq!(resign.status(), 200);
    let mut conn = redis.connection();
    let ttl: i64 = redis::cmd("PTTL")
        .arg(crate::helpers::redis_key("ttl", &id, "g"))
        .query(&mut conn)
        .unwrap();
    // The lifetime, up to the renewal slack more (see `renewal_slack`).
    let most = 1000 + renewal_slack(Duration::from_secs(1)).as_millis() as i64;
    assert!(ttl > 0 && ttl <= most, "ttl {ttl}");
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert_problem(
        app.get(&format!("/v1/games/{id}")).await,
        404,
        "game_not_found",
    )
    .await;
}

/// Sets Redis's `maxmemory` (`"1"`: full at once, so every write is refused; `"0"`: none).
fn set_maxmemory(redis: &RedisServer, bytes: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(bytes)
        .query(&mut redis.connection())
        .unwrap();
}

#[tokio::test]
async fn a_redis_at_its_maxmemory_refuses_writes_whole_and_games_go_on_after() {
    // Redis's default policy (noeviction) refuses a script's first write when it holds its
    // maxmemory, so a move or a create is refused whole: nothing of it is written.
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "full");
    settings.anon_quotas = Some(
        pillarz::service::quota::Quotas::parse(
            "games=2/d",
            pillarz::service::quota::Quotas::ANONYMOUS,
        )
        .unwrap(),
    );
    let app = TestApp::spawn_with(settings).await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = created.game.id.clone();
    let p1 = created.tokens[&Seat::P1].clone();
    let p2 = created.tokens[&Seat::P2].clone();
    assert_eq!(app.play(&id, &p1, "a1+b1").await.status(), 200);
    set_maxmemory(&redis, "1");
    let full = app.play(&id, &p2, "a5+b5").await;
    assert!(full.headers().contains_key("retry-after"));
    assert_problem(full, 503, "store_full").await;
    assert_problem(
        app.post_json("/v1/games", &json!({"game": "pyrga"})).await,
        503,
        "store_full",
    )
    .await;
    let game = app.get(&format!("/v1/games/{id}")).await;
    assert_eq!(game.status(), 200, "reads go on");
    assert_eq!(game.json::<serde_json::Value>().await.unwrap()["ply"], 1);
    set_maxmemory(&redis, "0");
    assert_eq!(app.play(&id, &p2, "a5+b5").await.status(), 200);
    // Read by a replica that holds nothing of the game: all of it comes from Redis.
    let other = TestApp::spawn_with(settings_for(Some(&redis), "full")).await;
    let game: serde_json::Value = other
        .get(&format!("/v1/games/{id}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(game["ply"], 2);
    assert_eq!(game["moves"], json!(["a1+b1", "a5+b5"]), "{game}");
    let events: i64 = redis::cmd("LLEN")
        .arg(format!("full:{{{}}}:{id}:e", &id[..2]))
        .query(&mut redis.connection())
        .unwrap();
    assert_eq!(events, 3, "the creation and two moves, each once");
    // The refused create wrote nothing, so it did not count among the day's two games.
    assert_eq!(
        app.post_json("/v1/games", &json!({"game": "pyrga"}))
            .await
            .status(),
        201
    );
}

/// A stream whose game's flag has fallen settles it if nobody else did; when Redis has no room
/// to write the end, it tries again a second later, not every few milliseconds.
#[tokio::test]
async fn a_stream_that_cannot_settle_a_flag_waits_before_trying_again() {
    let redis = RedisServer::start();
    let app = TestApp::spawn_with(settings_for(Some(&redis), "flagfull")).await;
    let created = app
        .create(json!({"game": "pillarz", "time_control": {"initial_ms": 500, "increment_ms": 0}}))
        .await;
    let id = created.game.id.clone();
    let mut streams = Vec::new();
    for _ in 0..4 {
        streams.push(crate::events::Stream::open(&app, &id, "application/x-ndjson", None).await);
    }
    set_maxmemory(&redis, "1");
    // The flag falls at 500 ms; the streams have then been at it for a while.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut conn = redis.connection();
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut conn)
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Every command but the sweeper's scan of the due index (paced by its own timer) and
    // this test's own.
    let (commands, stats) = command_calls(&redis, |name| {
        name != "zrangebyscore" && !name.starts_with("config")
    });
    // Four streams trying about once a second, and the sweeper's visits: a few dozen
    // commands; before, each stream tried every 5 ms (~1,200 commands a second each).
    assert!(
        commands < 200,
        "{commands} commands in 2 s while the flag could not be written:\n{stats}"
    );
    set_maxmemory(&redis, "0");
    // Once Redis has room again, the flag is settled and the streams end with it.
    let view = app.view(&id).await;
    assert_eq!(serde_json::to_value(view.termination).unwrap(), "timeout");
    drop(streams);
}

/// The calls Redis has counted since its stats were last reset, of the commands whose names
/// (as `INFO commandstats` spells them) `counted` accepts; and the stats themselves.
fn command_calls(redis: &RedisServer, counted: impl Fn(&str) -> bool) -> (u64, String) {
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut redis.connection())
        .unwrap();
    let calls = stats
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest.strip_prefix("calls=")?.split(',').next()?;
            counted(name).then(|| calls.parse::<u64>().ok()).flatten()
        })
        .sum();
    (calls, stats)
}

/// `GET /healthz/ready` counts no quota (a probe has no key), and each check is a round trip
/// to the Redis every replica shares: however often a replica is asked, it asks Redis at most
/// once a second, and checks made meanwhile get the same answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_readiness_checks_asks_redis_once_a_second() {
    let redis = RedisServer::start();
    let app = TestApp::spawn_with(settings_for(Some(&redis), "ready")).await;
    assert_eq!(app.get("/healthz/ready").await.status(), 200);
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut redis.connection())
        .unwrap();
    let started = Instant::now();
    let mut checks = 0;
    while started.elapsed() < Duration::from_millis(2500) {
        let answers =
            futures_util::future::join_all((0..20).map(|_| app.get("/healthz/ready"))).await;
        for answer in answers {
            assert_eq!(answer.status(), 200);
            checks += 1;
        }
    }
    let (scripts, stats) = command_calls(&redis, |name| name == "evalsha" || name == "eval");
    assert!(checks >= 200, "{checks} checks");
    // Two or three periods of a second: one check each (and nothing else runs a script here).
    assert!(
        (1..=4).contains(&scripts),
        "{scripts} scripts run for {checks} readiness checks:\n{stats}"
    );
}
