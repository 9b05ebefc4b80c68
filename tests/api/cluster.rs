//! The store against a real local Redis Cluster (three masters): every key of a game hashes to
//! one slot, so the scripts work; games, races between replicas, events and engines all run.

use std::sync::Arc;

use pillarz::api::{Seat, Status};
use serde_json::json;

use crate::helpers::{RedisCluster, TestApp, assert_problem, cluster_settings};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn games_on_a_redis_cluster() {
    let cluster = tokio::task::spawn_blocking(RedisCluster::start)
        .await
        .unwrap();
    // With quotas, so their scripts (flagged, as Redis 7 scripts may be) run on it too.
    let mut settings = cluster_settings(&cluster, "cl");
    settings.anon_quotas = Some(pillarz::service::quota::Quotas::KEY);
    let a = Arc::new(TestApp::spawn_with(settings.clone()).await);
    let b = Arc::new(TestApp::spawn_with(settings).await);
    assert_eq!(a.get("/healthz/ready").await.status(), 200);

    // Many games, so their keys spread over every master's slots.
    let mut ids = Vec::new();
    for i in 0..12 {
        let app = if i % 2 == 0 { &a } else { &b };
        let created = app.create(json!({"game": "alcazar"})).await;
        assert_eq!(
            app.play(&created.game.id, &created.tokens[&Seat::P1], "e8d9")
                .await
                .status(),
            200
        );
        ids.push(created);
    }
    for created in &ids {
        let view = b.view(&created.game.id).await;
        assert_eq!(view.moves, ["e8d9"]);
        // The frozen wall is refused; the idempotency and CAS paths run in the scripts.
        let refused = a
            .play(&created.game.id, &created.tokens[&Seat::P2], "d9e8")
            .await;
        assert_problem(refused, 422, "illegal_move").await;
    }

    // Racing submissions of one ply through both replicas land exactly once.
    let created = a.create(json!({"game": "pillarz"})).await;
    let mut tasks = Vec::new();
    for (i, mv) in ["a1+b1", "c1+d1", "a2+b2", "c2+d2", "a3+b3", "c3+d3"]
        .into_iter()
        .enumerate()
    {
        let app = if i % 2 == 0 { a.clone() } else { b.clone() };
        let (id, token) = (created.game.id.clone(), created.tokens[&Seat::P1].clone());
        tasks.push(tokio::spawn(async move {
            app.play(&id, &token, mv).await.status().as_u16()
        }));
    }
    let mut landed = 0;
    for t in tasks {
        if t.await.unwrap() == 200 {
            landed += 1;
        }
    }
    assert_eq!(landed, 1);
    assert_eq!(a.view(&created.game.id).await.ply, 1);

    // A computer opponent plays, and the game ends by resignation everywhere.
    let bot = b
        .create(json!({"game": "pyrga", "seats": {"p2": {"engine": {"level": 1}}}}))
        .await;
    assert_eq!(
        b.play(&bot.game.id, &bot.tokens[&Seat::P1], "Sb2")
            .await
            .status(),
        200
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while a.view(&bot.game.id).await.ply < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the engine did not answer"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let resign = a.resign(&bot.game.id, &bot.tokens[&Seat::P1]).await;
    assert_eq!(resign.status(), 200);
    assert_eq!(b.view(&bot.game.id).await.status, Status::Finished);

    // Changes announced by scripts on every master reach watchers on the other replica, whose
    // listener subscribes on one node (a publish on any node reaches every node).
    let mut watched = Vec::new();
    for _ in 0..6 {
        let created = b.create(json!({"game": "pillarz"})).await;
        let mut stream =
            crate::events::Stream::open(&a, &created.game.id, "application/x-ndjson", None).await;
        stream.game().await.unwrap();
        watched.push((created, stream));
    }
    for (created, stream) in &mut watched {
        let played = b
            .play(&created.game.id, &created.tokens[&Seat::P1], "a1+b1")
            .await;
        assert_eq!(played.status(), 200);
        let (version, view) = stream.game().await.unwrap();
        assert_eq!((version, view.moves), (2, vec!["a1+b1".to_string()]));
    }
}
