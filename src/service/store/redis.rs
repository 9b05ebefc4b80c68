//! The Redis store. A game is one hash `<prefix>:{<id>}:g` with fields `v` (version) and `d`
//! (the record); idempotent answers are `<prefix>:{<id>}:i:<key>`. The `{<id>}` hash tag puts
//! every key of a game in one Redis Cluster slot, so the compare-and-set script touches one
//! slot only.
//!
//! The connection is made on first use, not at start-up, so the service starts (and reports
//! not-ready) while Redis is down; redis-rs's `ConnectionManager` (or, for a Redis Cluster, its
//! cluster connection) then reconnects by itself.

use std::time::Duration;

use redis::AsyncCommands;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

use super::{Changes, EVENT_LOG_LEN, IDEMPOTENCY_TTL, StoreError, Versioned, WriteExtras};

/// Replaces the record only if its version is still ARGV[1], renews its lifetime (ARGV[4] ms:
/// the idle period while the game is on, the finished lifetime once it is over) and optionally
/// saves an idempotent answer (with its own lifetime, ARGV[6] ms) in the same atomic step.
/// It also appends the change's event to the game's log (stream entry id `<version>-1`) and
/// announces `<id> <version>` to every replica.
const COMPARE_AND_SET: &str = r"
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'd', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if ARGV[5] ~= '' then redis.call('SET', KEYS[2], ARGV[5], 'PX', ARGV[6]) end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[10], ARGV[2] .. '-1', 'e', ARGV[7])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
redis.call('PUBLISH', ARGV[8], ARGV[9] .. ' ' .. ARGV[2])
return 1
";

/// Deletes the lease only if it is still held by ARGV[1].
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

