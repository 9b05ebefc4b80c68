//! The Redis store.
//!
//! Per game `<prefix>:{<s>}:<id>:` followed by `g` (a hash: `v` version, `c` header, `s` live
//! part, `d` due time, `w` recent write ids, `x` when the game's keys run out, `i` present once
//! it has saved answers), `e` (the event log: a list with one `<version> <event>` line per
//! version, so version `v` is at index `v - 1`; a list rather than a stream, which would
//! preallocate 4 KB per game), `r` (the repetition keys, 8 bytes each, appended with `APPEND`;
//! only games that forbid repetition have one), `i` (saved idempotent answers) and `l` (the
//! engine seat's lease); and per shard `<prefix>:{<s>}:due`, a sorted set
//! of game ids by due time. `<s>` is the shard: the first two hex digits of the id. The hash
//! tag `{<s>}` puts a game's keys and its shard's index in one Redis Cluster slot, so every
//! script touches one slot only, and the index is updated in the same atomic step as the game;
//! 256 shards spread the games over a cluster's nodes.
//!
//! The log is the move list: a move's event carries the move, so nothing is kept twice, and a
//! write appends (`RPUSH`, `APPEND`) without reading what the game holds. A reader that holds
//! version `k` gets the live part and the events after `k` (and the keys added since); only a
//! reader that holds nothing gets the header and the whole log. So a script's work per move
//! does not grow with the game's length. (Games stored by earlier builds kept their moves in
//! `m`, now unused, and their keys in the field `r` of `g`: they are read as their field `r`
//! followed by the key `r`; and they had no `x`: see `WRITE`.)
//!
//! Connections are made on first use (one per thread that uses the store), not at start-up, so
//! the service starts (and reports not-ready) while Redis is down; redis-rs's
//! `ConnectionManager` (or, for a Redis Cluster, its cluster connection) then reconnects by
//! itself.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::watch;

use super::clock::{StoreClock, TOLERANCE_MS};
use super::listener::{self, Listener};
use super::{
    Changes, CreateOutcome, Creation, Known, Logged, Newer, ReadOutcome, StoreError, Write,
    WriteOutcome, renewal_slack,
};

/// The store's time in milliseconds, as every script computes it first.
const NOW: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
";

/// The answer to a reader holding version `known` (`''`: none) with `keys` repetition keys
/// (`''`: the game keeps none), when the game is at `v` (a newer version):
/// `{v, live, events, keys, header}` — the events from the reader's version on (its own
/// first, so that it can check that its copy is the store's) and the keys after the reader's,
/// the header `''`; or, for a reader holding nothing (or a version the store does not follow
/// from), everything, the header included.
const SINCE: &str = r"
local function since(g, e, r, known, keys, v)
  if known ~= '' and tonumber(known) < tonumber(v) then
    local added = ''
    local start = 0
    if keys ~= '' then
      start = tonumber(keys) * 8 - redis.call('HSTRLEN', g, 'r')
      if start >= 0 then added = redis.call('GETRANGE', r, start, -1) end
    end
    if start >= 0 then
      return {v, redis.call('HGET', g, 's') or '', redis.call('LRANGE', e, tonumber(known) - 1, -1),
              added, ''}
    end
  end
  local f = redis.call('HMGET', g, 'c', 's', 'r')
  return {v, f[2] or '', redis.call('LRANGE', e, 0, -1),
          (f[3] or '') .. (redis.call('GET', r) or ''), f[1] or ''}
end
";

/// A quota's count (GCRA, as `quota::gcra`, in microseconds of the store's clock). KEYS: the
/// caller's TAT. ARGV: emission µs, count, cost, and what to do: `0` spend if allowed
/// (`gcra::decide`), `1` charge work already done, even past the quota (`gcra::charge`), `2`
/// give back units spent for nothing (`gcra::refund`; a TAT already lapsed stays so). Answers
/// `{allowed, remaining, reset µs, retry-after µs}`; a refusal changes nothing. It runs when
/// Redis holds its `maxmemory` too (`allow-oom`): a count is one small key that lapses within
/// its window, and without it every counted request, reads too, would fail while games cannot
/// be written.
const SPEND: &str = r"#!lua flags=allow-oom
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = tonumber(ARGV[1])
local window = emission * tonumber(ARGV[2])
local units = emission * tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
local new_tat
if ARGV[4] == '2' then
  new_tat = math.max(tat - units, now)
