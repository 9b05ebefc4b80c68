//! Quotas: how much one caller may ask of the service, shared by every replica.
//!
//! A caller is an integrator's API key ([`api_key`]) or, without one, the client's address.
//! Each caller has a rate per class of request — games created (a burst rate, and how many a
//! day, which bounds the games one caller makes the store hold), writes (moves and
//! resignations), reads, and milliseconds of analysis (an engine seat's thinking is charged
//! to its game's creator) — checked with GCRA ([`gcra`]) as one
//! atomic script per check in Redis (so all replicas count together), or in process with the
//! embedded store. Over quota, the answer is `429 rate_limited` with `Retry-After`; every
//! answer of a counted request carries the `RateLimit-Policy` and `RateLimit` headers of the
//! IETF draft (draft-ietf-httpapi-ratelimit-headers), so a client can pace itself. Event
//! streams are held, not requested, so they are bounded per caller by a count of leases (in
//! Redis, shared by the replicas; in process with the embedded store). A rate does not bound
//! how much a caller asks at once (a read is served while its quota is checked, and a burst
//! all arrives before the first refusal), so each replica also bounds a caller's requests in
//! flight ([`places`]). A key that is not known valid costs a lookup, so those lookups are
//! counted against the sender's address (`keys`) before they are made, and given back when
//! they find the key.

pub mod api_key;
pub mod gcra;
mod local;
pub mod places;
mod until_sent;

use std::fmt;
use std::net::IpAddr;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, ResponseError, web};

use super::error::{ApiError, ErrorCode};
use super::state::AppState;
use super::store::Store;
use api_key::{ApiKey, KeyCache};
use gcra::{Decision, Rate};
pub use local::LocalLimiter;
use places::{Counts, Place};
use until_sent::{UntilSent, until_sent};

/// The classes of counted requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// `POST /v1/games`, at a burst rate.
    Create,
    /// `POST /v1/games` again, counted over a day: a game lives on in the store long after
    /// its creation, so the burst rate alone would let one caller fill it.
    Games,
    /// Moves and resignations.
    Write,
    /// Reads of games, moves, clocks, boards and the catalog.
    Read,
    /// Analysis, counted in milliseconds of engine time asked for.
    Analysis,
    /// Lookups of API keys a replica does not know the answer for and has not seen valid,
    /// counted per address (a key's own count is never used) and given back when they find
    /// the key: a stream of random keys would cost the store a read each.
    Keys,
}

impl Class {
    pub const fn name(self) -> &'static str {
        match self {
            Class::Create => "create",
            Class::Games => "games",
            Class::Write => "write",
            Class::Read => "read",
            Class::Analysis => "analysis",
            Class::Keys => "keys",
        }
    }
}

/// One caller's quotas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    pub create: Rate,
    /// Games created per day.
    pub games: Rate,
    pub write: Rate,
    pub read: Rate,
    /// Milliseconds of analysis.
    pub analysis: Rate,
    /// Lookups of API keys not known to be valid that find none, per address (unused in a
    /// key's own quotas: `pillarz keys create` refuses it).
    pub keys: Rate,
    /// Event streams open at once, per replica.
    pub streams: usize,
    /// Requests in flight at once, per replica (from their admission to their answer).
    pub concurrent: usize,
}

const SECOND: u64 = 1_000_000;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;
const DAY: u64 = 24 * HOUR;

impl Quotas {
    /// Anonymous callers' defaults: enough for a person playing and a script analysing
    /// freely, not enough to fill the service from one address.
    pub const ANONYMOUS: Quotas = Quotas {
        create: Rate {
            count: 60,
            window_us: MINUTE,
        },
        games: Rate {
            count: 1000,
            window_us: DAY,
        },
        write: Rate {
            count: 20,
            window_us: SECOND,
        },
        read: Rate {
            count: 100,
            window_us: SECOND,
        },
        analysis: Rate {
            count: 60_000,
            window_us: MINUTE,
        },
        keys: Rate {
            count: 60,
            window_us: MINUTE,
        },
        streams: 16,
        concurrent: 32,
    };

    /// A new key's defaults: ten times an anonymous caller's.
    pub const KEY: Quotas = Quotas {
        create: Rate {
            count: 600,
            window_us: MINUTE,
        },
        games: Rate {
            count: 10_000,
            window_us: DAY,
        },
        write: Rate {
            count: 200,
            window_us: SECOND,
        },
        read: Rate {
            count: 1000,
            window_us: SECOND,
        },
        analysis: Rate {
            count: 600_000,
            window_us: MINUTE,
        },
        keys: Rate {
            count: 60,
            window_us: MINUTE,
        },
        streams: 160,
        concurrent: 320,
    };

