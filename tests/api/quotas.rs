//! Quotas: per caller (address or API key), shared by replicas through Redis, enforced in
//! process by the embedded store, answered with `429`, `Retry-After` and `RateLimit` headers.

use std::process::Command;

use pillarz::service::quota::Quotas;
use pillarz::service::quota::api_key::KeyCache;
use serde_json::json;

use crate::helpers::{RedisServer, TestApp, assert_problem, settings_for};

fn quotas(spec: &str) -> Option<Quotas> {
    Some(Quotas::parse(spec, Quotas::ANONYMOUS).unwrap())
}

/// Two replicas on `redis` (keys under `prefix`) with anonymous quotas `spec`.
async fn two_replicas(redis: &RedisServer, prefix: &str, spec: &str) -> (TestApp, TestApp) {
    let mut settings = settings_for(Some(redis), prefix);
    settings.anon_quotas = quotas(spec);
    let a = TestApp::spawn_with(settings.clone()).await;
    (a, TestApp::spawn_with(settings).await)
}

async fn create(app: &TestApp, key: Option<&str>) -> reqwest::Response {
    let mut request = app
        .client
        .post(app.url("/v1/games"))
        .json(&json!({"game": "pillarz"}));
    if let Some(key) = key {
        request = request.header("x-api-key", key);
    }
    request.send().await.unwrap()
}

/// `rate_limited_total` of `class`, as `app` reports it.
async fn refusals(app: &TestApp, class: &str) -> u64 {
    let metrics = app.get("/metrics").await.text().await.unwrap();
    let line = format!("pillarz_rate_limited_total{{class=\"{class}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(line.as_str()))
        .map_or(0, |v| v.parse::<u64>().unwrap())
}

#[tokio::test]
async fn replicas_count_one_callers_games_together_and_answer_429_with_headers() {
    let redis = RedisServer::start();
    let (a, b) = two_replicas(&redis, "quota", "create=3/min").await;

    let refusals = || refusals(&a, "create");
    let before = refusals().await;
    let first = create(&a, None).await;
    assert_eq!(first.status(), 201);
    // A create counts twice, at a burst rate and among the day's games: both policies show.
    assert_eq!(
        first.headers()["ratelimit-policy"],
        "\"create\";q=3;w=60, \"games\";q=1000;w=86400"
    );
    assert_eq!(
        first.headers()["ratelimit"],
        "\"create\";r=2;t=20, \"games\";r=999;t=87"
    );
    assert_eq!(create(&b, None).await.status(), 201);
    assert_eq!(create(&a, None).await.status(), 201);
    let refused = create(&b, None).await;
    assert_eq!(refused.headers()["retry-after"], "20");
    assert_eq!(refused.headers()["ratelimit"], "\"create\";r=0;t=60");
    assert_problem(refused, 429, "rate_limited").await;

    // The replica that refused remembers it until Retry-After and refuses without asking
    // Redis: with the count deleted from Redis, it still refuses while the other allows.
    let counts: Vec<String> = redis::cmd("KEYS")
        .arg("quota:q:create:*")
        .query(&mut redis.connection())
        .unwrap();
    assert_eq!(
        counts.len(),
        1,
        "one count per caller and class: {counts:?}"
    );
    let _: () = redis::cmd("DEL")
        .arg(&counts[0])
        .query(&mut redis.connection())
        .unwrap();
    assert_problem(create(&b, None).await, 429, "rate_limited").await;
    assert_eq!(create(&a, None).await.status(), 201);

    // Other classes are counted apart: reads still pass.
    assert_eq!(a.get("/v1/catalog").await.status(), 200);
    assert!(refusals().await > before, "the refusal is counted");
}

#[tokio::test]
async fn the_embedded_store_enforces_the_same_quotas() {
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("read=4/s,write=1/min");
    let app = TestApp::spawn_with(settings).await;
    let created = create(&app, None)
        .await
        .json::<pillarz::api::CreatedGame>()
        .await
        .unwrap();
    let id = &created.game.id;
    for _ in 0..4 {
        assert_eq!(app.get(&format!("/v1/games/{id}")).await.status(), 200);
    }
    assert_problem(
        app.get(&format!("/v1/games/{id}")).await,
        429,
        "rate_limited",
    )
    .await;
    // A write over quota is not played: 429 means nothing happened.
    let p1 = created.tokens[&pillarz::api::Seat::P1].clone();
    let moves = pillarz::rules::AnyState::new(
        pillarz::rules::GameKind::Pillarz,
        pillarz::rules::Variants::NONE,
        None,
    )
    .unwrap()
    .legal_moves();
    assert_eq!(app.play(id, &p1, &moves[0]).await.status(), 200);
    let p2 = created.tokens[&pillarz::api::Seat::P2].clone();
    let refused = app.play(id, &p2, "a1+b1").await;
    assert_problem(refused, 429, "rate_limited").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(app.view(id).await.ply, 1, "the refused move was not played");
}

#[tokio::test]
async fn api_keys_have_their_own_quotas_and_can_be_revoked() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "keys");
    settings.anon_quotas = quotas("create=1/min");
    let (key, id) = make_key(&redis, "keys", "create=3/min");
    // Only the digest is stored.
    let stored: Vec<String> = redis::cmd("KEYS")
        .arg("keys:apikey:*")
        .query(&mut redis.connection())
        .unwrap();
    assert_eq!(stored, [format!("keys:apikey:{id}")]);

    let app = TestApp::spawn_with(settings.clone()).await;
    assert_eq!(create(&app, None).await.status(), 201);
    assert_eq!(create(&app, None).await.status(), 429, "the address is out");
    for _ in 0..3 {
        assert_eq!(
            create(&app, Some(&key)).await.status(),
            201,
            "the key has its own"
        );
    }
    assert_eq!(create(&app, Some(&key)).await.status(), 429);
    let unknown = create(&app, Some(&format!("pzk_{}", "0".repeat(64)))).await;
    assert_problem(unknown, 401, "bad_api_key").await;
    assert_problem(create(&app, Some("nonsense")).await, 401, "bad_api_key").await;

    pillarz_keys(&redis, "keys", &["revoke", &id]);
    // A replica that has not looked the key up yet refuses it at once.
    let fresh = TestApp::spawn_with(settings).await;
    assert_problem(create(&fresh, Some(&key)).await, 401, "bad_api_key").await;
}

