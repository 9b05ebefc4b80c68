//! The test harness: a real `redis-server` per test on a free port, and the real application
//! (the same `Application::build` as `pillarz serve`) on port 0.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::free_port::free_port;
use pillarz::api::{CreatedGame, GameView, Seat};
use pillarz::service::configuration::{Settings, StoreSettings};
use pillarz::service::startup::Application;
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};

/// The Redis key of part `part` (`g` game, `e` events, `i` answers, `l` lease) of game `id`
/// under `prefix`, as the Redis store lays them out (shard `{<first two hex digits>}`).
pub fn redis_key(prefix: &str, id: &str, part: &str) -> String {
    format!("{prefix}:{{{}}}:{id}:{part}", &id[..2])
}

/// `mv` played with `token`, under the `Idempotency-Key` `key`.
pub async fn move_with_key(
    app: &TestApp,
    id: &str,
    token: &str,
    key: &str,
    mv: &str,
) -> reqwest::Response {
    app.client
        .post(app.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(token)
        .header("idempotency-key", key)
        .json(&serde_json::json!({ "move": mv }))
        .send()
        .await
        .unwrap()
}

/// A private `redis-server` on a free loopback port; killed when dropped.
pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
    /// With a data directory the server keeps an fsynced append-only file there, so its data
    /// survives a restart.
    data_dir: Option<std::path::PathBuf>,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        let mut server = RedisServer {
            port: free_port(),
            child: None,
            data_dir: None,
        };
        server.spawn();
        server
    }

    /// A server that keeps its data across restarts.
    pub fn start_durable() -> RedisServer {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("pillarz-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut server = RedisServer {
            port,
            child: None,
            data_dir: Some(dir),
        };
        server.spawn();
        server
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn spawn(&mut self) {
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--protected-mode", "no"]);
        match &self.data_dir {
            Some(dir) => command
                .args(["--appendonly", "yes", "--appendfsync", "always", "--dir"])
                .arg(dir),
            None => command.args(["--appendonly", "no"]),
        };
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (apt-get install redis-server)");
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(client) = redis::Client::open(self.url())
                && let Ok(mut conn) = client.get_connection()
                && redis::cmd("PING").query::<String>(&mut conn).is_ok()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not start on port {}", self.port);
    }

    /// Kills the server (its data is gone: it keeps nothing on disk).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// A direct connection, for looking at what the service stored.
    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection()
            .unwrap()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        if let Some(dir) = &self.data_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A local Redis Cluster of three masters on free loopback ports; stopped when dropped.
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    dir: std::path::PathBuf,
}