    pub fn rate(&self, class: Class) -> Rate {
        match class {
            Class::Create => self.create,
            Class::Games => self.games,
            Class::Write => self.write,
            Class::Read => self.read,
            Class::Analysis => self.analysis,
            Class::Keys => self.keys,
        }
    }

    /// Parses `create=60/min,games=1000/d,write=20/s,read=100/s,analysis=60000/min,keys=60/min,
    /// streams=16,concurrent=32`; classes not named keep their value in `base`.
    pub fn parse(raw: &str, base: Quotas) -> Result<Quotas, String> {
        let mut quotas = base;
        for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("quota {part:?}: expected <class>=<count>/<s|min|h|d>"))?;
            if name == "streams" || name == "concurrent" {
                let count =
                    value.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                        format!("quota {part:?}: {name} is a count of at least 1")
                    })?;
                match name {
                    "streams" => quotas.streams = count,
                    _ => quotas.concurrent = count,
                }
                continue;
            }
            let (count, unit) = value
                .split_once('/')
                .ok_or_else(|| format!("quota {part:?}: expected <count>/<s|min|h|d>"))?;
            let count: u64 = count
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("quota {part:?}: the count is a whole number ≥ 1"))?;
            let window_us = match unit {
                "s" => SECOND,
                "min" => MINUTE,
                "h" => HOUR,
                "d" => DAY,
                _ => return Err(format!("quota {part:?}: the window is s, min, h or d")),
            };
            let rate = Rate { count, window_us };
            match name {
                "create" => quotas.create = rate,
                "games" => quotas.games = rate,
                "write" => quotas.write = rate,
                "read" => quotas.read = rate,
                "analysis" => quotas.analysis = rate,
                "keys" => quotas.keys = rate,
                _ => {
                    return Err(format!(
                        "quota {part:?}: the classes are create, games, write, read, analysis, \
                         keys, streams, concurrent"
                    ));
                }
            }
        }
        Ok(quotas)
    }

    /// The classes in which these quotas differ from `base`, in the syntax of
    /// [`Quotas::parse`] (`Quotas::parse(&q.spec_over(base), base) == Ok(q)`). A key's record
    /// keeps this, so that a replica that knows fewer classes still reads it while the new
    /// ones keep their defaults (a rolling upgrade).
    pub fn spec_over(&self, base: Quotas) -> String {
        let base = base.to_string();
        let base: Vec<&str> = base.split(',').collect();
        self.to_string()
            .split(',')
            .filter(|class| !base.contains(class))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl fmt::Display for Quotas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = |r: Rate| {
            let unit = match r.window_us {
                SECOND => "s",
                MINUTE => "min",
                HOUR => "h",
                _ => "d",
            };
            format!("{}/{unit}", r.count)
        };
        write!(
            f,
            "create={},games={},write={},read={},analysis={},keys={},streams={},concurrent={}",
            rate(self.create),
            rate(self.games),
            rate(self.write),
            rate(self.read),
            rate(self.analysis),
            rate(self.keys),
            self.streams,
            self.concurrent
        )
    }
}

const NO_SUCH_KEY: &str = "no such API key (revoked?)";
const MALFORMED_KEY: &str = "X-Api-Key must be \"pzk_\" and 64 hex digits";

/// Who is asking.
#[derive(Debug, Clone)]
pub struct Caller {
    /// What the caller's counts are kept under: `k:<key digest>` or `a:<address>`.
    pub id: String,
    pub quotas: Quotas,
}

/// The service's quota settings and its view of keys.
pub struct Limiter {
    /// Anonymous callers' quotas; `None` turns every check off.
    anonymous: Option<Quotas>,
    keys: KeyCache,
    local: LocalLimiter,
    /// Proxies whose `X-Forwarded-For` is believed.
    trusted_proxies: Vec<ipnet::IpNet>,
    /// Callers this replica saw refused, until their `Retry-After`.
    denials: Denials,
    /// Event streams open per caller (the embedded store's count; Redis keeps leases).
    streams: Counts,
    /// Requests in flight per caller on this replica.
    in_flight: Counts,
}

/// Refusals this replica answered, remembered until their `Retry-After`, so that a caller
/// hammering past its quota costs neither a store round trip nor the work it asks for.
/// Bounded: when full, expired entries go, and if none has expired the table starts over
/// (the store still refuses; only the shortcut is lost).
#[derive(Default)]
struct Denials {
    until: std::sync::Mutex<std::collections::HashMap<(String, &'static str), std::time::Instant>>,
}

impl Denials {
    const CAPACITY: usize = 10_000;

