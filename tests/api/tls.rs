//! `rediss://`: the service talks to a local `redis-server` over TLS (rustls), with a test
//! certificate authority made here by the `openssl` CLI, and refuses a server it cannot verify.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pillarz::api::Seat;
use pillarz::service::configuration::{Settings, StoreSettings};
use serde_json::json;

use crate::helpers::{TestApp, assert_problem};

fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the openssl CLI must be installed");
    assert!(status.success(), "openssl {args:?}");
}

/// A CA, and a server certificate for 127.0.0.1 signed by it, in a fresh directory.
fn certificates() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "pillarz-tls-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let days = ["-days", "2"];
    openssl(
        &dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-subj",
            "/CN=pillarz test CA",
            days[0],
            days[1],
        ],
    );
    openssl(
        &dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        &dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-extfile",
            "server.ext",
            days[0],
            days[1],
        ],
    );
    dir
}

/// `redis-server` listening only for TLS on a free loopback port.
struct TlsRedis {
    port: u16,
    child: Child,
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_tls_redis(dir: &Path) -> TlsRedis {
    let port = crate::free_port::free_port();
    let child = Command::new("redis-server")
        .args([
            "--port",
            "0",
            "--tls-port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
        .args(["--tls-auth-clients", "no"])
        .arg("--tls-cert-file")
        .arg(dir.join("server.crt"))
        .arg("--tls-key-file")
        .arg(dir.join("server.key"))
        .arg("--tls-ca-cert-file")
        .arg(dir.join("ca.crt"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server must be installed");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "redis-server with TLS did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    TlsRedis { port, child }
}

fn tls_settings(redis: &TlsRedis, ca: Option<PathBuf>) -> Settings {
    let mut settings = Settings::for_tests();
    settings.store = StoreSettings::Redis {
        url: format!("rediss://127.0.0.1:{}", redis.port),
        prefix: "tls".into(),
    };
    settings.redis_ca_file = ca;
    settings
}

#[tokio::test]
async fn games_are_kept_in_redis_over_tls() {
    let dir = certificates();
    let redis = start_tls_redis(&dir);
    let app = TestApp::spawn_with(tls_settings(&redis, Some(dir.join("ca.crt")))).await;
    let ready = app.get("/healthz/ready").await;
    assert_eq!(ready.status(), 200, "{}", ready.text().await.unwrap());
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    let played = app.play(id, &created.tokens[&Seat::P1], "a1+b1").await;
    assert_eq!(played.status(), 200);
    // A second replica over TLS sees the same game.
    let other = TestApp::spawn_with(tls_settings(&redis, Some(dir.join("ca.crt")))).await;
    assert_eq!(other.view(id).await.moves, ["a1+b1"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_tls_server_that_cannot_be_verified_is_not_used() {
    let dir = certificates();
    let redis = start_tls_redis(&dir);
    // The system's trust store does not know the test CA.
    let app = TestApp::spawn_with(tls_settings(&redis, None)).await;
    let refused = app.post_json("/v1/games", &json!({"game": "pyrga"})).await;
    assert_problem(refused, 503, "store_unavailable").await;
    let _ = std::fs::remove_dir_all(&dir);
}
