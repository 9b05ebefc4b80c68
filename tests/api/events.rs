//! Live updates: SSE and NDJSON, across replicas, resumable, ending with the game.

use std::time::Duration;

use pillarz::api::{GameEvent, GameView, Seat, Status, StreamLine};
use serde_json::{Value, json};

use crate::helpers::{RedisServer, TestApp, settings_for};

/// Reads a live stream event by event, keeping the game it describes current.
pub struct Stream {
    response: reqwest::Response,
    buffer: String,
    /// The game as of the last event.
    view: Option<GameView>,
}

/// One SSE event or NDJSON line, parsed.
#[derive(Debug)]
pub enum Event {
    /// The whole game.
    Game {
        version: u64,
        view: Box<GameView>,
    },
    /// One change.
    Change {
        version: u64,
        change: Box<GameEvent>,
    },
    Heartbeat,
}

impl Stream {
    pub async fn open(app: &TestApp, id: &str, accept: &str, last: Option<u64>) -> Stream {
        let mut request = app
            .client
            .get(app.url(&format!("/v1/games/{id}/events")))
            .header("accept", accept);
        if let Some(v) = last {
            request = request.header("last-event-id", v.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        Stream {
            response,
            buffer: String::new(),
            view: None,
        }
    }

    /// Resumes after `view`, the last game an earlier stream showed.
    pub async fn resume(app: &TestApp, accept: &str, view: GameView) -> Stream {
        let mut stream = Stream::open(app, &view.id, accept, Some(view.version)).await;
        stream.view = Some(view);
        stream
    }

    fn parse(kind: &str, version: u64, data: &str) -> Event {
        match kind {
            "game" => {
                let view: GameView = serde_json::from_str(data).unwrap();
                assert_eq!(view.version, version);
                Event::Game {
                    version,
                    view: Box::new(view),
                }
            }
            "change" => {
                let change: GameEvent = serde_json::from_str(data).unwrap();
                assert_eq!(change.version, version);
                Event::Change {
                    version,
                    change: Box::new(change),
                }
            }
            other => panic!("unknown event {other:?}"),
        }
    }

    /// The next event, or `None` when the server closed the stream.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            let sse = self.buffer.find("\n\n");
            let ndjson = (!self.buffer.starts_with("id:") && !self.buffer.starts_with(':'))
                .then(|| self.buffer.find('\n'))
                .flatten();
            if let Some(end) =
                sse.filter(|_| self.buffer.starts_with("id:") || self.buffer.starts_with(':'))
            {
                let block: String = self.buffer.drain(..end + 2).collect();
                if block.starts_with(':') {
                    return Some(Event::Heartbeat);
                }
                let (mut version, mut kind, mut data) = (0, "", "");
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        version = v.parse().unwrap();
                    } else if let Some(k) = line.strip_prefix("event: ") {
                        kind = k;
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data = d;
                    } else {
                        assert!(line.is_empty(), "{line}");
                    }
                }
                return Some(Stream::parse(kind, version, data));
            }
            if let Some(end) = ndjson {
                let line: String = self.buffer.drain(..end + 1).collect();
                let value: Value = serde_json::from_str(line.trim()).unwrap();
                // Every line is a typed stream line too.
                let typed: StreamLine = serde_json::from_value(value.clone()).unwrap();
                if typed == StreamLine::Heartbeat {
                    return Some(Event::Heartbeat);
                }
                let kind = value["event"].as_str().unwrap().to_string();
                let version = value["version"].as_u64().unwrap();
                return Some(Stream::parse(&kind, version, &value[&kind].to_string()));
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an event within 10 s")
                .unwrap();
            match chunk {
                Some(bytes) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                None => return None,
            }
        }
    }

    /// The game after the next game or change event, skipping heartbeats.
    pub async fn game(&mut self) -> Option<(u64, GameView)> {
        loop {
            match self.next().await? {
                Event::Game { version, view } => {
                    self.view = Some(*view);
                    return Some((version, self.view.clone().unwrap()));
                }
                Event::Change { version, change } => {
                    let view = self.view.as_mut().expect("a change follows a game");
                    assert_eq!(change.version, view.version + 1, "no change is skipped");
                    view.apply(&change);
                    return Some((version, view.clone()));
                }
                Event::Heartbeat => {}
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watcher_on_one_replica_sees_every_move_made_through_another_in_order() {
    let redis = RedisServer::start();
    let a = TestApp::spawn_with(settings_for(Some(&redis), "live")).await;
    let b = TestApp::spawn_with(settings_for(Some(&redis), "live")).await;
    let created = b.create(json!({"game": "pillarz"})).await;
    let id = created.game.id.clone();
    let mut stream = Stream::open(&a, &id, "text/event-stream", None).await;
    let (first, view) = stream.game().await.unwrap();
    assert_eq!((first, view.ply), (1, 0));
    let script = [
        "a1+b1", "d5+e5", "a1-a2^a1", "d5-d4^d5", "b1-c1^b1", "e5-e4^e5",
    ];
    for (i, mv) in script.iter().enumerate() {
        let seat = if i % 2 == 0 { Seat::P1 } else { Seat::P2 };
        assert_eq!(
            b.play(&id, &created.tokens[&seat], mv).await.status(),
            200,
            "{mv}"
        );
    }
    for (i, mv) in script.iter().enumerate() {
        let (version, view) = stream.game().await.unwrap();
        assert_eq!(
            version,
            i as u64 + 2,
            "versions arrive in order, none missing"
        );
        assert_eq!(view.moves.last().unwrap(), mv);
    }
    // Resign: the final event, then the stream ends.
    let resign = b.resign(&id, &created.tokens[&Seat::P1]).await;
    assert_eq!(resign.status(), 200);
    let (version, view) = stream.game().await.unwrap();
    assert_eq!(version, 8);
    assert_eq!(view.status, Status::Finished);
    assert!(
        stream.game().await.is_none(),
        "the stream ends after the final event"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reconnecting_with_last_event_id_resumes_without_loss_or_duplicates() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "alcazar"})).await;
    let id = created.game.id.clone();
    let play = |seat: Seat, mv: &'static str| {
        let (app, id, token) = (&app, id.clone(), created.tokens[&seat].clone());
        async move { assert_eq!(app.play(&id, &token, mv).await.status(), 200) }
    };
    let mut stream = Stream::open(&app, &id, "text/event-stream", None).await;
    assert_eq!(stream.game().await.unwrap().0, 1);
    play(Seat::P1, "Kd8").await;
    let (two, seen) = stream.game().await.unwrap();
    assert_eq!(two, 2);
    drop(stream); // the connection drops
    play(Seat::P2, "Kf2").await;
    play(Seat::P1, "Kb8").await;
    let mut resumed = Stream::resume(&app, "text/event-stream", seen).await;
    let (v3, view3) = resumed.game().await.unwrap();
    let (v4, view4) = resumed.game().await.unwrap();
    assert_eq!((v3, v4), (3, 4));
    assert_eq!(view3.moves, ["Kd8", "Kf2"]);
    assert_eq!(view4.moves, ["Kd8", "Kf2", "Kb8"]);
    play(Seat::P2, "h5i6").await;
    assert_eq!(resumed.game().await.unwrap().0, 5);
}