    fn check(&self, caller: &str, class: Class) -> Option<Decision> {
        let until = self.until.lock().expect("denials lock");
        let at = *until.get(&(caller.to_string(), class.name()))?;
        let left = at.checked_duration_since(std::time::Instant::now())?;
        Some(Decision {
            allowed: false,
            remaining: 0,
            reset_us: left.as_micros() as u64,
            retry_after_us: left.as_micros() as u64,
        })
    }

    fn remember(&self, caller: &str, class: Class, decision: &Decision) {
        let now = std::time::Instant::now();
        let mut until = self.until.lock().expect("denials lock");
        if until.len() >= Self::CAPACITY {
            until.retain(|_, at| *at > now);
            if until.len() >= Self::CAPACITY {
                until.clear();
            }
        }
        until.insert(
            (caller.to_string(), class.name()),
            now + std::time::Duration::from_micros(decision.retry_after_us),
        );
    }
}

/// A caller's place among its `streams`, given back when dropped (when the stream ends): a
/// count in this process with the embedded store, a lease in Redis (shared by every replica)
/// otherwise, renewed at each heartbeat so that a dead replica's places lapse by themselves.
pub enum StreamSlot {
    Local(Place),
    Shared {
        caller: String,
        stream: String,
        max: usize,
        lease: std::time::Duration,
        state: web::Data<AppState>,
    },
}

impl StreamSlot {
    /// Keeps a shared place (called at every heartbeat of its stream). A lease lost meanwhile
    /// (Redis restarted without its data, say) is taken again if the caller has room; `false`
    /// if it has not: the stream must end. A store that does not answer ends nothing.
    pub async fn renew(&self) -> bool {
        let StreamSlot::Shared {
            caller,
            stream,
            max,
            lease,
            state,
        } = self
        else {
            return true;
        };
        let Store::Redis(redis) = &state.store else {
            return true;
        };
        match redis.hold_stream(caller, stream, *max, *lease).await {
            Ok(held) => held,
            Err(e) => {
                tracing::debug!(error = %e, "stream lease not renewed");
                true
            }
        }
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        match self {
            // The place gives itself back.
            StreamSlot::Local(_) => {}
            StreamSlot::Shared {
                caller,
                stream,
                state,
                ..
            } => {
                let (caller, stream, state) = (
                    std::mem::take(caller),
                    std::mem::take(stream),
                    state.clone(),
                );
                // The lease lapses by itself if this never runs (the process is stopping).
                tokio::spawn(async move {
                    if let Store::Redis(redis) = &state.store {
                        let _ = redis.close_stream(&caller, &stream).await;
                    }
                });
            }
        }
    }
}

impl Limiter {
    pub fn new(anonymous: Option<Quotas>, trusted_proxies: Vec<ipnet::IpNet>) -> Limiter {
        Limiter {
            anonymous,
            trusted_proxies,
            keys: KeyCache::new(),
            local: LocalLimiter::new(),
            denials: Denials::default(),
            streams: Counts::default(),
            in_flight: Counts::default(),
        }
    }

    /// A place for one more event stream of the caller the middleware admitted `req` as
    /// (`None` with quotas off), or `429 rate_limited` when it holds its maximum already (on
    /// all replicas, with Redis). `heartbeat` is the stream's heartbeat period, which renews a
    /// shared place.
    pub async fn open_stream(
        &self,
        state: &web::Data<AppState>,
        req: &HttpRequest,
        heartbeat: std::time::Duration,
    ) -> Result<Option<StreamSlot>, ApiError> {
        let Some(caller) = admitted(req) else {
            return Ok(None);
        };
        let full = || {
            let mut error = ApiError::new(
                ErrorCode::RateLimited,
                format!(
                    "this caller already follows {} event streams, its maximum; close one",
                    caller.quotas.streams
                ),
            );
            error.retry_after = Some(5);
            error
        };
        match &state.store {
            Store::Redis(redis) => {
                let stream = uuid::Uuid::new_v4().simple().to_string();
                let lease = heartbeat * 3 + std::time::Duration::from_secs(5);
                let max = caller.quotas.streams;
                if !redis.hold_stream(&caller.id, &stream, max, lease).await? {
                    return Err(full());
                }
                Ok(Some(StreamSlot::Shared {
                    caller: caller.id,
                    stream,
                    max,
                    lease,
                    state: state.clone(),
                }))
            }
            Store::Memory(_) => match self.streams.take(&caller.id, caller.quotas.streams) {
                Some(place) => Ok(Some(StreamSlot::Local(place))),
                None => Err(full()),
            },
        }
    }