/// What `pillarz keys <args>` prints, run against `redis` under `prefix`.
fn pillarz_keys(redis: &RedisServer, prefix: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_pillarz"))
        .arg("keys")
        .args(args)
        .args(["--redis", &redis.url(), "--redis-prefix", prefix])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A new API key with `quotas`, made by `pillarz keys create` in `redis` under `prefix`: the
/// key, and the id (its digest) the store keeps it under.
fn make_key(redis: &RedisServer, prefix: &str, quotas: &str) -> (String, String) {
    let printed = pillarz_keys(
        redis,
        prefix,
        &["create", "--name", "acme", "--quotas", quotas],
    );
    let field = |name: &str| {
        printed
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {printed}"))
            .trim()
            .to_string()
    };
    let key = field("key:");
    assert!(key.starts_with("pzk_"), "{printed}");
    (key, field("id:"))
}

/// The commands `redis` is sent while it is watched (`redis-cli monitor`).
struct Monitor {
    child: std::process::Child,
    log: std::path::PathBuf,
}

impl Monitor {
    fn start(redis: &RedisServer) -> Monitor {
        let log = std::env::temp_dir().join(format!("pillarz-monitor-{}", redis.port));
        let child = Command::new("redis-cli")
            .args(["-p", &redis.port.to_string(), "monitor"])
            .stdout(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("redis-cli must be installed");
        let monitor = Monitor { child, log };
        monitor.wait_for(redis, "watching");
        monitor
    }

    /// Sends `ECHO marker` until the monitor has seen it: it sees everything sent before.
    fn wait_for(&self, redis: &RedisServer, marker: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !std::fs::read_to_string(&self.log).unwrap().contains(marker) {
            let _: String = redis::cmd("ECHO")
                .arg(marker)
                .query(&mut redis.connection())
                .unwrap();
            assert!(std::time::Instant::now() < deadline, "redis-cli monitor");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Everything seen so far, once the monitor has seen all that was sent before.
    fn seen(&self, redis: &RedisServer) -> String {
        let marker = format!("mark-{}", uuid::Uuid::new_v4().simple());
        self.wait_for(redis, &marker);
        std::fs::read_to_string(&self.log).unwrap()
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

async fn catalog_with_key(app: &TestApp, key: &str) -> reqwest::Response {
    app.client
        .get(app.url("/v1/catalog"))
        .header("x-api-key", key)
        .send()
        .await
        .unwrap()
}

/// Looking up a key costs the store a read, so an address's lookups of keys a replica does
/// not know to be valid are counted (`keys`, shared by the replicas) before they are made:
/// past them, such keys are refused with `429` without a lookup. A key the replica has seen
/// valid, and the address's own requests, go on; a valid key it has never seen waits.
#[tokio::test]
async fn an_address_has_at_most_its_keys_looked_up() {
    let redis = RedisServer::start();
    let (app, other) = two_replicas(&redis, "tries", "keys=3/min").await;
    let (key, _) = make_key(&redis, "tries", "read=100/s");
    let (unseen, _) = make_key(&redis, "tries", "read=100/s");
    // A key's first lookup on a replica is counted, and given back once it finds the key.
    assert_eq!(catalog_with_key(&app, &key).await.status(), 200);

    let monitor = Monitor::start(&redis);
    // An unknown key is counted when it is looked up; its answer, remembered, is not.
    let unknown = pillarz::service::quota::api_key::ApiKey::generate();
    for again in 0..4 {
        let answer = catalog_with_key(&app, unknown.expose()).await;
        if again == 0 {
            assert_eq!(answer.headers()["ratelimit-policy"], "\"keys\";q=3;w=60");
            let state = answer.headers()["ratelimit"].to_str().unwrap().to_string();
            assert!(state.starts_with("\"keys\";r=2;"), "{state}");
        }
        assert_problem(answer, 401, "bad_api_key").await;
    }
    for tried in 0..20 {
        let random = pillarz::service::quota::api_key::ApiKey::generate();
        let replica = if tried % 2 == 0 { &app } else { &other };
        let answer = catalog_with_key(replica, random.expose()).await;
        if tried < 2 {
            let state = answer.headers()["ratelimit"].to_str().unwrap().to_string();
            let left = format!("\"keys\";r={};", 1 - tried);
            assert!(state.starts_with(&left), "{state}");
            assert_problem(answer, 401, "bad_api_key").await;
        } else {
            assert!(answer.headers().contains_key("retry-after"));
            assert_problem(answer, 429, "rate_limited").await;
        }
    }
    let lookups = || {
        monitor
            .seen(&redis)
            .matches("\"GET\" \"tries:apikey:")
            .count()
    };
    assert_eq!(
        lookups(),
        3,
        "only the keys counted are looked up, once each"
    );

    assert_eq!(
        catalog_with_key(&app, &key).await.status(),
        200,
        "seen valid"
    );
    assert_eq!(
        app.get("/v1/catalog").await.status(),
        200,
        "the address itself"
    );
    assert_problem(catalog_with_key(&app, &unseen).await, 429, "rate_limited").await;
    // Once its answer has lapsed, a key seen valid is looked up again, uncounted.
    tokio::time::sleep(KeyCache::TTL + std::time::Duration::from_millis(500)).await;
    assert_eq!(
        catalog_with_key(&app, &key).await.status(),
        200,
        "seen valid, lapsed"
    );
    assert_eq!(lookups(), 4);
}

/// `keys` counts the lookups that find no key: a valid key's lookup is given back once it is
/// made, so an address that many integrators' keys come from (a backend, a NAT) does not use
/// up its count by sending them, on any replica, while its unknown keys are counted as before.
#[tokio::test]
async fn an_address_is_not_counted_for_the_valid_keys_it_sends() {
    let redis = RedisServer::start();
    let (a, b) = two_replicas(&redis, "many", "keys=3/min").await;
    let keys: Vec<String> = (0..4)
        .map(|_| make_key(&redis, "many", "read=100/s").0)
        .collect();
    for (i, key) in keys.iter().enumerate() {
        for (replica, name) in [(&a, "a"), (&b, "b")] {
            assert_eq!(
                catalog_with_key(replica, key).await.status(),
                200,
                "key {i} on replica {name}, new to it"
            );
        }
    }
    // The address's count is whole: three unknown keys are looked up, the fourth is refused.
    for tried in 0..4 {
        let random = pillarz::service::quota::api_key::ApiKey::generate();
        let answer = catalog_with_key(&b, random.expose()).await;
        if tried < 3 {
            let state = answer.headers()["ratelimit"].to_str().unwrap().to_string();
            let left = format!("\"keys\";r={};", 2 - tried);
            assert!(state.starts_with(&left), "{state}");
            assert_problem(answer, 401, "bad_api_key").await;
        } else {
            assert_problem(answer, 429, "rate_limited").await;
        }
    }
}

/// Simultaneous requests with a key a replica has no answer for make one lookup, counted once:
/// the others wait for its answer. So a burst of an integrator's requests on a replica that
/// has not seen its key (just started, or its answer lapsed) is served, rather than spending
/// a unit each and meeting `429`s; and a burst of one unknown key costs one lookup, not as
/// many as the address's count allows.
#[tokio::test]
async fn simultaneous_first_requests_with_one_key_make_one_lookup() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "burst");
    settings.anon_quotas = quotas("keys=2/min");
    let app = TestApp::spawn_with(settings).await;
    let (key, _) = make_key(&redis, "burst", "read=100/s");
    let unknown = pillarz::service::quota::api_key::ApiKey::generate();
    let monitor = Monitor::start(&redis);
    for (sent, status) in [(key.as_str(), 200), (unknown.expose(), 401)] {
        // Redis holds every command for a while: all the requests are in before any lookup,
        // or any count of one, is answered.
        let _: () = redis::cmd("CLIENT")
            .arg(&["PAUSE", "400", "ALL"])
            .query(&mut redis.connection())
            .unwrap();
        let answers =
            futures_util::future::join_all((0..6).map(|_| catalog_with_key(&app, sent))).await;
        let statuses: Vec<u16> = answers.iter().map(|a| a.status().as_u16()).collect();
        assert_eq!(statuses, [status; 6], "a burst of one key");
    }
    let lookups = monitor
        .seen(&redis)
        .matches("\"GET\" \"burst:apikey:")
        .count();
    assert_eq!(lookups, 2, "one lookup per key");
    // The valid key's unit was given back and the unknown key spent one: one lookup is left.
    let random = pillarz::service::quota::api_key::ApiKey::generate();
    let answer = catalog_with_key(&app, random.expose()).await;
    let state = answer.headers()["ratelimit"].to_str().unwrap().to_string();
    assert!(state.starts_with("\"keys\";r=0;"), "{state}");
    assert_problem(answer, 401, "bad_api_key").await;
}

/// Requests that waited for a lookup that left no answer (here the store does not answer)
/// go on together, rather than one after another, each after the previous one's failure.
#[tokio::test]
async fn requests_waiting_for_a_failed_lookup_go_on_together() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "stuck");
    settings.anon_quotas = quotas("keys=100/min");
    // One worker, whose store connection is made (counting the address's reads) before the
    // store stops answering: only commands wait, not a connection's set-up.
    settings.workers = 1;
    let app = TestApp::spawn_with(settings).await;
    assert_eq!(app.get("/v1/catalog").await.status(), 200);
    let (key, _) = make_key(&redis, "stuck", "read=100/s");
    // Redis answers nothing for 6 s (not even an unpause); the store's response timeout is
    // 2 s. Together, the first request fails at 2 s and the others at 4 s; one after another,
    // they would fail 2 s apart, and the third or later would be served once Redis is back.
    let _: () = redis::cmd("CLIENT")
        .arg(&["PAUSE", "6000", "ALL"])
        .query(&mut redis.connection())
        .unwrap();
    let started = std::time::Instant::now();
    let answers = futures_util::future::join_all((0..6).map(|_| async {
        let answer = catalog_with_key(&app, &key).await;
        (answer, started.elapsed())
    }))
    .await;
    let mut times = Vec::new();
    for (answer, took) in answers {
        assert_problem(answer, 503, "store_unavailable").await;
        times.push(took);
    }
    times.sort();
    assert!(
        times[5] - times[1] < std::time::Duration::from_secs(1),
        "those that waited answer together: {times:?}"
    );
    tokio::time::sleep(std::time::Duration::from_secs(6).saturating_sub(times[5])).await;
    assert_eq!(catalog_with_key(&app, &key).await.status(), 200);
}

/// `keys` counts an address's key lookups: a key's own record refuses it (an older replica
/// would not read it during a rolling upgrade, and it would mean nothing).
#[test]
fn a_key_is_made_without_a_keys_quota() {
    let redis = RedisServer::start();
    let out = Command::new(env!("CARGO_BIN_EXE_pillarz"))
        .args(["keys", "create", "--name", "acme", "--quotas", "keys=5/min"])
        .args(["--redis", &redis.url()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a key has no such quota"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A new key shown to nobody (standard output closed by its reader) is a failure that names the
/// stored key to revoke, not a quiet success: the output was its only copy.
#[test]
fn a_key_that_cannot_be_shown_is_a_failure() {
    let redis = RedisServer::start();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_pillarz"))
        .args(["keys", "create", "--name", "acme"])
        .args(["--redis", &redis.url()])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
        .wait_with_output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("was stored, but it could not be shown") && err.contains("keys revoke "),
        "{err}"
    );
}

/// A game lives in the store for days, so the burst rate of creations is not enough: a caller
/// creates at most `games` a day (all replicas together), and a request its handler refuses
/// as invalid does not count.
async fn a_caller_creates_at_most_its_games_a_day(a: &TestApp, b: &TestApp) {
    let invalid = a
        .post_json(
            "/v1/games",
            &json!({"game": "pillarz", "seats": {"p2": {"engine": {"level": 9}}}}),
        )
        .await;
    assert_problem(invalid, 400, "bad_request").await;
    assert_eq!(create(a, None).await.status(), 201);
    assert_eq!(create(b, None).await.status(), 201);
    let refused = create(a, None).await;
    let retry: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((40_000..=43_200).contains(&retry), "half a day: {retry}");
    assert_eq!(
        refused.headers()["ratelimit-policy"],
        "\"create\";q=60;w=60, \"games\";q=2;w=86400"
    );
    assert!(
        refused.headers()["ratelimit"]
            .to_str()
            .unwrap()
            .ends_with("\"games\";r=0;t=86400"),
        "{:?}",
        refused.headers()["ratelimit"]
    );
    assert_problem(refused, 429, "rate_limited").await;
    assert_problem(create(b, None).await, 429, "rate_limited").await;
}

/// A create the store refused for certain (the embedded store is full) made no game, so it
/// gives back the day's game it counted: a client retrying a full store is not locked out
/// for a day once the store has room again.
#[tokio::test]
async fn a_create_the_store_refuses_does_not_count_among_the_days_games() {
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("games=2/d");
    settings.memory_max_games = 1;
    let app = TestApp::spawn_with(settings).await;
    assert_eq!(create(&app, None).await.status(), 201);
    for _ in 0..3 {
        assert_problem(create(&app, None).await, 503, "store_full").await;
    }
}

#[tokio::test]
async fn a_caller_creates_at_most_its_games_a_day_redis() {
    let redis = RedisServer::start();
    let (a, b) = two_replicas(&redis, "games", "games=2/d").await;
    a_caller_creates_at_most_its_games_a_day(&a, &b).await;
}

#[tokio::test]
async fn a_caller_creates_at_most_its_games_a_day_memory() {
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("games=2/d");
    let app = TestApp::spawn_with(settings).await;
    a_caller_creates_at_most_its_games_a_day(&app, &app).await;
}

/// A rate does not bound how much a caller asks at once: its requests in flight are bounded
/// per replica too. Two creates whose bodies never come hold both places of a caller allowed
/// two; a third request is refused at once, and the places come back with their answers
/// (`408` when the body's time is up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_has_at_most_its_requests_in_flight() {
    use std::io::Write;
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("concurrent=2");
    settings.request_timeout = std::time::Duration::from_secs(2);
    let app = TestApp::spawn_with(settings).await;
    let port: u16 = app.address.rsplit(':').next().unwrap().parse().unwrap();
    let waiting: Vec<std::net::TcpStream> = (0..2)
        .map(|_| {
            let mut socket = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            socket
                .write_all(
                    b"POST /v1/games HTTP/1.1\r\nHost: localhost\r\n\
                      Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
                )
                .unwrap();
            socket
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let refused = create(&app, None).await;
    assert_eq!(refused.headers()["retry-after"], "1");
    let problem = assert_problem(refused, 429, "rate_limited").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("in flight"),
        "{problem}"
    );
    assert_problem(app.get("/v1/catalog").await, 429, "rate_limited").await;
    let started = std::time::Instant::now();
    loop {
        let again = create(&app, None).await;
        if again.status() == 201 {
            break;
        }
        assert_problem(again, 429, "rate_limited").await;
        assert!(
            started.elapsed() < std::time::Duration::from_secs(8),
            "the places came back with the answers"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    drop(waiting);
}

/// An answer its client does not read stays in the replica's memory until the client takes
/// it: it holds its caller's place in flight until then, so what a caller can leave unread is
/// bounded by its places, not by its read rate. Two records of a long game left unread hold
/// both places of a caller allowed two; its next request is refused at once, and the places
/// come back when the stalled connections are dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_answer_holds_its_place_in_flight() {
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("concurrent=2,read=100000/s,write=100000/s");
    settings.stalled_client_timeout = std::time::Duration::from_secs(2);
    let app = TestApp::spawn_with(settings).await;
    let id = app.long_game("alcazar", RECORD_PLIES).await.id;
    let record = format!("/v1/games/{id}/record");
    let len = app.get(&record).await.bytes().await.unwrap().len();
    // Far more than actix's write buffer (32 KiB) and the sockets' buffers take.
    assert!(len > 96 * 1024, "a record of {len} bytes");
    let port = crate::limits::port_of(&app);
    let request = format!("GET {record} HTTP/1.1\r\nHost: localhost\r\n\r\n");
    let stalled: Vec<_> = (0..2)
        .map(|_| crate::limits::client_that_reads_nothing(port, &request))
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let refused = app.get("/v1/catalog").await;
    let problem = assert_problem(refused, 429, "rate_limited").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("in flight"),
        "{problem}"
    );
    // Dropped after `--stalled-client-timeout-secs`, the connections give their places back.
    let started = std::time::Instant::now();
    while app.get("/v1/catalog").await.status() != 200 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the unread answers still hold their places"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    drop(stalled);
}

/// A record reads and decodes its game's log page by page: a long game's record costs a read
/// more for each 512 events, so that a caller's read rate bounds the work it asks for; so do a
/// board at an earlier ply and an event stream resumed from an earlier version, which replay
/// the game up to it, for each 512 plies replayed. One replica, without quotas, plays a game
/// of 1,100 plies; another, sharing its Redis, serves it to callers allowed four reads a
/// minute: the record and each look back 1,050 plies back take three of them.
#[tokio::test]
async fn long_games_records_and_look_backs_cost_a_read_for_each_page() {
    let redis = RedisServer::start();
    let player = TestApp::spawn_with(settings_for(Some(&redis), "pages")).await;
    let id = player.long_game("alcazar", 1100).await.id;
    let short = player.create(json!({"game": "alcazar"})).await.game.id;
    let mut settings = settings_for(Some(&redis), "pages");
    settings.anon_quotas = quotas("read=4/min");
    settings.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap()];
    let reader = TestApp::spawn_with(settings).await;
    let get =
        |path: String, from: &'static str, headers: &'static [(&'static str, &'static str)]| {
            let mut request = reader
                .client
                .get(reader.url(&path))
                .header("x-forwarded-for", from);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            request.send()
        };
    let remaining = |response: &reqwest::Response| {
        let value = response.headers()["ratelimit"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(value.starts_with("\"read\";r="), "{value}");
        value["\"read\";r=".len()..]
            .split(';')
            .next()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    // A short game's record costs a read, as any read does.
    let record = get(format!("/v1/games/{short}/record"), "10.0.0.1", &[])
        .await
        .unwrap();
    assert_eq!(record.status(), 200);
    assert_eq!(record.headers()["ratelimit"], "\"read\";r=3;t=15");
    let record = get(format!("/v1/games/{id}/record"), "10.0.0.1", &[])
        .await
        .unwrap();
    assert_eq!(record.status(), 200);
    // One item: the handler's charge is the later state of the same policy.
    assert_eq!(record.headers()["ratelimit"], "\"read\";r=0;t=60");
    let refused = get("/v1/catalog".to_string(), "10.0.0.1", &[])
        .await
        .unwrap();
    assert_problem(refused, 429, "rate_limited").await;

    // The board now costs a read; 1,050 plies back, three.
    let now = get(format!("/v1/games/{id}/board.svg"), "10.0.0.2", &[])
        .await
        .unwrap();
    assert_eq!((now.status().as_u16(), remaining(&now)), (200, 3));
    let back = get(
        format!("/v1/games/{id}/board.svg?ply=1050"),
        "10.0.0.3",
        &[],
    )
    .await
    .unwrap();
    assert_eq!((back.status().as_u16(), remaining(&back)), (200, 1));
    let again = get(
        format!("/v1/games/{id}/board.svg?ply=1050"),
        "10.0.0.3",
        &[],
    )
    .await
    .unwrap();
    assert_problem(again, 429, "rate_limited").await;

    // A stream resumed from the game's version costs a read; from 1,050, three.
    const NOW: &[(&str, &str)] = &[("accept", "application/x-ndjson")];
    const BACK: &[(&str, &str)] = &[
        ("accept", "application/x-ndjson"),
        ("last-event-id", "1050"),
    ];
    let now = get(format!("/v1/games/{id}/events"), "10.0.0.4", NOW)
        .await
        .unwrap();
    assert_eq!((now.status().as_u16(), remaining(&now)), (200, 3));
    drop(now);
    let back = get(format!("/v1/games/{id}/events"), "10.0.0.5", BACK)
        .await
        .unwrap();
    assert_eq!((back.status().as_u16(), remaining(&back)), (200, 1));
}

/// A retried move that later moves followed is rebuilt by replaying the game up to it, and
/// costs a read more for each 512 plies replayed, as any look back does; a retry of the
/// game's latest move is not. One replica, without quotas, plays 600 plies, then a move with
/// an `Idempotency-Key`, then one more; another, sharing its Redis, takes the retries from
/// callers allowed four reads a minute.
#[tokio::test]
async fn a_retried_move_that_replays_the_game_costs_a_read_for_each_page() {
    let redis = RedisServer::start();
    let player = TestApp::spawn_with(settings_for(Some(&redis), "retries")).await;
    let (view, tokens) = player.long_game_with_tokens("alcazar", 600).await;
    let id = view.id;
    let moves = player.legal_moves(&id).await;
    let keyed = json!({"move": moves[0]});
    let first = player
        .client
        .post(player.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(&tokens[&view.turn])
        .header("idempotency-key", "old-move")
        .json(&keyed)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let first: serde_json::Value = first.json().await.unwrap();
    assert_eq!(first["ply"], 601);

    let mut settings = settings_for(Some(&redis), "retries");
    settings.anon_quotas = quotas("read=4/min");
    settings.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap()];
    let reader = TestApp::spawn_with(settings).await;
    let retry = |token: String, key: &'static str, body: serde_json::Value| {
        reader
            .client
            .post(reader.url(&format!("/v1/games/{id}/moves")))
            .header("x-forwarded-for", "10.0.0.9")
            .bearer_auth(token)
            .header("idempotency-key", key)
            .json(&body)
            .send()
    };
    // The `read` item of an answer's `RateLimit` list (the middleware charged a write too).
    let read_item = |response: &reqwest::Response| {
        let value = response.headers()["ratelimit"].to_str().unwrap();
        assert!(value.starts_with("\"write\";"), "{value}");
        value
            .split(", ")
            .find(|item| item.starts_with("\"read\";"))
            .map(str::to_string)
    };
    // The latest move's retry is the game as it stands: no read is charged.
    let latest = retry(tokens[&view.turn].clone(), "old-move", keyed.clone())
        .await
        .unwrap();
    assert_eq!(latest.status(), 200);
    assert_eq!(read_item(&latest), None);

    // The opponent answers; the keyed move is now a look back 600 plies deep.
    let reply = player.legal_moves(&id).await;
    let other = tokens[&view.turn.other()].clone();
    assert_eq!(player.play(&id, &other, &reply[0]).await.status(), 200);
    for left in (0..4).rev() {
        let again = retry(tokens[&view.turn].clone(), "old-move", keyed.clone())
            .await
            .unwrap();
        assert_eq!(again.status(), 200);
        assert_eq!(
            read_item(&again),
            Some(format!("\"read\";r={left};t={}", 15 * (4 - left)))
        );
        let again: serde_json::Value = again.json().await.unwrap();
        assert_eq!(again, first, "the first answer again");
    }
    let refused = retry(tokens[&view.turn].clone(), "old-move", keyed)
        .await
        .unwrap();
    assert_problem(refused, 429, "rate_limited").await;
}

/// Plies of the game whose record is left unread above.
const RECORD_PLIES: u64 = 1500;

#[tokio::test]
async fn analysis_time_is_charged_as_used() {
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("analysis=150/min");
    let app = TestApp::spawn_with(settings).await;
    let body = json!({"game": "pillarz", "position": "00000/00o00x0/00000/00x00o0/00000 1",
                      "limits": {"movetime_ms": 200}});
    let first = app.post_json("/v1/analysis", &body).await;
    assert_eq!(first.status(), 200);
    assert!(first.headers().contains_key("ratelimit"));
    let second = app.post_json("/v1/analysis", &body).await;
    let retry: u64 = second.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_problem(second, 429, "rate_limited").await;
    // A caller out of analysis time is refused before its game is read: the store is not
    // asked (so an unknown game is not even noticed).
    let unknown = format!("/v1/games/{}/analysis", uuid::Uuid::new_v4());
    let refused = app
        .post_json(&unknown, &json!({"limits": {"depth": 1}}))
        .await;
    assert_problem(refused, 429, "rate_limited").await;
}

/// One caller's analyses take at most its share of a replica's pool places (running or
/// waiting): as many as the pool has workers, here two of ten places. Without it, one address
/// filled the pool and its queue with long searches (admitted with a millisecond of analysis
/// time left, charged once done), and everyone else got `503 busy` until they were done.
#[tokio::test]
async fn a_caller_has_at_most_its_share_of_the_analysis_pool() {
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("analysis=600000/min");
    settings.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap()];
    settings.analysis.workers = 2;
    settings.analysis.queue = 8;
    let app = TestApp::spawn_with(settings).await;
    // The metrics are the process's, shared with the tests running beside this one.
    let refusals = || refusals(&app, "analysis_share");
    let before = refusals().await;
    let analyse = |from: &'static str| {
        app.client
            .post(app.url("/v1/analysis"))
            .header("x-forwarded-for", from)
            .json(
                &json!({"game": "pillarz", "position": "00000/00o00x0/00000/00x00o0/00000 1",
                          "limits": {"movetime_ms": 1500}}),
            )
            .send()
    };
    let hog = futures_util::future::join_all((0..6).map(|_| analyse("203.0.113.7")));
    let other = async {
        // Once the first caller's requests are in.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        analyse("198.51.100.9").await.unwrap().status()
    };
    let (answers, other) = tokio::join!(hog, other);
    let mut statuses: Vec<u16> = Vec::new();
    for answer in answers {
        let answer = answer.unwrap();
        statuses.push(answer.status().as_u16());
        if answer.status() == 429 {
            assert_eq!(answer.headers()["retry-after"], "1");
            assert_problem(answer, 429, "rate_limited").await;
        }
    }
    statuses.sort();
    assert_eq!(statuses, [200, 200, 429, 429, 429, 429], "a share of two");
    assert_eq!(other, 200, "another caller finds a place");
    assert!(refusals().await - before >= 4, "counted as refusals");
}

/// The events path of a game `app` creates.
async fn events_of_a_new_game(app: &TestApp) -> String {
    let created = create(app, None)
        .await
        .json::<pillarz::api::CreatedGame>()
        .await
        .unwrap();
    format!("/v1/games/{}/events", created.game.id)
}

#[tokio::test]
async fn one_caller_holds_at_most_its_event_streams() {
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("streams=1");
    // A closed stream is noticed when the server next writes to it.
    settings.events_heartbeat = std::time::Duration::from_millis(200);
    let app = TestApp::spawn_with(settings).await;
    let path = events_of_a_new_game(&app).await;
    let held = app.get(&path).await;
    assert_eq!(held.status(), 200);
    assert_problem(app.get(&path).await, 429, "rate_limited").await;
    drop(held);
    // The slot comes back once the server sees the stream closed.
    let mut status = 0;
    for _ in 0..50 {
        let again = app.get(&path).await;
        status = again.status().as_u16();
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200);
}

/// A stream whose client closes its side of the connection (a FIN, its socket kept open for
/// reading: the strictest case) ends at once and gives its caller's place back, without
/// waiting for a heartbeat to find the connection closed.
#[tokio::test]
async fn a_stream_gives_its_place_back_as_soon_as_its_client_closes_the_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let within = |secs| std::time::Duration::from_secs(secs);
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("streams=1");
    // No heartbeat within the test: only the close can end the stream.
    settings.events_heartbeat = within(600);
    let app = TestApp::spawn_with(settings).await;
    let path = events_of_a_new_game(&app).await;
    let port: u16 = app.address.rsplit(':').next().unwrap().parse().unwrap();
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("event: game") {
        let mut buffer = [0; 4096];
        let read = tokio::time::timeout(within(10), socket.read(&mut buffer))
            .await
            .expect("the stream's first event")
            .unwrap();
        assert!(
            read > 0,
            "the stream ended: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buffer[..read]);
    }
    assert_problem(app.get(&path).await, 429, "rate_limited").await;

    socket.shutdown().await.unwrap();
    // The server ends the stream and then the connection.
    let mut rest = Vec::new();
    tokio::time::timeout(within(10), socket.read_to_end(&mut rest))
        .await
        .expect("the stream of a client that closed its side went on")
        .unwrap();
    assert!(
        String::from_utf8_lossy(&rest).ends_with("0\r\n\r\n"),
        "the stream's end: {rest:?}"
    );
    assert_eq!(
        app.get(&path).await.status(),
        200,
        "the place of the ended stream is free"
    );
}

async fn create_from(app: &TestApp, forwarded_for: &str) -> u16 {
    app.client
        .post(app.url("/v1/games"))
        .header("x-forwarded-for", forwarded_for)
        .json(&json!({"game": "pillarz"}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_caller_is_the_last_address_it_did_not_write() {
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("create=1/min");
    settings.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap()];
    let app = TestApp::spawn_with(settings).await;
    assert_eq!(create_from(&app, "10.0.0.1").await, 201);
    assert_eq!(create_from(&app, "10.0.0.1").await, 429);
    assert_eq!(create_from(&app, "10.0.0.2").await, 201, "another client");
    // A client cannot escape its count by writing addresses of its own in front.
    assert_eq!(create_from(&app, "6.6.6.6, 10.0.0.3").await, 201);
    assert_eq!(create_from(&app, "7.7.7.7, 10.0.0.3").await, 429);

    // Without trusted proxies the header proves nothing: the peer is the caller.
    let mut settings = settings_for(None, "");
    settings.anon_quotas = quotas("create=1/min");
    let direct = TestApp::spawn_with(settings).await;
    assert_eq!(create_from(&direct, "10.0.0.1").await, 201);
    assert_eq!(create_from(&direct, "10.0.0.2").await, 429);
}

#[tokio::test]
async fn replicas_share_a_callers_event_streams_through_redis() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "streams");
    settings.anon_quotas = quotas("streams=1");
    settings.events_heartbeat = std::time::Duration::from_millis(200);
    let a = TestApp::spawn_with(settings.clone()).await;
    let b = TestApp::spawn_with(settings).await;
    let path = events_of_a_new_game(&a).await;
    let held = a.get(&path).await;
    assert_eq!(held.status(), 200);
    assert_problem(b.get(&path).await, 429, "rate_limited").await;
    drop(held);
    let mut status = 0;
    for _ in 0..50 {
        let again = b.get(&path).await;
        status = again.status().as_u16();
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        status, 200,
        "the place comes back once the stream on the other replica ends"
    );
}

/// A stream's place is a lease in Redis, and a lease can be lost while its stream lives: a
/// Redis restarted without its data, a failover, renewals held up past the lease. The next
/// renewal takes the place again, so the caller never holds more than its `streams`; and if
/// the caller has used the place meanwhile, that stream ends instead.
#[tokio::test]
async fn a_stream_whose_place_was_lost_takes_it_again_or_ends() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "lost");
    settings.anon_quotas = quotas("streams=1");
    settings.events_heartbeat = std::time::Duration::from_millis(200);
    let app = TestApp::spawn_with(settings).await;
    let path = events_of_a_new_game(&app).await;
    let places = || {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg("lost:st:*")
            .query(&mut redis.connection())
            .unwrap();
        assert_eq!(keys.len(), 1, "one caller's places: {keys:?}");
        keys[0].clone()
    };
    let mut first = app.get(&path).await;
    assert_eq!(first.status(), 200);
    let key = places();
    let forget = || {
        let _: () = redis::cmd("DEL")
            .arg(&key)
            .query(&mut redis.connection())
            .unwrap();
    };
    // Lost, then taken again by the stream's next renewal.
    forget();
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_problem(app.get(&path).await, 429, "rate_limited").await;
    // Lost, and taken by another stream before the renewal: the first one ends.
    let _: () = redis::pipe()
        .atomic()
        .del(&key)
        .zadd(&key, "intruder", 99_999_999_999_999u64)
        .query(&mut redis.connection())
        .unwrap();
    let ended = tokio::time::timeout(std::time::Duration::from_secs(3), async {
        while first.chunk().await.unwrap().is_some() {}
    })
    .await;
    assert!(ended.is_ok(), "the stream without a place goes on");
    assert_problem(app.get(&path).await, 429, "rate_limited").await;
    let _: () = redis::cmd("ZREM")
        .arg(&key)
        .arg("intruder")
        .query(&mut redis.connection())
        .unwrap();
    assert_eq!(
        app.get(&path).await.status(),
        200,
        "the ended stream holds nothing"
    );
}

