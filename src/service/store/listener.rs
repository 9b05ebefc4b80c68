//! How a replica hears of the changes other replicas make to the games someone on it watches.
//!
//! Every write announces itself on its game's own channel (`<prefix>:changes:<id>`), and a
//! replica subscribes to a game's channel only while someone on it watches that game (an event
//! stream). A replica thus hears nothing of the games nobody on it follows: its work grows with
//! its own watchers, not with the moves of the whole service (with one channel for all games,
//! each of N replicas read every move made anywhere, N times the traffic in all). The game
//! cache needs no announcements: it is never trusted without asking the store.
//!
//! A watcher is subscribed before `watch` returns, so that a read of the log made after it
//! misses nothing. While the connection is down (or a subscription fails, which gives the
//! connection up) nothing is heard; on reconnecting, to the next node if Redis is a cluster, the
//! listener subscribes again to every watched game and then wakes every watcher to read the log
//! again, so a change made in between is late, never lost. Every step that waits on Redis has a
//! timeout, so a server that accepts a connection and never answers cannot stall it.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::{PubSub, PubSubSink};
use tokio::sync::{Mutex, watch};

use super::Changes;

/// How often the connection is checked with a `PING`: an idle subscriber would otherwise not
/// notice a connection that died without a word (a crashed server's forked child holding the
/// socket, a network partition), and would hear nothing more.
const BEAT: Duration = Duration::from_secs(1);
/// Every how many beats the channels of games nobody watches any more are left.
const SWEEP_BEATS: u64 = 5;
/// How long connecting, a `PING` or a subscription may take before the connection is given up.
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(2);
/// The pause before connecting again.
const RECONNECT: Duration = Duration::from_millis(500);

pub struct Listener {
    /// The nodes to subscribe on, tried in turn (one, unless Redis is a cluster).
    clients: Vec<redis::Client>,
    prefix: String,
    changes: Arc<Changes>,
    secrets: Vec<String>,
    subscriptions: Mutex<Subscriptions>,
}

#[derive(Default)]
struct Subscriptions {
    /// The subscribing half of the connection, while it is up.
    sink: Option<PubSubSink>,
    /// The games whose channels the connection is subscribed to.
    games: HashSet<String>,
}

/// What `step` answered, if it succeeded within `SUBSCRIBE_TIMEOUT`.
async fn within<T>(step: impl Future<Output = redis::RedisResult<T>>) -> Option<T> {
    tokio::time::timeout(SUBSCRIBE_TIMEOUT, step)
        .await
        .ok()?
        .ok()
}

/// The channel on which changes to game `id` are announced.
pub fn channel(prefix: &str, id: &str) -> String {
    [prefix, ":changes:", id].concat()
}

impl Listener {
    pub fn new(
        clients: Vec<redis::Client>,
        prefix: &str,
        changes: Arc<Changes>,
        secrets: Vec<String>,
    ) -> Listener {
        Listener {
            clients,
            prefix: prefix.to_string(),
            changes,
            secrets,
            subscriptions: Mutex::new(Subscriptions::default()),
        }
    }

    fn channels<'a>(&self, ids: impl IntoIterator<Item = &'a String>) -> Vec<String> {
        ids.into_iter()
            .map(|id| channel(&self.prefix, id))
            .collect()
    }

    /// An error to log, without the URL's password.
    fn scrubbed(&self, e: &dyn std::fmt::Display) -> String {
        crate::service::redact::scrub(&e.to_string(), &self.secrets)
    }

    /// A receiver that changes whenever `id` gets a new version, on any replica.
    pub async fn watch(&self, id: &str) -> watch::Receiver<u64> {
        let receiver = self.changes.subscribe(id);
        let mut subscriptions = self.subscriptions.lock().await;
        if subscriptions.games.contains(id) {
            return receiver;
        }
        // Not connected: the listener subscribes to every watched game when it connects, and
        // then wakes every watcher.
        let Some(sink) = subscriptions.sink.as_mut() else {
            return receiver;
        };
        if within(sink.subscribe(channel(&self.prefix, id)))
            .await
            .is_some()
        {
            subscriptions.games.insert(id.to_string());
        } else {
            // The connection is given up (the next beat sees it): the listener connects again,
            // subscribes to every watched game, this one too, and wakes every watcher.
            subscriptions.sink = None;
        }
        receiver
    }

    /// Follows the announcements of the watched games; reconnects by itself while Redis is
    /// away. Runs until the task is dropped.
    pub async fn run(self: Arc<Self>) {
        for attempt in 0.. {
            let client = &self.clients[attempt % self.clients.len()];
            match tokio::time::timeout(SUBSCRIBE_TIMEOUT, client.get_async_pubsub()).await {
                Ok(Ok(pubsub)) => self.serve(pubsub).await,
                Ok(Err(e)) => tracing::debug!(error = %self.scrubbed(&e), "change listener"),
                Err(_) => tracing::debug!("change listener: connecting timed out"),
            }
            *self.subscriptions.lock().await = Subscriptions::default();
            tokio::time::sleep(RECONNECT).await;
        }
    }

    /// Serves one connection until it fails.
    async fn serve(&self, pubsub: PubSub) {
        let (mut sink, mut messages) = pubsub.split();
        {
            let mut subscriptions = self.subscriptions.lock().await;
            let watched: HashSet<String> = self.changes.watched().into_iter().collect();
            if !watched.is_empty()
                && within(sink.subscribe(self.channels(&watched)))
                    .await
                    .is_none()
            {
                return;
            }
            *subscriptions = Subscriptions {
                sink: Some(sink),
                games: watched,
            };
        }
        // What changed while no connection was up went unheard.
        self.changes.wake_all();
        let mut beat = tokio::time::interval(BEAT);
        beat.reset();
        let mut beats = 0u64;
        loop {
            tokio::select! {
                message = messages.next() => {
                    let Some(message) = message else {
                        return;
                    };
                    let Ok(text) = message.get_payload::<String>() else {
                        continue;
                    };
                    if let Some((id, v)) = text.split_once(' ')
                        && let Ok(version) = v.parse()
                    {
                        self.changes.notify(id, version);
                    }
                }
                _ = beat.tick() => {
                    beats += 1;
                    if !self.alive().await || (beats.is_multiple_of(SWEEP_BEATS) && !self.sweep().await) {
                        return;
                    }
                }
            }
        }
    }

    /// Whether the connection still answers.
    async fn alive(&self) -> bool {
        let mut subscriptions = self.subscriptions.lock().await;
        let Some(sink) = subscriptions.sink.as_mut() else {
            return false;
        };
        within(sink.ping::<redis::Value>()).await.is_some()
    }

    /// Leaves the channels of the games nobody here watches any more; false if the connection
    /// failed.
    async fn sweep(&self) -> bool {
        let mut subscriptions = self.subscriptions.lock().await;
        let unwatched: Vec<String> = subscriptions
            .games
            .iter()
            .filter(|id| !self.changes.is_watched(id))
            .cloned()
            .collect();
        if unwatched.is_empty() {
            return true;
        }
        let channels = self.channels(&unwatched);
        let Some(sink) = subscriptions.sink.as_mut() else {
            return false;
        };
        if within(sink.unsubscribe(channels)).await.is_none() {
            return false;
        }
        for id in &unwatched {
            subscriptions.games.remove(id);
        }
        true
    }
}