    /// The quotas of the key of `digest`, `None` if there is no such key: as this replica
    /// remembers it, or asked of the store (and remembered).
    async fn key_quotas(&self, store: &Store, digest: &str) -> Result<Option<Quotas>, ApiError> {
        if let Some(found) = self.keys.get(digest) {
            return Ok(found);
        }
        let found =
            match store.api_key(digest).await? {
                None => None,
                Some(record) => Some(Quotas::parse(&record.quotas, Quotas::KEY).map_err(|e| {
                    ApiError::new(ErrorCode::Internal, format!("a stored key: {e}"))
                })?),
            };
        self.keys.put(digest.to_string(), found);
        Ok(found)
    }

    /// The caller whose counts are kept under `id` (a game's payer), with its quotas as they
    /// are now; `None` with quotas off. A key revoked since counts as an anonymous caller.
    pub async fn caller_by_id(&self, store: &Store, id: &str) -> Result<Option<Caller>, ApiError> {
        let Some(anonymous) = self.anonymous else {
            return Ok(None);
        };
        let quotas = match id.strip_prefix("k:") {
            Some(digest) => self.key_quotas(store, digest).await?.unwrap_or(anonymous),
            None => anonymous,
        };
        Ok(Some(Caller {
            id: id.to_string(),
            quotas,
        }))
    }

    /// Spends `cost` units of `caller`'s `class`.
    pub async fn spend(
        &self,
        store: &Store,
        caller: &Caller,
        class: Class,
        cost: u64,
    ) -> Result<Decision, ApiError> {
        let rate = caller.quotas.rate(class);
        let name = count_name(class, caller);
        Ok(match store {
            Store::Memory(_) => self.local.spend(&name, rate, cost),
            Store::Redis(redis) => redis.spend(&name, rate, cost).await?,
        })
    }

    /// Records `cost` units of `class` that `caller` used (work measured once done).
    pub async fn charge(
        &self,
        store: &Store,
        caller: &Caller,
        class: Class,
        cost: u64,
    ) -> Result<(), ApiError> {
        let rate = caller.quotas.rate(class);
        let name = count_name(class, caller);
        match store {
            Store::Memory(_) => self.local.charge(&name, rate, cost),
            Store::Redis(redis) => redis.charge(&name, rate, cost).await?,
        }
        Ok(())
    }