else
  if tat < now then tat = now end
  new_tat = tat + units
  if ARGV[4] == '0' and new_tat - now > window then
    return {0, math.floor((window - math.min(tat - now, window)) / emission), tat - now,
            new_tat - now - window}
  end
end
if new_tat > now then
  redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX',
             math.ceil((new_tat - now) / 1000) + 1)
else
  redis.call('DEL', KEYS[1])
end
return {1, math.floor((window - (new_tat - now)) / emission), new_tat - now, 0}
";

/// What the quota script does with a count (its last argument).
#[derive(Clone, Copy)]
enum Count {
    Spend = 0,
    Charge = 1,
    Refund = 2,
}

/// Holds one of a caller's event-stream places: renews the lease of a stream that has one,
/// and gives one to a stream that has none (a new stream, or one whose lease was lost) if the
/// caller holds fewer than its maximum. KEYS: the caller's stream leases (a sorted set, score
/// = expiry in ms of the store's clock). ARGV: stream id, maximum, lease ms. Answers 1 (held)
/// or 0 (the caller is at its maximum without this stream). The set lives until its latest
/// lease ends: replicas with different heartbeats renew with different leases, and a short
/// one must not cut a long one. Like `SPEND`, it runs when Redis holds its `maxmemory`: a
/// caller's set holds at most its count of streams and lapses with their leases.
const HOLD_STREAM: &str = r"#!lua flags=allow-oom
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1])
   and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1
";

/// Readiness: a flagged script, which Redis before 7.0 cannot run (see `SPEND`).
const READY: &str = "#!lua flags=no-writes\nreturn 1";

/// The write (see `Write`). KEYS: game, events, answers, due index, history. ARGV: expected
/// version, version, live part, history key ('' if none), event, lifetime ms, answer slot (''
/// if none), answer value, write id, due time ('' if none), channel, id, writer's now,
/// tolerance ms, index lifetime ms, the writer's number of history keys ('' if none), renewal
/// slack ms. Answers `{code, now, ...}`: 0 gone, 1 applied, 2 saved answer (then the value), 3
/// conflict (then the game since the writer's version, as `since`), 4 skewed. Appends only: it
/// never reads the log or the history.
///
/// Each `redis.call` costs Redis about a microsecond, so a move makes as few as it can (eight
/// with an answer to save and a due time, nine with a history key): the keys' lifetimes are
/// renewed (`PEXPIRE`) only when `x`, the time they run out, is outside [now + lifetime, now +
/// lifetime + slack]; the due index with them, or when the game enters it; the history and the
/// answers when they come into being (the first key appended; the first answer, noted as `i` in
/// the game's hash). A game stored by an earlier build has no `x`: its keys are renewed by every
/// write, as that build did. (The answers stay in a hash of their own: as fields of the game's
/// hash, whose large values make it a hash table, each took four times the memory.)
const WRITE: &str = r"
local g = redis.call('HMGET', KEYS[1], 'v', 'w', 'x', 'd', 'i')
local v = g[1]
if not v then return {0, now} end
if ARGV[7] ~= '' then
  local saved = redis.call('HGET', KEYS[3], ARGV[7])
  if saved then return {2, now, saved} end
end
local w = g[2] or ''
if string.find(w, ARGV[9], 1, true) then return {1, now} end
if math.abs(now - tonumber(ARGV[13])) > tonumber(ARGV[14]) then return {4, now} end
if v ~= ARGV[1] then
  return {3, now, since(KEYS[1], KEYS[2], KEYS[5], ARGV[1], ARGV[16], v)}