/// Creates a game and its first event, both expiring after ARGV[6] ms, and announces it (one
/// slot, so also on a cluster).
const CREATE: &str = r"
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'd', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('XADD', KEYS[2], ARGV[1] .. '-1', 'e', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('PUBLISH', ARGV[4], ARGV[5] .. ' ' .. ARGV[1])
return 1
";

/// A single Redis or a Redis Cluster.
enum Backend {
    Single(Box<redis::Client>),
    Cluster(Box<redis::cluster::ClusterClient>),
}

/// A live connection to either.
#[derive(Clone)]
enum Connection {
    Single(ConnectionManager),
    Cluster(redis::cluster_async::ClusterConnection),
}

impl redis::aio::ConnectionLike for Connection {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        match self {
            Connection::Single(c) => c.req_packed_command(cmd),
            Connection::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        match self {
            Connection::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Connection::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Single(c) => c.get_db(),
            Connection::Cluster(c) => c.get_db(),
        }
    }
}

pub struct RedisStore {
    backend: Backend,
    /// Where the change listener subscribes (any node of a cluster sees every publish).
    pubsub: redis::Client,
    connection: OnceCell<Connection>,
    create: redis::Script,
    prefix: String,
    script: redis::Script,
    release: redis::Script,
    changes: std::sync::Arc<Changes>,
    /// The URL's passwords, scrubbed from every error this store relays.
    secrets: Vec<String>,
}

/// A lifetime in milliseconds for `PEXPIRE`/`PX` (at least 1: Redis refuses 0).
fn millis(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

impl RedisStore {
    /// A store for `url` whose keys all start with `prefix` (a namespace: tests use their own).
    /// Several comma-separated URLs mean the nodes of a Redis Cluster. `rediss://` URLs use
    /// TLS (rustls), trusting `ca` (PEM) if given, else the system's trust store.
    pub fn new(
        url: &str,
        prefix: &str,
        ca: Option<&[u8]>,
    ) -> Result<RedisStore, redis::RedisError> {
        let certificates = ca.map(|pem| redis::TlsCertificates {
            client_tls: None,
            root_cert: Some(pem.to_vec()),
        });
        let open = |node: &str| match &certificates {
            Some(certs) if node.starts_with("rediss://") => {
                redis::Client::build_with_tls(node, certs.clone())
            }
            _ => redis::Client::open(node),
        };
        let nodes: Vec<&str> = url
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect();
        let backend = if nodes.len() > 1 {
            let mut builder = redis::cluster::ClusterClient::builder(nodes.clone())
                .connection_timeout(Duration::from_millis(1000))
                .response_timeout(Duration::from_millis(2000))
                .retries(2);
            if let Some(certs) = &certificates {
                builder = builder.certs(certs.clone());
            }
            Backend::Cluster(Box::new(builder.build()?))
        } else {
            Backend::Single(Box::new(open(url)?))
        };
        Ok(RedisStore {
            backend,
            pubsub: open(nodes.first().copied().unwrap_or(url))?,
            connection: OnceCell::new(),
            create: redis::Script::new(CREATE),
            prefix: prefix.to_string(),
            script: redis::Script::new(COMPARE_AND_SET),
            release: redis::Script::new(RELEASE),
            changes: std::sync::Arc::new(Changes::default()),
            secrets: crate::service::redact::secrets(url),
        })
    }

    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// A Redis error as a store error, without the URL's password.
    fn unavailable(&self, e: redis::RedisError) -> StoreError {
        StoreError::Unavailable(crate::service::redact::scrub(&e.to_string(), &self.secrets))
    }

    fn channel(&self) -> String {
        format!("{}:changes", self.prefix)
    }

    fn events_key(&self, id: &str) -> String {
        format!("{}:{{{id}}}:ev", self.prefix)
    }

    /// Follows the change announcements of every replica and wakes this replica's watchers;
    /// reconnects by itself while Redis is away. Runs until the process ends.
    pub fn spawn_listener(&self) {
        let client = self.pubsub.clone();
        let channel = self.channel();
        let changes = self.changes.clone();
        let secrets = self.secrets.clone();
        tokio::spawn(async move {
            use futures_util::StreamExt;
            loop {
                match client.get_async_pubsub().await {
                    Ok(mut pubsub) => {
                        if pubsub.subscribe(&channel).await.is_ok() {
                            let mut messages = pubsub.on_message();
                            while let Some(msg) = messages.next().await {
                                let Ok(text) = msg.get_payload::<String>() else {
                                    continue;
                                };
                                if let Some((id, v)) = text.split_once(' ')
                                    && let Ok(version) = v.parse()
                                {
                                    changes.notify(id, version);
                                }
                            }
                        }
                    }
                    Err(e) => tracing::debug!(
                        error = %crate::service::redact::scrub(&e.to_string(), &secrets),
                        "change listener cannot connect"
                    ),
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
    }

    async fn connection(&self) -> Result<Connection, StoreError> {
        self.connection
            .get_or_try_init(|| async {
                match &self.backend {
                    Backend::Single(client) => {
                        let config = ConnectionManagerConfig::new()
                            .set_connection_timeout(Some(Duration::from_millis(1000)))
                            .set_response_timeout(Some(Duration::from_millis(2000)))
                            .set_number_of_retries(2)
                            .set_max_delay(Duration::from_millis(500));
                        client
                            .get_connection_manager_with_config(config)
                            .await
                            .map(Connection::Single)
                    }
                    Backend::Cluster(client) => {
                        client.get_async_connection().await.map(Connection::Cluster)
                    }
                }
            })
            .await
            .cloned()
            .map_err(|e| self.unavailable(e))
    }

    fn game_key(&self, id: &str) -> String {
        format!("{}:{{{id}}}:g", self.prefix)
    }

    fn answer_key(&self, id: &str, key: &str) -> String {
        format!("{}:{{{id}}}:i:{key}", self.prefix)
    }

    pub async fn create(
        &self,
        id: &str,
        record: &Versioned,
        event: &str,
        expire_after: Duration,
    ) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        let _: i64 = self
            .create
            .key(self.game_key(id))
            .key(self.events_key(id))
            .arg(record.version)
            .arg(&record.data)
            .arg(event)
            .arg(self.channel())
            .arg(id)
            .arg(millis(expire_after))
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.unavailable(e))?;
        self.changes.notify(id, record.version);
        Ok(())
    }

    pub async fn events_after(
        &self,
        id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(u64, String)>, StoreError> {
        let mut conn = self.connection().await?;
        let reply: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
            .arg(self.events_key(id))
            .arg(format!("({after}-1"))
            .arg("+")
            .arg("COUNT")
            .arg(limit.max(1))
            .query_async(&mut conn)
            .await
            .map_err(|e| self.unavailable(e))?;
        reply
            .ids
            .into_iter()
            .map(|entry| {
                let version = entry
                    .id
                    .split_once('-')
                    .and_then(|(v, _)| v.parse().ok())
                    .ok_or_else(|| StoreError::Corrupt(format!("event id {}", entry.id)))?;
                let event: String = entry.get("e").ok_or_else(|| {
                    StoreError::Corrupt(format!("event {} has no body", entry.id))
                })?;
                Ok((version, event))
            })
            .collect()
    }

    pub async fn load(&self, id: &str) -> Result<Option<Versioned>, StoreError> {
        let mut conn = self.connection().await?;
        let (version, data): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(self.game_key(id))
            .arg("v")
            .arg("d")
            .query_async(&mut conn)
            .await
            .map_err(|e| self.unavailable(e))?;
        match (version, data) {
            (Some(v), Some(data)) => {
                let version = v
                    .parse()
                    .map_err(|_| StoreError::Corrupt(format!("version {v:?} of game {id}")))?;
                Ok(Some(Versioned { version, data }))
            }
            _ => Ok(None),
        }
    }

    pub async fn compare_and_set(
        &self,
        id: &str,
        expected: u64,
        record: &Versioned,
        event: &str,
        extras: WriteExtras<'_>,
    ) -> Result<bool, StoreError> {
        let mut conn = self.connection().await?;
        let (answer_key, answer) = match extras.idempotent_answer {
            Some((key, answer)) => (self.answer_key(id, key), answer),
            None => (self.answer_key(id, "-"), ""),
        };
        let expire_ms = millis(extras.expire_after);
        let answer_ms = millis(IDEMPOTENCY_TTL.min(extras.expire_after));
        let done: i64 = self
            .script
            .key(self.game_key(id))
            .key(answer_key)
            .key(self.events_key(id))
            .arg(expected)
            .arg(record.version)
            .arg(&record.data)
            .arg(expire_ms)
            .arg(answer)
            .arg(answer_ms)
            .arg(event)
            .arg(self.channel())
            .arg(id)
            .arg(EVENT_LOG_LEN)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.unavailable(e))?;
        if done == 1 {
            self.changes.notify(id, record.version);
        }
        Ok(done == 1)
    }

    pub async fn idempotent_answer(
        &self,
        id: &str,
        key: &str,
    ) -> Result<Option<String>, StoreError> {
        let mut conn = self.connection().await?;
        conn.get(self.answer_key(id, key))
            .await
            .map_err(|e| self.unavailable(e))
    }

    fn lease_key(&self, id: &str) -> String {
        format!("{}:{{{id}}}:lease", self.prefix)
    }

    pub async fn try_lease(
        &self,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let mut conn = self.connection().await?;
        let taken: Option<String> = redis::cmd("SET")
            .arg(self.lease_key(id))
            .arg(owner)
            .arg("NX")
            .arg("PX")
            .arg(ttl.as_millis() as u64)
            .query_async(&mut conn)
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(taken.is_some())
    }

    pub async fn release_lease(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        let _: i64 = self
            .release
            .key(self.lease_key(id))
            .arg(owner)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(())
    }

    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(())
    }
}