impl RedisCluster {
    pub fn start() -> RedisCluster {
        let dir = std::env::temp_dir().join(format!(
            "pillarz-cluster-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut nodes = Vec::new();
        while nodes.len() < 3 {
            // The cluster bus listens on port + 10000: both must be free.
            let port = free_port();
            if port > 55_000 || TcpListener::bind(("127.0.0.1", port + 10_000)).is_err() {
                continue;
            }
            let child = Command::new("redis-server")
                .args([
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--protected-mode",
                    "no",
                ])
                .args([
                    "--cluster-enabled",
                    "yes",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ])
                .arg("--cluster-config-file")
                .arg(dir.join(format!("nodes-{port}.conf")))
                .arg("--dir")
                .arg(&dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server must be installed");
            let node = RedisServer {
                port,
                child: Some(child),
                data_dir: None,
            };
            node.wait_ready();
            nodes.push(node);
        }
        let addresses: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli must be installed");
        assert!(status.success(), "redis-cli --cluster create failed");
        let deadline = Instant::now() + Duration::from_secs(20);
        for node in &nodes {
            loop {
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(&mut node.connection())
                    .unwrap();
                if info.contains("cluster_state:ok") {
                    break;
                }
                assert!(Instant::now() < deadline, "the cluster did not come up");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        RedisCluster { nodes, dir }
    }

    /// The comma-separated node URLs, as `--redis` takes them.
    pub fn url(&self) -> String {
        self.nodes
            .iter()
            .map(RedisServer::url)
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.stop();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn cluster_settings(cluster: &RedisCluster, prefix: &str) -> Settings {
    let mut settings = Settings::for_tests();
    settings.store = StoreSettings::Redis {
        url: cluster.url(),
        prefix: prefix.to_string(),
    };
    settings
}

/// One running application and an HTTP client for it.
pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    /// The in-process server (none for a [`Process`]).
    handle: Option<actix_web::dev::ServerHandle>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.clone() {
            tokio::spawn(async move { handle.stop(false).await });
        }
    }
}

fn http_client() -> reqwest::Client {
    // Idle connections dropped before the server's keep-alive closes them: a test that sleeps
    // past it would otherwise race the close (`IncompleteMessage`).
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .pool_idle_timeout(pillarz::client::api_client::IDLE_CONNECTION)
        .build()
        .unwrap()
}

pub fn settings_for(redis: Option<&RedisServer>, prefix: &str) -> Settings {
    let mut settings = Settings::for_tests();
    if let Some(redis) = redis {
        settings.store = StoreSettings::Redis {
            url: redis.url(),
            prefix: prefix.to_string(),
        };
    }
    settings
}

impl TestApp {
    pub async fn spawn_with(settings: Settings) -> TestApp {
        TestApp::spawn_with_player(settings, pillarz::service::engine_seats::engine_thinker()).await
    }

    /// An app whose engine seats are played by `player`.
    pub async fn spawn_with_player(
        settings: Settings,
        player: pillarz::service::engine_seats::Thinker,
    ) -> TestApp {
        let app = Application::build_with(settings, player).expect("the app builds");
        let address = format!("http://127.0.0.1:{}", app.port());
        let handle = app.handle();
        tokio::spawn(app.run_until_stopped());
        TestApp {
            address,
            client: http_client(),
            handle: Some(handle),
        }
    }

    /// A client of a service running elsewhere (a [`Process`]).
    pub fn attach(address: &str) -> TestApp {
        TestApp {
            address: address.to_string(),
            client: http_client(),
            handle: None,
        }
    }

    /// The app on a Redis of its own (returned too: keep it alive for the test).
    pub async fn spawn() -> (TestApp, RedisServer) {
        let redis = RedisServer::start();
        let app = TestApp::spawn_with(settings_for(Some(&redis), "test")).await;
        (app, redis)
    }

    pub async fn spawn_in_memory() -> TestApp {
        TestApp::spawn_with(Settings::for_tests()).await
    }

    /// Stops this replica at once, as if its process died (in-flight requests are dropped).
    pub async fn kill(&self) {
        if let Some(handle) = &self.handle {
            handle.stop(false).await;
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub async fn get(&self, path: &str) -> Response {
        self.client.get(self.url(path)).send().await.unwrap()
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> Response {
        self.client
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// Creates a game, asserting success.
    pub async fn create(&self, body: Value) -> CreatedGame {
        let response = self.post_json("/v1/games", &body).await;
        assert_eq!(response.status(), StatusCode::CREATED, "creating {body}");
        response.json().await.unwrap()
    }

    pub async fn play(&self, id: &str, token: &str, mv: &str) -> Response {
        self.client
            .post(self.url(&format!("/v1/games/{id}/moves")))
            .bearer_auth(token)
            .json(&json!({ "move": mv }))
            .send()
            .await
            .unwrap()
    }

    pub async fn resign(&self, id: &str, token: &str) -> Response {
        self.client
            .post(self.url(&format!("/v1/games/{id}/resign")))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }

    pub async fn clock(&self, id: &str) -> pillarz::api::ClockView {
        let response = self.get(&format!("/v1/games/{id}/clock")).await;
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
    }

    pub async fn view(&self, id: &str) -> GameView {
        let response = self.get(&format!("/v1/games/{id}")).await;
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
    }

    /// Creates a game of `kind` between two persons and plays `plies` moves in it, never one
    /// that ends it; the game as it then stands.
    pub async fn long_game(&self, kind: &str, plies: u64) -> GameView {
        self.long_game_with_tokens(kind, plies).await.0
    }

    /// [`TestApp::long_game`], with the seats' tokens.
    pub async fn long_game_with_tokens(
        &self,
        kind: &str,
        plies: u64,
    ) -> (GameView, BTreeMap<Seat, String>) {
        let created = self.create(json!({ "game": kind })).await;
        let id = created.game.id.clone();
        let kind: pillarz::rules::GameKind = kind.parse().unwrap();
        let mut view = created.game.clone();
        while view.ply < plies {
            let record = pillarz::rules::AnyRecord::replay(
                kind,
                kind.with_variants(&view.variants).unwrap(),
                &view.start_position,
                &view.moves,
            )
            .unwrap();
            let moves = self.legal_moves(&id).await;
            let n = moves.len();
            let mv = (0..n)
                .map(|k| &moves[(view.ply as usize * 7 + k) % n])
                .find(|mv| {
                    let mut next = record.clone();
                    next.play(mv).unwrap();
                    next.outcome().is_none()
                })
                .expect("a move that does not end the game");
            let response = self.play(&id, &created.tokens[&view.turn], mv).await;
            assert_eq!(response.status(), StatusCode::OK);
            view = response.json().await.unwrap();
        }
        (view, created.tokens)
    }

    pub async fn legal_moves(&self, id: &str) -> Vec<String> {
        let response = self.get(&format!("/v1/games/{id}/legal-moves")).await;
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = response.json().await.unwrap();
        serde_json::from_value(body["moves"].clone()).unwrap()
    }
}

/// A replica as its own `pillarz serve` process (so it can die by SIGKILL); killed when
/// dropped.
pub struct Process {
    pub app: TestApp,
    child: Child,
}

impl Process {
    /// Starts `pillarz serve` on a free port with these environment variables, and waits
    /// until it is ready.
    pub async fn serve(env: &[(&str, String)]) -> Process {
        let port = free_port();
        let mut command = Command::new(env!("CARGO_BIN_EXE_pillarz"));
        command
            .arg("serve")
            .env("PILLARZ_LISTEN", format!("127.0.0.1:{port}"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        let child = command.spawn().expect("the pillarz binary runs");
        let process = Process {
            app: TestApp::attach(&format!("http://127.0.0.1:{port}")),
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = process
                .app
                .client
                .get(process.app.url("/healthz/ready"))
                .send()
                .await;
            if ready.is_ok_and(|r| r.status() == StatusCode::OK) {
                return process;
            }
            assert!(Instant::now() < deadline, "pillarz serve did not get ready");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The most memory the process has held (`VmHWM`), in bytes.
    pub fn peak_memory(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the process's status");
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .expect("VmHWM in the status");
        kib.trim().parse::<u64>().unwrap() * 1024
    }

    /// `kill -9`: the process dies at once, whatever it was doing.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Asserts a problem+json answer with this status and code; returns the body.
pub async fn assert_problem(response: Response, status: u16, code: &str) -> Value {
    assert_eq!(response.status().as_u16(), status, "status for {code}");
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string());
    assert_eq!(content_type.as_deref(), Some("application/problem+json"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status);
    assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()));
    assert!(
        body["request_id"].as_str().is_some(),
        "request id in {body}"
    );
    body
}