#[tokio::test]
async fn a_callers_places_live_as_long_as_its_longest_lease() {
    // Replicas with different heartbeats (a rolling change of the setting) renew one caller's
    // places with different leases: the quick replica's renewal must not cut the slow one's.
    let redis = RedisServer::start();
    let mut slow = settings_for(Some(&redis), "longest");
    slow.anon_quotas = quotas("streams=2");
    slow.events_heartbeat = std::time::Duration::from_secs(30);
    let mut quick = slow.clone();
    quick.events_heartbeat = std::time::Duration::from_millis(200);
    let slow = TestApp::spawn_with(slow).await;
    let quick = TestApp::spawn_with(quick).await;
    let path = events_of_a_new_game(&slow).await;
    let held = slow.get(&path).await;
    assert_eq!(held.status(), 200);
    let brief = quick.get(&path).await;
    assert_eq!(brief.status(), 200);
    drop(brief);
    // The quick stream's lease (3 heartbeats + 5 s) has run out; the slow one's (95 s) has not,
    // and its first renewal is still 22 s away.
    tokio::time::sleep(std::time::Duration::from_secs(8)).await;
    let again = quick.get(&path).await;
    assert_eq!(again.status(), 200);
    assert_problem(quick.get(&path).await, 429, "rate_limited").await;
    drop(held);
}