#[tokio::test]
async fn ndjson_heartbeats_and_a_flag_nobody_else_notices() {
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.events_heartbeat = Duration::from_millis(1000);
    let app = TestApp::spawn_with(settings).await;
    let created = app
        .create(json!({"game": "pyrga", "time_control": {"initial_ms": 1500, "increment_ms": 0}}))
        .await;
    let mut stream = Stream::open(&app, &created.game.id, "application/x-ndjson", None).await;
    let first = stream.next().await;
    let Some(Event::Game { version: 1, view }) = first else {
        panic!("the stream starts with the game: {first:?}");
    };
    stream.view = Some(*view);
    assert!(
        matches!(stream.next().await, Some(Event::Heartbeat)),
        "idle: a heartbeat"
    );
    // No request touches the game: the stream itself notices p1's flag.
    let (version, view) = stream.game().await.unwrap();
    assert_eq!(version, 2);
    assert_eq!(serde_json::to_value(view.termination).unwrap(), "timeout");
    assert!(stream.game().await.is_none());
}

#[tokio::test]
async fn event_stream_errors() {
    let app = TestApp::spawn_in_memory().await;
    let missing = app
        .get("/v1/games/6a3e7f3a-0000-4000-8000-000000000000/events")
        .await;
    crate::helpers::assert_problem(missing, 404, "game_not_found").await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let bad = app
        .client
        .get(app.url(&format!("/v1/games/{}/events", created.game.id)))
        .header("last-event-id", "yesterday")
        .send()
        .await
        .unwrap();
    crate::helpers::assert_problem(bad, 400, "bad_request").await;
}