    /// Gives back `cost` units of `caller`'s `class` spent for work that then did not happen
    /// (see [`gcra::refund`]).
    pub async fn refund(
        &self,
        store: &Store,
        caller: &Caller,
        class: Class,
        cost: u64,
    ) -> Result<(), ApiError> {
        let rate = caller.quotas.rate(class);
        let name = count_name(class, caller);
        match store {
            Store::Memory(_) => self.local.refund(&name, rate, cost),
            Store::Redis(redis) => redis.refund(&name, rate, cost).await?,
        }
        Ok(())
    }
}

/// What `caller`'s count of `class` is kept under.
fn count_name(class: Class, caller: &Caller) -> String {
    format!("{}:{}", class.name(), caller.id)
}

/// The caller's address: the peer, unless the peer is a trusted proxy; then the last address
/// of `X-Forwarded-For` (which each proxy appends to) that is not a trusted proxy — earlier
/// entries were written by the client itself and prove nothing.
fn client_address(req: &HttpRequest, trusted: &[ipnet::IpNet]) -> Option<IpAddr> {
    let peer = req.peer_addr()?.ip();
    let forwarded: Vec<&str> = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect();
    Some(forwarded_caller(peer, &forwarded, trusted))
}

/// [`client_address`] of a request from `peer` with the `X-Forwarded-For` entries
/// `forwarded`. They are read from the right, the nearest hop first, past the trusted
/// proxies: the first one that is not trusted is the caller. An entry that is not an address
/// (with or without a port: `198.51.100.7:4711`, `[2001:db8::1]:4711`) ends the walk, and the
/// caller is the last hop known, for whatever is left of it was not written by a proxy this
/// replica trusts to write addresses. When every hop is trusted, the caller is the first of
/// them, the farthest one the proxies vouch for.
fn forwarded_caller(peer: IpAddr, forwarded: &[&str], trusted: &[ipnet::IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let mut nearest = peer;
    for entry in forwarded.iter().rev() {
        let entry = entry.trim();
        let Some(ip) = entry
            .parse::<IpAddr>()
            .ok()
            .or_else(|| entry.parse::<std::net::SocketAddr>().ok().map(|a| a.ip()))
        else {
            return nearest;
        };
        if !is_trusted(&ip) {
            return ip;
        }
        nearest = ip;
    }
    nearest
}

/// IPv6 callers are counted per /64 (one subscriber's usual allocation), IPv4 per address.
fn canonical(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

fn bad_key(detail: &str) -> ApiError {
    ApiError::new(ErrorCode::BadApiKey, detail)
}

/// The `RateLimit-Policy` and `RateLimit` headers of a decision.
fn headers(class: Class, rate: Rate, decision: &Decision) -> [(HeaderName, HeaderValue); 2] {
    let secs = |us: u64| us.div_ceil(SECOND);
    let name = class.name();
    let policy = format!("\"{name}\";q={};w={}", rate.count, rate.window_us / SECOND);
    let state = format!(
        "\"{name}\";r={};t={}",
        decision.remaining,
        secs(decision.reset_us)
    );
    [
        (
            HeaderName::from_static("ratelimit-policy"),
            HeaderValue::from_str(&policy).expect("ASCII"),
        ),
        (
            HeaderName::from_static("ratelimit"),
            HeaderValue::from_str(&state).expect("ASCII"),
        ),
    ]
}

/// A request let through: who asked (`None` with quotas off) and the headers to add to its
/// answer; its place among the caller's requests in flight is held as long as the admission.
pub struct Admission {
    pub caller: Option<Caller>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    _in_flight: Option<Place>,
}

/// A place among `caller`'s requests in flight on this replica, if it holds fewer than its
/// maximum.
fn in_flight(state: &AppState, caller: &Caller) -> Option<Place> {
    state
        .quotas
        .in_flight
        .take(&caller.id, caller.quotas.concurrent)
}

/// The `429` for a caller with its maximum of requests in flight.
fn too_many_in_flight(caller: &Caller) -> HttpResponse {
    super::metrics::METRICS
        .rate_limited
        .with_label_values(&["concurrent"])
        .inc();
    let mut error = ApiError::new(
        ErrorCode::RateLimited,
        format!(
            "this caller already has {} requests in flight here, its maximum; wait for their \
             answers",
            caller.quotas.concurrent
        ),
    );
    error.retry_after = Some(1);
    error.error_response()
}

/// The `429` for a refusal of `class`.
fn refusal(class: Class, rate: Rate, decision: &Decision) -> HttpResponse {
    super::metrics::METRICS
        .rate_limited
        .with_label_values(&[class.name()])
        .inc();
    let detail = match class {
        Class::Keys => keys_refused(rate, decision),
        _ => format!(
            "over the {} quota of {} per {} s; try again in {} ms",
            class.name(),
            rate.count,
            rate.window_us / SECOND,
            decision.retry_after_us.div_ceil(1000)
        ),
    };
    let mut error = ApiError::new(ErrorCode::RateLimited, detail);
    error.retry_after = Some(decision.retry_after_us.div_ceil(SECOND).max(1) as u32);
    let mut response = error.error_response();
    for (name, value) in headers(class, rate, decision) {
        response.headers_mut().insert(name, value);
    }
    response
}

/// Why keys from an address over its `keys` quota are not looked up.
fn keys_refused(rate: Rate, decision: &Decision) -> String {
    format!(
        "this address had more unknown API keys looked up than its quota of {} per {} s; \
         keys not known here are not checked for {} ms",
        rate.count,
        rate.window_us / SECOND,
        decision.retry_after_us.div_ceil(1000)
    )
}

/// The caller of `req`: its key's, if it sends one, else its address (`None` when quotas are
/// off); or the answer to give instead.
///
/// Looking up a key this replica does not know to be valid costs the store a read, so it
/// first spends one of its address's `keys`: past them, such keys are refused with `429`
/// before any lookup, and the count is shared by the replicas. A lookup that finds a key
/// gives its unit back, and a key this replica has seen valid is not counted again, so an
/// integrator's keys are not refused for the address they share.
async fn caller(state: &AppState, req: &HttpRequest) -> Result<Option<Caller>, HttpResponse> {
    let limiter = &state.quotas;
    let Some(anonymous) = limiter.anonymous else {
        return Ok(None);
    };
    let address = || Caller {
        id: format!(
            "a:{}",
            client_address(req, &limiter.trusted_proxies)
                .map_or_else(|| "unknown".to_string(), canonical)
        ),
        quotas: anonymous,
    };
    let Some(raw) = req.headers().get(api_key::HEADER) else {
        return Ok(Some(address()));
    };
    let digest = raw
        .to_str()
        .ok()
        .and_then(ApiKey::parse)
        .ok_or_else(|| bad_key(MALFORMED_KEY).error_response())?
        .digest();
    let mut found = limiter.keys.get(&digest);
    let mut turn = None;
    if found.is_none() {
        // One request at a time looks a key up: those that waited for it read its answer.
        turn = limiter.keys.turn(&digest).await;
        found = limiter.keys.get(&digest);
    }
    match found {
        Some(Some(quotas)) => return Ok(Some(key_caller(&digest, quotas))),
        // Known unknown: no lookup, so not counted (and a revoked key keeps hearing so).
        Some(None) => return Err(bad_key(NO_SUCH_KEY).error_response()),
        None => {}
    }
    let counted = if limiter.keys.was_valid(&digest) {
        None
    } else {
        let address = address();
        let decision = decide_unless_known(state, &address, Class::Keys, 1)
            .await
            .map_err(|e| e.error_response())?;
        if !decision.allowed {
            return Err(refusal(Class::Keys, address.quotas.keys, &decision));
        }
        let shown = headers(Class::Keys, address.quotas.keys, &decision);
        Some((address, shown))
    };
    let looked_up = limiter.key_quotas(&state.store, &digest).await;
    drop(turn);
    match looked_up {
        Ok(Some(quotas)) => {
            if let Some((address, _)) = counted
                && let Err(error) = limiter.refund(&state.store, &address, Class::Keys, 1).await
            {
                // The unit stays spent: the key is served all the same.
                tracing::warn!(%error, "a valid key's lookup was not given back");
            }
            Ok(Some(key_caller(&digest, quotas)))
        }
        Ok(None) => {
            let mut response = bad_key(NO_SUCH_KEY).error_response();
            for (name, value) in counted.into_iter().flat_map(|(_, headers)| headers) {
                response.headers_mut().insert(name, value);
            }
            Err(response)
        }
        Err(error) => Err(error.error_response()),
    }
}

fn key_caller(digest: &str, quotas: Quotas) -> Caller {
    Caller {
        id: format!("k:{digest}"),
        quotas,
    }
}

/// The caller the quota middleware admitted `req` as (`None` with quotas off, or on a route
/// the middleware does not count: only call this behind it).
fn admitted(req: &HttpRequest) -> Option<Caller> {
    req.extensions().get::<Caller>().cloned()
}

/// The `429` if this replica already knows `caller` to be over its `class` quota (answered
/// without asking the store).
fn known_refusal(state: &AppState, caller: &Caller, class: Class) -> Option<HttpResponse> {
    let decision = state.quotas.denials.check(&caller.id, class)?;
    Some(refusal(class, caller.quotas.rate(class), &decision))
}

/// Who `req` is, and whether this replica already knows it is over its `class` quota (then
/// the `429`, answered without asking the store).
async fn identify(
    state: &AppState,
    req: &HttpRequest,
    class: Class,
) -> Result<Option<Caller>, HttpResponse> {
    let caller = caller(state, req).await?;
    match caller.as_ref().and_then(|c| known_refusal(state, c, class)) {
        Some(refused) => Err(refused),
        None => Ok(caller),
    }
}

/// Spends `cost` of `caller`'s `class`, remembering a refusal until its `Retry-After`.
async fn decide(
    state: &AppState,
    caller: &Caller,
    class: Class,
    cost: u64,
) -> Result<Decision, ApiError> {
    let limiter = &state.quotas;
    let decision = limiter.spend(&state.store, caller, class, cost).await?;
    if !decision.allowed {
        limiter.denials.remember(&caller.id, class, &decision);
    }
    Ok(decision)
}

/// The refusal this replica remembers for `caller`'s `class`, or else [`decide`].
async fn decide_unless_known(
    state: &AppState,
    caller: &Caller,
    class: Class,
    cost: u64,
) -> Result<Decision, ApiError> {
    match state.quotas.denials.check(&caller.id, class) {
        Some(known) => Ok(known),
        None => decide(state, caller, class, cost).await,
    }
}

/// Spends `cost` of `caller`'s `class`: the headers for the answer, or the `429`.
async fn spend(
    state: &AppState,
    caller: &Caller,
    class: Class,
    cost: u64,
) -> Result<Vec<(HeaderName, HeaderValue)>, HttpResponse> {
    let decision = decide(state, caller, class, cost)
        .await
        .map_err(|e| e.error_response())?;
    let rate = caller.quotas.rate(class);
    if decision.allowed {
        return Ok(headers(class, rate, &decision).into());
    }
    Err(refusal(class, rate, &decision))
}

/// How long `caller` must wait for analysis time (at least 1 ms of it), `None` if it has some
/// now: for thinking it pays for that no request of its own waits on (an engine seat of a
/// game it created); the time is charged once known, as for an analysis. A store that cannot
/// answer counts as a second's wait.
pub async fn analysis_wait(state: &AppState, caller: &Caller) -> Option<std::time::Duration> {
    let Ok(decision) = decide_unless_known(state, caller, Class::Analysis, 1).await else {
        return Some(std::time::Duration::from_secs(1));
    };
    (!decision.allowed).then(|| std::time::Duration::from_micros(decision.retry_after_us))
}

/// Checks `class` for `req`, on a route the middleware does not count: the admission (with
/// the request's place in flight), or the `429` (or `401`) to answer instead.
pub async fn admit(
    state: &AppState,
    req: &HttpRequest,
    class: Class,
    cost: u64,
) -> Result<Admission, HttpResponse> {
    let Some(caller) = identify(state, req, class).await? else {
        return Ok(Admission {
            caller: None,
            headers: Vec::new(),
            _in_flight: None,
        });
    };
    let place = in_flight(state, &caller).ok_or_else(|| too_many_in_flight(&caller))?;
    let headers = spend(state, &caller, class, cost).await?;
    Ok(Admission {
        caller: Some(caller),
        headers,
        _in_flight: Some(place),
    })
}

/// Checks one more `class` for a request the middleware admitted already (which holds its
/// place in flight): who asked (`None` with quotas off) and the headers to add to the answer
/// (the middleware adds its own class's to them), or the `429` to answer instead.
pub async fn admit_also(
    state: &AppState,
    req: &HttpRequest,
    class: Class,
    cost: u64,
) -> Result<(Option<Caller>, Vec<(HeaderName, HeaderValue)>), HttpResponse> {
    let Some(caller) = admitted(req) else {
        return Ok((None, Vec::new()));
    };
    if let Some(refused) = known_refusal(state, &caller, class) {
        return Err(refused);
    }
    let headers = spend(state, &caller, class, cost).await?;
    Ok((Some(caller), headers))
}

/// `first` and `then` as one header value: the `RateLimit` headers are lists, one item per
/// policy. When both are of the same policy (a handler that charged its own class more,
/// after the middleware's charge), `then` alone, the later state.
fn list(first: &HeaderValue, then: &HeaderValue) -> HeaderValue {
    fn policy(value: &HeaderValue) -> Option<&[u8]> {
        value.as_bytes().split(|&b| b == b';').next()
    }
    if policy(first) == policy(then) {
        return then.clone();
    }
    let mut bytes = first.as_bytes().to_vec();
    bytes.extend_from_slice(b", ");
    bytes.extend_from_slice(then.as_bytes());
    HeaderValue::from_bytes(&bytes).unwrap_or_else(|_| first.clone())
}

/// Middleware of a resource whose requests count as `class` (`None`: not counted).
///
/// A read is served while its quota is checked (both take one round trip, so a read still
/// costs one round trip of latency), and its answer is replaced by the `429` if the check
/// refuses; a caller this replica saw refused is refused at once, without being served, until
/// its `Retry-After`. Creations and writes are checked first: a `429` means nothing happened.
pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
    class: Option<Class>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, UntilSent>>, actix_web::Error> {
    let Some(class) = class else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let state = req
        .app_data::<web::Data<AppState>>()
        .expect("the app state is registered")
        .clone();
    let http = req.request().clone();
    let refuse = |res: ServiceResponse| {
        res.map_body(|_, body| until_sent(body, None))
            .map_into_right_body()
    };
    let caller = match identify(&state, &http, class).await {
        Ok(Some(caller)) => caller,
        Ok(None) => return Ok(next.call(req).await?.map_into_left_body()),
        Err(refused) => return Ok(refuse(req.into_response(refused))),
    };
    // Held until the answer is sent ([`until_sent`]).
    let Some(place) = in_flight(&state, &caller) else {
        let refused = too_many_in_flight(&caller);
        return Ok(refuse(req.into_response(refused)));
    };
    req.extensions_mut().insert(caller.clone());
    let (spent, res) = if class == Class::Read {
        let (spent, res) =
            futures_util::future::join(spend(&state, &caller, class, 1), next.call(req)).await;
        (spent, res?)
    } else {
        match spend(&state, &caller, class, 1).await {
            Ok(headers) => (Ok(headers), next.call(req).await?),
            Err(refused) => return Ok(refuse(req.into_response(refused))),
        }
    };
    match spent {
        Ok(headers) => {
            let mut res = res;
            // A handler that counted another class (and perhaps refused it) keeps its items.
            for (name, value) in headers {
                let value = match res.headers().get(&name) {
                    Some(theirs) => list(&value, theirs),
                    None => value,
                };
                res.headers_mut().insert(name, value);
            }
            Ok(res
                .map_body(|_, body| until_sent(body, Some(place)))
                .map_into_right_body())
        }
        Err(refused) => Ok(refuse(ServiceResponse::new(http, refused))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caller_is_the_nearest_hop_no_trusted_proxy_vouches_for() {
        let trusted: Vec<ipnet::IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let proxy: IpAddr = "10.0.0.2".parse().unwrap();
        let caller = |peer: IpAddr, header: &str| {
            let entries: Vec<&str> = header.split(',').collect();
            forwarded_caller(peer, &entries, &trusted).to_string()
        };
        // An untrusted peer is the caller, whatever it says.
        assert_eq!(caller("192.0.2.9".parse().unwrap(), "1.2.3.4"), "192.0.2.9");
        // Through a proxy: the nearest entry it did not write itself.
        assert_eq!(caller(proxy, "1.2.3.4, 198.51.100.7"), "198.51.100.7");
        assert_eq!(
            caller(proxy, "1.2.3.4, 198.51.100.7, 10.0.0.9"),
            "198.51.100.7"
        );
        // With ports, as some proxies write them.
        assert_eq!(caller(proxy, "1.2.3.4, 198.51.100.7:4711"), "198.51.100.7");
        assert_eq!(caller(proxy, "[2001:db8::1]:4711"), "2001:db8::1");
        // Something that is no address ends the walk at the last hop known: what is left of
        // it was not written by a trusted proxy.
        assert_eq!(caller(proxy, "1.2.3.4, garbage"), "10.0.0.2");
        assert_eq!(caller(proxy, "1.2.3.4, unknown, 10.0.0.9"), "10.0.0.9");
        // Every hop trusted: the farthest; no header: the proxy itself.
        assert_eq!(caller(proxy, "10.1.1.1, 10.0.0.9"), "10.1.1.1");
        assert_eq!(caller(proxy, ""), "10.0.0.2");
    }

    #[test]
    fn quotas_parse_over_a_base_and_print_back() {
        let q = Quotas::parse(
            "create=5/s, analysis=1000/min,streams=2,games=7/d",
            Quotas::ANONYMOUS,
        )
        .unwrap();
        assert_eq!(
            q.create,
            Rate {
                count: 5,
                window_us: SECOND
            }
        );
        assert_eq!(q.analysis.count, 1000);
        assert_eq!(q.streams, 2);
        assert_eq!(q.concurrent, Quotas::ANONYMOUS.concurrent);
        assert_eq!(
            Quotas::parse("concurrent=3", Quotas::KEY)
                .unwrap()
                .concurrent,
            3
        );
        assert_eq!(
            q.games,
            Rate {
                count: 7,
                window_us: DAY
            }
        );
        assert_eq!(q.read, Quotas::ANONYMOUS.read);
        assert_eq!(Quotas::parse(&q.to_string(), Quotas::KEY), Ok(q));
        let spec = q.spec_over(Quotas::ANONYMOUS);
        assert_eq!(spec, "create=5/s,games=7/d,analysis=1000/min,streams=2");
        assert_eq!(Quotas::parse(&spec, Quotas::ANONYMOUS), Ok(q));
        assert_eq!(Quotas::KEY.spec_over(Quotas::KEY), "");
        for bad in [
            "create",
            "create=0/s",
            "create=5/day",
            "games=5/week",
            "moves=5/s",
            "streams=0",
            "concurrent=0",
        ] {
            assert!(Quotas::parse(bad, Quotas::ANONYMOUS).is_err(), "{bad}");
        }
    }

    #[test]
    fn ipv6_callers_are_counted_per_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(canonical(a), canonical(b));
        assert_eq!(canonical("::ffff:10.0.0.1".parse().unwrap()), "10.0.0.1");
    }
}