end
local x = g[3]
local life = tonumber(ARGV[6])
local keep = life + tonumber(ARGV[17])
local renew = not x or tonumber(x) < now + life or tonumber(x) > now + keep
local answers = ARGV[7] ~= '' and not g[5]
local set = {'HSET', KEYS[1], 'v', ARGV[2], 's', ARGV[3], 'w', string.sub(ARGV[9] .. ' ' .. w, 1, 33)}
if ARGV[10] ~= '' then
  set[#set + 1] = 'd'
  set[#set + 1] = ARGV[10]
end
if x and renew then
  set[#set + 1] = 'x'
  set[#set + 1] = string.format('%.0f', now + keep)
end
if x and answers then
  set[#set + 1] = 'i'
  set[#set + 1] = '1'
end
redis.call(unpack(set))
if ARGV[10] ~= '' then
  redis.call('ZADD', KEYS[4], ARGV[10], ARGV[12])
  if renew or not g[4] then redis.call('PEXPIRE', KEYS[4], ARGV[15]) end
elseif g[4] then
  redis.call('HDEL', KEYS[1], 'd')
  redis.call('ZREM', KEYS[4], ARGV[12])
end
redis.call('RPUSH', KEYS[2], ARGV[2] .. ' ' .. ARGV[5])
if ARGV[16] ~= '' and ARGV[4] ~= '' then redis.call('APPEND', KEYS[5], ARGV[4]) end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[3], ARGV[7], ARGV[8]) end
if renew then
  redis.call('PEXPIRE', KEYS[1], keep)
  redis.call('PEXPIRE', KEYS[2], keep)
end
if ARGV[16] ~= '' and (renew or ARGV[16] == '0') then redis.call('PEXPIRE', KEYS[5], keep) end
if renew or answers then redis.call('PEXPIRE', KEYS[3], keep) end
redis.call('PUBLISH', ARGV[11], ARGV[12] .. ' ' .. ARGV[2])
return {1, now}
";

/// A read. KEYS: game, events, history. ARGV: the version the reader holds ('' if none), its
/// number of history keys ('' if none). Answers `{0, now}` gone, `{1, now}` unchanged,
/// `{2, now, since(...)}` newer.
const READ: &str = r"
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return {0, now} end
if v == ARGV[1] then return {1, now} end
return {2, now, since(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], v)}
";

/// A new game. KEYS: game, events, due index, history. ARGV: version, header, live, history,
/// event, lifetime ms, due ('' if none), channel, id, writer's now, tolerance ms, index
/// lifetime ms, renewal slack ms. Answers `{1, now}` created, `{4, now}` skewed. The game's
/// keys live its lifetime and the slack, until `x` (see `WRITE`). A game already there is this
/// create sent again (ids are random; a Redis Cluster client resends a script whose reply was
/// lost): it is answered as created and written once, or the log would start twice.
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return {1, now} end
if math.abs(now - tonumber(ARGV[10])) > tonumber(ARGV[11]) then return {4, now} end
local keep = tonumber(ARGV[6]) + tonumber(ARGV[13])
local set = {'HSET', KEYS[1], 'v', ARGV[1], 'c', ARGV[2], 's', ARGV[3],
             'x', string.format('%.0f', now + keep)}
if ARGV[7] ~= '' then
  set[#set + 1] = 'd'
  set[#set + 1] = ARGV[7]
  redis.call('ZADD', KEYS[3], ARGV[7], ARGV[9])
  redis.call('PEXPIRE', KEYS[3], ARGV[12])
end
redis.call(unpack(set))
if ARGV[4] ~= '' then redis.call('SET', KEYS[4], ARGV[4], 'PX', keep) end
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('RPUSH', KEYS[2], ARGV[1] .. ' ' .. ARGV[5])
redis.call('PEXPIRE', KEYS[2], keep)
redis.call('PUBLISH', ARGV[8], ARGV[9] .. ' ' .. ARGV[1])
return {1, now}
";

/// Takes the lease. KEYS: lease, due index, game. ARGV: owner, ttl ms, id.
const CLAIM: &str = r"
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
end
return 1
";

/// Deletes the lease only if it is still held by ARGV[1]. KEYS: lease.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

/// Puts the index entry of ARGV[1] back in line with its game. KEYS: game, due index.
const FIX_DUE: &str = r"
local d = redis.call('HGET', KEYS[1], 'd')
if d then redis.call('ZADD', KEYS[2], d, ARGV[1]) else redis.call('ZREM', KEYS[2], ARGV[1]) end
return 1
";

/// Moves ARGV[1]'s index entry to ARGV[3] if it is still due at ARGV[2] (a write since the
/// sweeper looked may have set a later due time, which stands). KEYS: due index.
const POSTPONE: &str = r"
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if at and tonumber(at) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
";

/// The number of shards (two hex digits of a game id).
const SHARDS: usize = 256;

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

struct Scripts {
    write: redis::Script,
    read: redis::Script,
    create: redis::Script,
    claim: redis::Script,
    release: redis::Script,
    fix_due: redis::Script,
    postpone: redis::Script,
    spend: redis::Script,
    hold_stream: redis::Script,
    ready: redis::Script,
}

impl Scripts {
    fn new() -> Scripts {
        let timed = |body: &str| redis::Script::new(&format!("{NOW}{body}"));
        let answering = |body: &str| redis::Script::new(&format!("{NOW}{SINCE}{body}"));
        Scripts {
            write: answering(WRITE),
            read: answering(READ),
            create: timed(CREATE),
            claim: timed(CLAIM),
            release: redis::Script::new(RELEASE),
            fix_due: redis::Script::new(FIX_DUE),
            postpone: redis::Script::new(POSTPONE),
            spend: redis::Script::new(SPEND),
            hold_stream: redis::Script::new(HOLD_STREAM),
            ready: redis::Script::new(READY),
        }
    }
}

thread_local! {
    /// Each thread's connections, by store: an HTTP worker is a single-threaded runtime, and
    /// a connection's driver runs where the connection was made, so with one connection per
    /// worker a request's commands never cross threads.
    static CONNECTIONS: RefCell<HashMap<u64, Connection>> = RefCell::new(HashMap::new());
}

/// Numbers the stores of this process (tests run several).
static STORES: AtomicU64 = AtomicU64::new(0);

pub struct RedisStore {
    backend: Backend,
    /// Follows the changes to the games watched here (subscribed on one node at a time, the
    /// next after a failure: any node of a cluster sees every publish).
    listener: Arc<Listener>,
    /// This store among the process's (the key of its connections).
    instance: u64,
    prefix: String,
    scripts: Scripts,
    changes: Arc<Changes>,
    clock: StoreClock,
    /// How long a shard's due index lives after its last update.
    index_lifetime: Duration,
    /// The URL's passwords, scrubbed from every error this store relays.
    secrets: Vec<String>,
}

/// A lifetime in milliseconds for `PEXPIRE`/`PX` (at least 1: Redis refuses 0).
fn millis(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

/// Reads the reply array of a script: its code, the store's time and the rest.
fn reply(value: redis::Value) -> Result<(i64, u64, Vec<redis::Value>), StoreError> {
    let corrupt = || StoreError::Corrupt("a script answered in an unexpected shape".into());
    let redis::Value::Array(mut items) = value else {
        return Err(corrupt());
    };
    if items.len() < 2 {
        return Err(corrupt());
    }
    let rest = items.split_off(2);
    let code: i64 = redis::from_redis_value_ref(&items[0]).map_err(|_| corrupt())?;
    let now: u64 = redis::from_redis_value_ref(&items[1]).map_err(|_| corrupt())?;
    Ok((code, now, rest))
}

/// The game of a `since` answer (`{v, live, events, keys, header}`) to a reader who held
/// `known`: the log after it, or (with a header) the whole game.
fn newer(known: Option<Known>, fields: &[redis::Value]) -> Result<Newer, StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt(format!("stored game: {what}"));
    let [redis::Value::Array(answer)] = fields else {
        return Err(corrupt("not an answer"));
    };
    let [v, live, events, history, header] = &answer[..] else {
        return Err(corrupt("wrong number of fields"));
    };
    let text = |value: &redis::Value, what: &str| -> Result<String, StoreError> {
        redis::from_redis_value_ref(value).map_err(|_| corrupt(what))
    };
    let version: u64 = text(v, "version")?
        .parse()
        .map_err(|_| corrupt("version"))?;
    let header = Some(text(header, "header")?).filter(|h| !h.is_empty());
    let (after, first) = match (&header, known) {
        (None, Some(known)) => (known.version, known.version),
        (None, None) => return Err(corrupt("no header for a reader who holds nothing")),
        (Some(_), _) => (0, 1),
    };
    let redis::Value::Array(events) = events else {
        return Err(corrupt("events"));
    };
    let mut events: Vec<String> = events
        .iter()
        .zip(first..)
        .map(|(line, expected)| {
            let line = text(line, "event")?;
            match line.split_once(' ') {
                Some((v, event)) if v.parse() == Ok(expected) => Ok(event.to_string()),
                _ => Err(corrupt(&format!(
                    "event line {line:?} at version {expected}"
                ))),
            }
        })
        .collect::<Result<_, _>>()?;
    let held = if after > 0 {
        if events.is_empty() {
            return Err(corrupt("the reader's own version is not in the log"));
        }
        Some(events.remove(0))
    } else {
        None
    };
    Ok(Newer::Logged(Logged {
        version,
        after,
        held,
        header,
        live: text(live, "live part")?,
        events,
        history: redis::from_redis_value_ref(history).map_err(|_| corrupt("history"))?,
    }))
}

/// A reader's number of history keys, as a script argument ('' when it holds none or its
/// game keeps none).
fn keys_arg(known: Option<Known>) -> String {
    known
        .and_then(|k| k.history_keys)
        .map(|n| n.to_string())
        .unwrap_or_default()
}

impl RedisStore {
    /// A store for `url` whose keys all start with `prefix` (a namespace: tests use their own).
    /// Several comma-separated URLs mean the nodes of a Redis Cluster. `rediss://` URLs use
    /// TLS (rustls), trusting `ca` (PEM) if given, else the system's trust store.
    pub fn new(
        url: &str,
        prefix: &str,
        ca: Option<&[u8]>,
        clock: StoreClock,
        index_lifetime: Duration,
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
        let changes = Arc::new(Changes::default());
        let secrets = crate::service::redact::secrets(url);
        Ok(RedisStore {
            backend,
            listener: Arc::new(Listener::new(
                if nodes.is_empty() {
                    vec![open(url)?]
                } else {
                    nodes
                        .iter()
                        .map(|node| open(node))
                        .collect::<Result<_, _>>()?
                },
                prefix,
                changes.clone(),
                secrets.clone(),
            )),
            instance: STORES.fetch_add(1, Ordering::Relaxed),
            prefix: prefix.to_string(),
            scripts: Scripts::new(),
            changes,
            clock,
            index_lifetime,
            secrets,
        })
    }

    pub fn clock(&self) -> &StoreClock {
        &self.clock
    }

    /// A Redis error as a store error, without the URL's password. `OOM` is Redis at its
    /// `maxmemory` under the `noeviction` policy: it refused a script's first write command,
    /// so nothing of the script was written, and the store is full rather than gone. (Redis
    /// judges only the first write command, and only one that may add memory: each unflagged
    /// script here writes first with `HSET`, `ZADD`, `SET` or `RPUSH`, or writes once.)
    fn failure(&self, e: redis::RedisError) -> StoreError {
        if e.code() == Some("OOM") {
            return StoreError::Full("Redis holds its maxmemory".into());
        }
        StoreError::Unavailable(crate::service::redact::scrub(&e.to_string(), &self.secrets))
    }

    fn channel(&self, id: &str) -> String {
        listener::channel(&self.prefix, id)
    }

    /// The key of `id`'s part `part` (`g`, `e`, `r`, `i`, `l`). Keys are joined, not
    /// `format!`ted: a request names three to six of them, and the formatting machinery cost
    /// about ten times as much as the copying (callgrind: ~1,400 instructions a key).
    fn key(&self, id: &str, part: &str) -> String {
        let shard = id.get(..2).unwrap_or("00");
        [&self.prefix, ":{", shard, "}:", id, ":", part].concat()
    }

    fn shard_index(&self, shard: &str) -> String {
        [&self.prefix, ":{", shard, "}:due"].concat()
    }

    fn index(&self, id: &str) -> String {
        self.shard_index(id.get(..2).unwrap_or("00"))
    }

    /// The change listener's task, to be spawned by the app.
    pub fn listener(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.listener.clone().run()
    }

    /// A receiver that changes whenever `id` gets a new version, on any replica.
    pub async fn watch(&self, id: &str) -> watch::Receiver<u64> {
        self.listener.watch(id).await
    }

    /// This thread's connection, made on first use.
    async fn connection(&self) -> Result<Connection, StoreError> {
        if let Some(connection) = CONNECTIONS.with(|c| c.borrow().get(&self.instance).cloned()) {
            return Ok(connection);
        }
        let connection = match &self.backend {
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
        .map_err(|e| self.failure(e))?;
        CONNECTIONS.with(|c| c.borrow_mut().insert(self.instance, connection.clone()));
        Ok(connection)
    }

    /// Runs a script that answers `{code, now, ...}` and notes the store's time.
    async fn run(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<(i64, Vec<redis::Value>), StoreError> {
        let mut conn = self.connection().await?;
        let value: redis::Value = invocation
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        let (code, now, rest) = reply(value)?;
        self.clock.observe(now);
        Ok((code, rest))
    }

    pub async fn create(&self, id: &str, c: Creation<'_>) -> Result<CreateOutcome, StoreError> {
        let mut invocation = self.scripts.create.prepare_invoke();
        invocation
            .key(self.key(id, "g"))
            .key(self.key(id, "e"))
            .key(self.index(id))
            .key(self.key(id, "r"))
            .arg(c.snapshot.version)
            .arg(&c.snapshot.header)
            .arg(&c.snapshot.live)
            .arg(&c.snapshot.history[..])
            .arg(c.event)
            .arg(millis(c.expire_after))
            .arg(c.due.map(|d| d.to_string()).unwrap_or_default())
            .arg(self.channel(id))
            .arg(id)
            .arg(c.now)
            .arg(TOLERANCE_MS)
            .arg(millis(self.index_lifetime))
            .arg(millis(renewal_slack(c.expire_after)));
        match self.run(&invocation).await?.0 {
            1 => {
                self.changes.notify(id, c.snapshot.version);
                Ok(CreateOutcome::Created)
            }
            4 => Ok(CreateOutcome::Skewed),
            code => Err(StoreError::Corrupt(format!("create answered {code}"))),
        }
    }

    pub async fn read(&self, id: &str, known: Option<Known>) -> Result<ReadOutcome, StoreError> {
        let mut invocation = self.scripts.read.prepare_invoke();
        invocation
            .key(self.key(id, "g"))
            .key(self.key(id, "e"))
            .key(self.key(id, "r"))
            .arg(known.map(|k| k.version.to_string()).unwrap_or_default())
            .arg(keys_arg(known));
        match self.run(&invocation).await? {
            (0, _) => Ok(ReadOutcome::Missing),
            (1, _) => Ok(ReadOutcome::Unchanged),
            (2, fields) => Ok(ReadOutcome::Current(newer(known, &fields)?)),
            (code, _) => Err(StoreError::Corrupt(format!("read answered {code}"))),
        }
    }

    pub async fn write(&self, id: &str, w: Write<'_>) -> Result<WriteOutcome, StoreError> {
        let (slot, value): (&[u8], &[u8]) = match w.answer {
            Some(a) => (a.slot, a.value),
            None => (b"", b""),
        };
        let mut invocation = self.scripts.write.prepare_invoke();
        invocation
            .key(self.key(id, "g"))
            .key(self.key(id, "e"))
            .key(self.key(id, "i"))
            .key(self.index(id))
            .key(self.key(id, "r"))
            .arg(w.expected.version)
            .arg(w.version)
            .arg(w.live)
            .arg(
                w.history_key
                    .map(|k| k.to_le_bytes().to_vec())
                    .unwrap_or_default(),
            )
            .arg(w.event)
            .arg(millis(w.expire_after))
            .arg(slot)
            .arg(value)
            .arg(w.write_id)
            .arg(w.due.map(|d| d.to_string()).unwrap_or_default())
            .arg(self.channel(id))
            .arg(id)
            .arg(w.now)
            .arg(TOLERANCE_MS)
            .arg(millis(self.index_lifetime))
            .arg(keys_arg(Some(w.expected)))
            .arg(millis(renewal_slack(w.expire_after)));
        match self.run(&invocation).await? {
            (0, _) => Ok(WriteOutcome::Conflict(None)),
            (1, _) => {
                self.changes.notify(id, w.version);
                Ok(WriteOutcome::Applied)
            }
            (2, saved) => Ok(WriteOutcome::Saved(
                saved
                    .first()
                    .and_then(|v| redis::from_redis_value_ref(v).ok())
                    .ok_or_else(|| StoreError::Corrupt("a saved answer".into()))?,
            )),
            (3, fields) => Ok(WriteOutcome::Conflict(Some(newer(
                Some(w.expected),
                &fields,
            )?))),
            (4, _) => Ok(WriteOutcome::Skewed),
            (code, _) => Err(StoreError::Corrupt(format!("write answered {code}"))),
        }
    }

    pub async fn saved_answer(&self, id: &str, slot: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let mut conn = self.connection().await?;
        redis::cmd("HGET")
            .arg(self.key(id, "i"))
            .arg(slot)
            .query_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))
    }

    pub async fn events_after(
        &self,
        id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(u64, String)>, StoreError> {
        let mut conn = self.connection().await?;
        let lines: Vec<String> = redis::cmd("LRANGE")
            .arg(self.key(id, "e"))
            .arg(after)
            .arg(after + limit.max(1) as u64 - 1)
            .query_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        lines
            .into_iter()
            .map(|line| {
                let (version, event) = line
                    .split_once(' ')
                    .and_then(|(v, e)| Some((v.parse().ok()?, e.to_string())))
                    .ok_or_else(|| StoreError::Corrupt(format!("event line {line:?}")))?;
                Ok((version, event))
            })
            .collect()
    }

    pub async fn due(&self, now: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        let conn = self.connection().await?;
        let per_shard = limit.div_ceil(SHARDS).max(4);
        let queries = (0..SHARDS).map(|shard| {
            let mut conn = conn.clone();
            let key = self.shard_index(&format!("{shard:02x}"));
            async move {
                redis::cmd("ZRANGEBYSCORE")
                    .arg(key)
                    .arg("-inf")
                    .arg(now)
                    .arg("WITHSCORES")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(per_shard)
                    .query_async::<Vec<(String, u64)>>(&mut conn)
                    .await
            }
        });
        let mut due = Vec::new();
        for result in futures_util::future::join_all(queries).await {
            due.extend(result.map_err(|e| self.failure(e))?);
        }
        // The earliest first, whichever shard they are in: a shard's place in the key space
        // gives its games no precedence.
        due.sort_unstable_by_key(|(_, at)| *at);
        due.truncate(limit);
        Ok(due.into_iter().map(|(id, _)| id).collect())
    }

    pub async fn postpone(&self, id: &str, due_by: u64, until: u64) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        let _: i64 = self
            .scripts
            .postpone
            .key(self.index(id))
            .arg(id)
            .arg(due_by)
            .arg(until)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        Ok(())
    }

    pub async fn fix_due(&self, id: &str) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        let _: i64 = self
            .scripts
            .fix_due
            .key(self.key(id, "g"))
            .key(self.index(id))
            .arg(id)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        Ok(())
    }

    /// Spends `cost` units of the quota `name` (GCRA, see `quota::gcra`; the same arithmetic
    /// in one script, on the store's clock, so every replica counts together).
    pub async fn spend(
        &self,
        name: &str,
        rate: crate::service::quota::gcra::Rate,
        cost: u64,
    ) -> Result<crate::service::quota::gcra::Decision, StoreError> {
        self.gcra(name, rate, cost, Count::Spend).await
    }

    /// Records `cost` units used, even past the quota (see `quota::gcra::charge`).
    pub async fn charge(
        &self,
        name: &str,
        rate: crate::service::quota::gcra::Rate,
        cost: u64,
    ) -> Result<(), StoreError> {
        self.gcra(name, rate, cost, Count::Charge).await.map(drop)
    }

    /// Gives back `cost` units spent for nothing (see `quota::gcra::refund`).
    pub async fn refund(
        &self,
        name: &str,
        rate: crate::service::quota::gcra::Rate,
        cost: u64,
    ) -> Result<(), StoreError> {
        self.gcra(name, rate, cost, Count::Refund).await.map(drop)
    }

    /// The quota script, in one of its three modes.
    async fn gcra(
        &self,
        name: &str,
        rate: crate::service::quota::gcra::Rate,
        cost: u64,
        count: Count,
    ) -> Result<crate::service::quota::gcra::Decision, StoreError> {
        let mut conn = self.connection().await?;
        let reply: Vec<i64> = self
            .scripts
            .spend
            .key(format!("{}:q:{name}", self.prefix))
            .arg(rate.emission_us())
            .arg(rate.count)
            .arg(cost.clamp(1, rate.count))
            .arg(count as u8)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        match reply[..] {
            [allowed, remaining, reset, retry] => Ok(crate::service::quota::gcra::Decision {
                allowed: allowed == 1,
                remaining: remaining.max(0) as u64,
                reset_us: reset.max(0) as u64,
                retry_after_us: retry.max(0) as u64,
            }),
            _ => Err(StoreError::Corrupt(format!("quota answered {reply:?}"))),
        }
    }

    fn streams_key(&self, caller: &str) -> String {
        format!("{}:st:{caller}", self.prefix)
    }

    /// Takes or keeps one of `caller`'s `max` event-stream places for `stream` (a lease of
    /// `lease`, renewed while the stream lives, so a dead replica's streams lapse by
    /// themselves); `false` if the caller holds its maximum without it.
    pub async fn hold_stream(
        &self,
        caller: &str,
        stream: &str,
        max: usize,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let mut conn = self.connection().await?;
        let held: i64 = self
            .scripts
            .hold_stream
            .key(self.streams_key(caller))
            .arg(stream)
            .arg(max)
            .arg(millis(lease))
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        Ok(held == 1)
    }

    pub async fn close_stream(&self, caller: &str, stream: &str) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        redis::cmd("ZREM")
            .arg(self.streams_key(caller))
            .arg(stream)
            .query_async::<()>(&mut conn)
            .await
            .map_err(|e| self.failure(e))
    }

    fn api_key_key(&self, digest: &str) -> String {
        format!("{}:apikey:{digest}", self.prefix)
    }

    pub async fn api_key(
        &self,
        digest: &str,
    ) -> Result<Option<crate::service::quota::api_key::KeyRecord>, StoreError> {
        let mut conn = self.connection().await?;
        let raw: Option<String> = redis::cmd("GET")
            .arg(self.api_key_key(digest))
            .query_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        raw.map(|raw| {
            serde_json::from_str(&raw)
                .map_err(|e| StoreError::Corrupt(format!("API key record: {e}")))
        })
        .transpose()
    }

    /// Stores a key's record (keys are configuration: they live until revoked).
    pub async fn put_api_key(
        &self,
        digest: &str,
        record: &crate::service::quota::api_key::KeyRecord,
    ) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        let json = serde_json::to_string(record).expect("a key record serializes");
        redis::cmd("SET")
            .arg(self.api_key_key(digest))
            .arg(json)
            .query_async::<()>(&mut conn)
            .await
            .map_err(|e| self.failure(e))
    }

    /// Deletes a key's record; answers whether there was one.
    pub async fn delete_api_key(&self, digest: &str) -> Result<bool, StoreError> {
        let mut conn = self.connection().await?;
        let removed: i64 = redis::cmd("DEL")
            .arg(self.api_key_key(digest))
            .query_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        Ok(removed == 1)
    }

    pub async fn claim(&self, id: &str, owner: &str, ttl: Duration) -> Result<bool, StoreError> {
        let mut conn = self.connection().await?;
        let taken: i64 = self
            .scripts
            .claim
            .key(self.key(id, "l"))
            .key(self.index(id))
            .key(self.key(id, "g"))
            .arg(owner)
            .arg(millis(ttl))
            .arg(id)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        Ok(taken == 1)
    }

    pub async fn release(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        let _: i64 = self
            .scripts
            .release
            .key(self.key(id, "l"))
            .arg(owner)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.failure(e))?;
        Ok(())
    }

    /// Whether Redis answers, and runs flagged scripts (7.0 or later): on an older one every
    /// counted request would fail, so the replica is not ready.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        let _: i64 = self
            .scripts
            .ready
            .prepare_invoke()
            .invoke_async(&mut conn)
            .await
            .map_err(|e| match e.code() {
                Some("ERR") => StoreError::Unavailable(format!(
                    "Redis runs no flagged scripts (pillarz needs Redis 7.0 or later): {}",
                    crate::service::redact::scrub(&e.to_string(), &self.secrets)
                )),
                _ => self.failure(e),
            })?;
        Ok(())
    }
}