#[tokio::test]
async fn a_last_event_id_beyond_the_game_is_refused() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    let ahead = app
        .client
        .get(app.url(&format!("/v1/games/{id}/events")))
        .header("last-event-id", "5")
        .send()
        .await
        .unwrap();
    let body = crate::helpers::assert_problem(ahead, 409, "event_id_ahead").await;
    assert!(body["detail"].as_str().unwrap().contains('5'), "{body}");
    // The current version itself is fine: nothing missed, the stream waits for the next.
    let mut stream = Stream::resume(&app, "text/event-stream", created.game.clone()).await;
    let played = app.play(id, &created.tokens[&Seat::P1], "a1+b1").await;
    assert_eq!(played.status(), 200);
    assert_eq!(stream.game().await.unwrap().0, 2);
}

/// A client that has every event of a finished game (EventSource reconnects with its last id
/// after every end of a stream) hears `204`: the one answer that stops an EventSource from
/// reconnecting, where an empty `200` made it come back every few seconds for ever.
#[tokio::test]
async fn a_resume_after_a_finished_games_last_event_is_204() {
    let (app, _redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    assert_eq!(
        app.resign(id, &created.tokens[&Seat::P1]).await.status(),
        200
    );
    for accept in ["text/event-stream", "application/x-ndjson"] {
        let resumed = app
            .client
            .get(app.url(&format!("/v1/games/{id}/events")))
            .header("accept", accept)
            .header("last-event-id", "2")
            .send()
            .await
            .unwrap();
        assert_eq!(resumed.status(), 204, "{accept}");
        assert!(resumed.bytes().await.unwrap().is_empty());
    }
    // One event short: the final change, then the end.
    let mut behind = Stream::resume(&app, "text/event-stream", created.game.clone()).await;
    let (version, view) = behind.game().await.unwrap();
    assert_eq!((version, view.status), (2, Status::Finished));
    assert!(behind.game().await.is_none());
}

/// A backlog longer than a page arrives whole, in order, without duplicates (Redis and memory).
async fn a_long_backlog_arrives_whole(app: &TestApp) {
    let view = app.long_game("alcazar", 150).await;
    let id = view.id.clone();
    assert!(
        view.version > 140,
        "a backlog of several pages ({})",
        view.version
    );
    let mut stream = Stream::open(app, &id, "application/x-ndjson", Some(0)).await;
    for expected in 1..=view.version {
        let (version, event) = stream.game().await.unwrap();
        assert_eq!(version, expected);
        assert_eq!(event.version, expected);
    }
}

#[tokio::test]
async fn a_backlog_longer_than_a_page_arrives_whole_redis() {
    let (app, _redis) = TestApp::spawn().await;
    a_long_backlog_arrives_whole(&app).await;
}

#[tokio::test]
async fn a_backlog_longer_than_a_page_arrives_whole_memory() {
    let app = TestApp::spawn_in_memory().await;
    a_long_backlog_arrives_whole(&app).await;
}

#[tokio::test]
async fn streams_beyond_the_cap_get_503_until_one_closes() {
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.max_event_streams = 2;
    // A closed connection is noticed when the next bytes (a heartbeat at the latest) fail.
    settings.events_heartbeat = Duration::from_millis(300);
    let app = TestApp::spawn_with(settings).await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = &created.game.id;
    let mut first = Stream::open(&app, id, "text/event-stream", None).await;
    let mut second = Stream::open(&app, id, "application/x-ndjson", None).await;
    assert_eq!(first.game().await.unwrap().0, 1);
    assert_eq!(second.game().await.unwrap().0, 1);
    let third = app.get(&format!("/v1/games/{id}/events")).await;
    assert!(third.headers().get("retry-after").is_some(), "Retry-After");
    crate::helpers::assert_problem(third, 503, "busy").await;
    // Other requests are not affected.
    assert_eq!(app.get(&format!("/v1/games/{id}")).await.status(), 200);
    drop(first);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let again = app
            .client
            .get(app.url(&format!("/v1/games/{id}/events")))
            .send()
            .await
            .unwrap();
        if again.status() == 200 {
            break;
        }
        assert_eq!(again.status(), 503);
        assert!(std::time::Instant::now() < deadline, "the slot came back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Events the log lost (trimmed by an operator, say) are not invented: the stream starts
/// again with the whole present game, marked as such by its `game` event.
#[tokio::test]
async fn a_resume_into_a_trimmed_log_starts_with_the_whole_game() {
    let (app, redis) = TestApp::spawn().await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = created.game.id.clone();
    let script = [
        "a1+b1", "d5+e5", "a1-a2^a1", "d5-d4^d5", "b1-c1^b1", "e5-e4^e5",
    ];
    for (i, mv) in script.iter().enumerate() {
        let seat = if i % 2 == 0 { Seat::P1 } else { Seat::P2 };
        assert_eq!(
            app.play(&id, &created.tokens[&seat], mv).await.status(),
            200
        );
    }
    let mut conn = redis.connection();
    let _: () = redis::cmd("LTRIM")
        .arg(crate::helpers::redis_key("test", &id, "e"))
        .arg(-3)
        .arg(-1)
        .query(&mut conn)
        .unwrap();
    let mut stream = Stream::open(&app, &id, "text/event-stream", Some(2)).await;
    match stream.next().await {
        Some(Event::Game { version, view }) => {
            assert_eq!(version, 7);
            assert_eq!(view.moves, script);
        }
        other => panic!("expected the whole game first, got {other:?}"),
    }
}

/// The games whose change channels someone is subscribed to (`PUBSUB CHANNELS`).
fn followed_games(redis: &RedisServer, prefix: &str) -> Vec<String> {
    let mut conn = redis.connection();
    let channels: Vec<String> = redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .arg(format!("{prefix}:changes:*"))
        .query(&mut conn)
        .unwrap();
    channels
        .into_iter()
        .map(|c| c.rsplit(':').next().unwrap().to_string())
        .collect()
}

/// A replica hears only of the games someone on it watches, and only while they are watched:
/// the moves of every other game cost it nothing, however many replicas and games there are.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_follows_only_the_games_watched_on_it_while_they_are_watched() {
    let redis = RedisServer::start();
    // Frequent heartbeats, so that the replica soon notices the watcher left.
    let mut settings = settings_for(Some(&redis), "scoped");
    settings.events_heartbeat = Duration::from_millis(200);
    let a = TestApp::spawn_with(settings).await;
    let b = TestApp::spawn_with(settings_for(Some(&redis), "scoped")).await;
    let watched = b.create(json!({"game": "pillarz"})).await;
    let other = b.create(json!({"game": "pillarz"})).await;
    assert!(followed_games(&redis, "scoped").is_empty());
    // A game that does not exist is refused before anything is subscribed.
    let missing = a
        .client
        .get(a.url(&format!("/v1/games/{}/events", uuid::Uuid::new_v4())))
        .send()
        .await
        .unwrap();
    crate::helpers::assert_problem(missing, 404, "game_not_found").await;
    assert!(followed_games(&redis, "scoped").is_empty());

    let mut stream = Stream::open(&a, &watched.game.id, "text/event-stream", None).await;
    stream.game().await.unwrap();
    assert_eq!(
        followed_games(&redis, "scoped"),
        vec![watched.game.id.clone()]
    );
    for (game, mv) in [(&other, "a1+b1"), (&watched, "a1+b1")] {
        let played = b.play(&game.game.id, &game.tokens[&Seat::P1], mv).await;
        assert_eq!(played.status(), 200);
    }
    let (version, view) = stream.game().await.unwrap();
    assert_eq!((version, view.moves), (2, vec!["a1+b1".to_string()]));

    drop(stream);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !followed_games(&redis, "scoped").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the replica still follows a game nobody watches"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Changes made while a replica could not hear them (Redis restarted) reach its watchers once
/// it can again: late, never lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watcher_misses_nothing_across_a_redis_restart() {
    let mut redis = RedisServer::start_durable();
    let a = TestApp::spawn_with(settings_for(Some(&redis), "restart")).await;
    let b = TestApp::spawn_with(settings_for(Some(&redis), "restart")).await;
    let created = b.create(json!({"game": "pillarz"})).await;
    let id = created.game.id.clone();
    let mut stream = Stream::open(&a, &id, "application/x-ndjson", None).await;
    stream.game().await.unwrap();

    redis.restart();
    // Played through the other replica as soon as Redis answers again, whether or not this
    // replica's listener is back yet.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let played = b.play(&id, &created.tokens[&Seat::P1], "a1+b1").await;
        if played.status() == 200 {
            break;
        }
        assert_eq!(played.status(), 503);
        assert!(
            std::time::Instant::now() < deadline,
            "Redis did not come back"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (version, view) = stream.game().await.unwrap();
    assert_eq!((version, view.moves), (2, vec!["a1+b1".to_string()]));
    assert_eq!(followed_games(&redis, "restart"), [id]);
}

/// Reads `stream` until the server ends it; how long that took (`None`: not within `within`).
async fn ends_within(stream: &mut Stream, within: Duration) -> Option<Duration> {
    let started = std::time::Instant::now();
    while started.elapsed() < within {
        if stream.next().await.is_none() {
            return Some(started.elapsed());
        }
    }
    None
}

/// A game that expires takes its streams with it: they do not go on sending heartbeats about
/// a game that is gone.
#[tokio::test]
async fn a_stream_ends_when_its_game_expires() {
    let redis = RedisServer::start();
    let mut settings = settings_for(Some(&redis), "gone");
    settings.idle_ttl = Duration::from_secs(1);
    settings.events_heartbeat = Duration::from_millis(200);
    let app = TestApp::spawn_with(settings).await;
    let created = app.create(json!({"game": "pyrga"})).await;
    let mut streams = Vec::new();
    for accept in ["text/event-stream", "application/x-ndjson"] {
        let mut stream = Stream::open(&app, &created.game.id, accept, None).await;
        stream.game().await.unwrap();
        streams.push((accept, stream));
    }
    for (accept, mut stream) in streams {
        let ended = ends_within(&mut stream, Duration::from_secs(5)).await;
        assert!(
            ended.is_some(),
            "{accept}: still streaming a game that is gone"
        );
    }
    let gone = app
        .get(&format!("/v1/games/{}/events", created.game.id))
        .await;
    assert_eq!(gone.status(), 404);
}

/// No stream lasts for ever: it ends after `--events-max-lifetime-secs`, and the client
/// resumes where it was with `Last-Event-ID`, missing nothing.
#[tokio::test]
async fn a_stream_ends_at_its_lifetime_and_resumes() {
    let mut settings = pillarz::service::configuration::Settings::for_tests();
    settings.events_max_lifetime = Duration::from_secs(1);
    settings.events_heartbeat = Duration::from_millis(300);
    let app = TestApp::spawn_with(settings).await;
    let created = app.create(json!({"game": "pillarz"})).await;
    let id = created.game.id.clone();
    let mut stream = Stream::open(&app, &id, "text/event-stream", None).await;
    let (_, view) = stream.game().await.unwrap();
    let ended = ends_within(&mut stream, Duration::from_secs(5)).await;
    let ended = ended.expect("the stream outlived its lifetime");
    assert!(ended >= Duration::from_millis(500), "ended after {ended:?}");
    assert_eq!(
        app.play(&id, &created.tokens[&Seat::P1], "a1+b1")
            .await
            .status(),
        200
    );
    let mut resumed = Stream::resume(&app, "text/event-stream", view).await;
    let (version, view) = resumed.game().await.unwrap();
    assert_eq!((version, view.ply), (2, 1));
}
