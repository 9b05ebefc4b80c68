//! Faults under load: one of two replicas dies and Redis restarts while games are played;
//! clients see refused connections or 503s at worst, and afterwards every game's move list
//! holds exactly the accepted moves and replays legally.

use std::time::Duration;

use pillarz::loadgen::{Config, Mode, run};

use crate::helpers::{RedisServer, TestApp, settings_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_dies_and_redis_restarts_mid_load() {
    let mut redis = RedisServer::start_durable();
    let a = TestApp::spawn_with(settings_for(Some(&redis), "faults")).await;
    let b = TestApp::spawn_with(settings_for(Some(&redis), "faults")).await;
    let load = tokio::spawn(run(Config {
        mode: Mode::Games,
        targets: vec![a.address.clone(), b.address.clone()],
        duration: Duration::from_secs(6),
        players: 8,
        readers: 2,
        analyses_per_sec: 1.0,
        moves_per_sec: None,
        seed: 3,
    }));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    a.kill().await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    tokio::task::block_in_place(|| redis.restart());
    let report = load.await.unwrap().expect("valid targets");
    println!("{report}");
    assert!(
        report.moves > 100,
        "the load went on: {} moves",
        report.moves
    );
    assert_eq!(report.lost, 0, "no accepted move is lost");
    assert_eq!(report.duplicated, 0, "no move is stored twice");
    assert_eq!(report.illegal, 0, "every game replays legally");
    for endpoint in &report.endpoints {
        for status in endpoint.statuses.keys() {
            assert!(
                matches!(status, 0 | 200 | 201 | 409 | 422 | 503),
                "{}: unexpected status {status}",
                endpoint.name
            );
        }
    }
    assert!(report.errors() > 0, "the faults were felt");
}
