//! `pillarz serve` settings, from flags or environment variables, validated before any I/O.

use std::net::SocketAddr;
use std::time::Duration;

/// Run the HTTP service.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, env = "PILLARZ_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Keep games in Redis at this URL (e.g. redis://127.0.0.1:6379) instead of in memory;
    /// several comma-separated URLs are the nodes of a Redis Cluster.
    #[arg(long = "redis", env = "PILLARZ_REDIS_URL", value_name = "URL")]
    pub redis_url: Option<String>,
    /// A PEM file of the certificate authority to trust for `rediss://` (TLS) URLs, instead of
    /// the system's trust store.
    #[arg(long, env = "PILLARZ_REDIS_CA_FILE", value_name = "PEM")]
    pub redis_ca_file: Option<std::path::PathBuf>,
    /// Prefix of every Redis key (a namespace, so several deployments can share one Redis).
    #[arg(long, env = "PILLARZ_REDIS_PREFIX", default_value = "pillarz")]
    pub redis_prefix: String,
    /// Seconds a finished game is kept before it expires.
    #[arg(long, env = "PILLARZ_FINISHED_TTL_SECS", default_value_t = 7 * 24 * 3600)]
    pub finished_ttl_secs: u64,
    /// Seconds an unfinished game is kept after its last change (every change starts the
    /// period again).
    #[arg(long, env = "PILLARZ_IDLE_TTL_SECS", default_value_t = 7 * 24 * 3600)]
    pub idle_ttl_secs: u64,
    /// Plies after which the service ends a game as a draw (termination `move_limit`).
    #[arg(long, env = "PILLARZ_MAX_PLIES", default_value_t = 2000)]
    pub max_plies: u64,
    /// Most games the embedded store keeps; when full, new games get 503 store_full (ignored
    /// with --redis).
    #[arg(long, env = "PILLARZ_MEMORY_MAX_GAMES", default_value_t = 100_000)]
    pub memory_max_games: usize,
    /// Most mebibytes the embedded store's games may take (counted as they are written); when
    /// full, new games and moves get 503 store_full, as from Redis at its maxmemory (ignored
    /// with --redis).
    #[arg(long, env = "PILLARZ_MEMORY_MAX_MB", default_value_t = 1024)]
    pub memory_max_mb: usize,
    /// Event streams (`/events`) this replica serves at once; beyond that, 503 busy.
    #[arg(long, env = "PILLARZ_MAX_EVENT_STREAMS", default_value_t = 1000)]
    pub max_event_streams: usize,
    /// Seconds a client has to send a request's head, and again its body; slower requests
    /// are cut off (408 for a body).
    #[arg(long, env = "PILLARZ_REQUEST_TIMEOUT_SECS", default_value_t = 10)]
    pub request_timeout_secs: u64,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "PILLARZ_BODY_LIMIT", default_value_t = 16 * 1024)]
    pub body_limit: usize,
    /// HTTP worker threads (0: one per core).
    #[arg(long, env = "PILLARZ_WORKERS", default_value_t = 0)]
    pub workers: usize,
    /// Log as JSON lines instead of human-readable text.
    #[arg(long, env = "PILLARZ_JSON_LOGS")]
    pub json_logs: bool,
    /// Seconds between heartbeats on idle event streams.
    #[arg(long, env = "PILLARZ_EVENTS_HEARTBEAT_SECS", default_value_t = 15)]
    pub events_heartbeat_secs: u64,
    /// Seconds an event stream lasts at most; then it ends and the client resumes with
    /// `Last-Event-ID` (as browsers' EventSource does by itself).
    #[arg(long, env = "PILLARZ_EVENTS_MAX_LIFETIME_SECS", default_value_t = 3600)]
    pub events_max_lifetime_secs: u64,
    /// Seconds a client may take none of what it is sent: then its event stream ends, and its
    /// connection is dropped (TCP_USER_TIMEOUT: its receive window shut, or nothing
    /// acknowledged, for that long).
    #[arg(
        long,
        env = "PILLARZ_STALLED_CLIENT_TIMEOUT_SECS",
        default_value_t = 30
    )]
    pub stalled_client_timeout_secs: u64,
    /// Analyses that may run at once (0: one per core).
    #[arg(long, env = "PILLARZ_ANALYSIS_WORKERS", default_value_t = 0)]
    pub analysis_workers: usize,
    /// Analyses that may wait for a worker; beyond that requests get 503 + Retry-After.
    #[arg(long, env = "PILLARZ_ANALYSIS_QUEUE", default_value_t = 16)]
    pub analysis_queue: usize,
    /// Longest think time an analysis may ask for, in milliseconds.
    #[arg(long, env = "PILLARZ_ANALYSIS_MAX_MOVETIME_MS", default_value_t = 5000)]
    pub analysis_max_movetime_ms: u64,
    /// Deepest search an analysis may ask for, in plies.
    #[arg(long, env = "PILLARZ_ANALYSIS_MAX_DEPTH", default_value_t = 32)]
    pub analysis_max_depth: u32,
    /// Most nodes an analysis may search.
    #[arg(long, env = "PILLARZ_ANALYSIS_MAX_NODES", default_value_t = 20_000_000)]
    pub analysis_max_nodes: u64,
    /// Nice value of the threads that search (analyses, engine seats): 0 to 19, higher
    /// yields more. Requests then go first when the cores are busy (Linux; 0: as requests).
    #[arg(long, env = "PILLARZ_SEARCH_NICE", default_value_t = 10,
          value_parser = clap::value_parser!(i32).range(0..=19))]
    pub search_nice: i32,
    /// Engine seats thinking at once in this replica (0: one per core).
    #[arg(long, env = "PILLARZ_ENGINE_THREADS", default_value_t = 0)]
    pub engine_threads: usize,
    /// Of those, how many games whose both seats are engines may hold at once (0: half of
    /// --engine-threads, at least 1), so they never starve games with a person waiting.
    #[arg(long, env = "PILLARZ_ENGINE_ONLY_THREADS", default_value_t = 0)]
    pub engine_only_threads: usize,
    /// Megabytes of recently used games this replica keeps decoded (a cache: the store stays
    /// the truth; 0 turns it off).
    #[arg(long, env = "PILLARZ_CACHE_MB", default_value_t = 64)]
    pub cache_mb: u64,
    /// Origins whose web pages may call the API: `*` for any (no cookies are used, so this
    /// is safe), or a comma-separated list such as `https://app.example,http://localhost:3000`.
    #[arg(long, env = "PILLARZ_CORS_ORIGINS", default_value = "*")]
    pub cors_origins: String,
    /// Quotas of callers without an API key, counted per address (IPv6: per /64) across
    /// all replicas: `create=<n>/<s|min|h|d>,games=<n>/d,write=…,read=…,analysis=<ms>/…,
    /// keys=…,streams=<n>,concurrent=<n>` (classes not named keep their default; `keys`:
    /// lookups of API keys not known to be valid that find none, per address; streams and
    /// requests in flight are counted per replica), or `off` (no quotas at all, API keys
    /// included).
    #[arg(
        long,
        env = "PILLARZ_ANON_QUOTAS",
        default_value = "create=60/min,games=1000/d,write=20/s,read=100/s,analysis=60000/min,keys=60/min,streams=16,concurrent=32"
    )]
    pub anon_quotas: String,
    /// Proxies (comma-separated addresses or CIDRs, e.g. an ingress's pod network) whose
    /// `X-Forwarded-For` is believed: a caller's address is then the last one in that header
    /// that is not such a proxy. Without it, the caller is the connection's peer.
    #[arg(long, env = "PILLARZ_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
}

/// The analysis pool's size and the caps every analysis runs under.
#[derive(Debug, Clone, Copy)]
pub struct AnalysisSettings {
    pub workers: usize,
    pub queue: usize,
    pub caps: crate::engine::Caps,
}

/// Where games are kept.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreSettings {
    Memory,
    Redis { url: String, prefix: String },
}

/// Shows the Redis URL without its password.
impl std::fmt::Debug for StoreSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreSettings::Memory => f.write_str("Memory"),
            StoreSettings::Redis { url, prefix } => f
                .debug_struct("Redis")
                .field("url", &crate::service::redact::redact_url(url))
                .field("prefix", prefix)
                .finish(),
        }
    }
}

/// Validated settings of the service.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    pub store: StoreSettings,
    pub finished_ttl: Duration,
    /// The CA (PEM) trusted for `rediss://` URLs; the system's trust store when unset.
    pub redis_ca_file: Option<std::path::PathBuf>,
    /// How long an unfinished game is kept after its last change.
    pub idle_ttl: Duration,
    /// The service's ply cap.
    pub max_plies: u64,
    /// The embedded store's capacity, in games.
    pub memory_max_games: usize,
    /// The embedded store's capacity, in bytes.
    pub memory_max_bytes: usize,
    /// Concurrent event streams per replica.
    pub max_event_streams: usize,
    /// Time to receive a request's head, and again its body.
    pub request_timeout: Duration,
    pub body_limit: usize,
    pub workers: usize,
    pub json_logs: bool,
    pub events_heartbeat: Duration,
    /// How long an event stream lasts at most.
    pub events_max_lifetime: Duration,
    /// How long a client may take none of what it is sent before it is let go.
    pub stalled_client_timeout: Duration,
    pub analysis: AnalysisSettings,
    /// Nice value of the search threads (`search_priority`).
    pub search_nice: i32,
    /// Engine seats thinking at once.
    pub engine_threads: usize,
    /// Of those, the most that games without a person may hold.
    pub engine_only_threads: usize,
    /// The game cache's size in bytes.
    pub cache_bytes: u64,
    /// How far this process's clock is off the true time, in milliseconds: always 0 in
    /// service; tests set it to play a replica whose clock is wrong.
    pub clock_skew_ms: i64,
    /// Origins allowed to call the API from a browser.
    pub cors_origins: crate::service::cors::AllowedOrigins,
    /// Anonymous callers' quotas; `None`: no quotas.
    pub anon_quotas: Option<crate::service::quota::Quotas>,
    /// Proxies whose `X-Forwarded-For` names the caller.
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

impl Settings {
    pub fn from_args(args: ServeArgs) -> Result<Settings, String> {
        let listen: SocketAddr = args
            .listen
            .parse()
            .map_err(|e| format!("--listen {:?}: {e} (expected address:port)", args.listen))?;
        let store = match args.redis_url {
            None => StoreSettings::Memory,
            Some(url) => {
                let secrets = crate::service::redact::secrets(&url);
                for node in url.split(',').map(str::trim).filter(|u| !u.is_empty()) {
                    redis::Client::open(node).map_err(|e| {
                        crate::service::redact::scrub(
                            &format!(
                                "--redis {:?}: {e}",
                                crate::service::redact::redact_url(node)
                            ),
                            &secrets,
                        )
                    })?;
                }
                StoreSettings::Redis {
                    url,
                    prefix: args.redis_prefix,
                }
            }
        };
        if let Some(path) = &args.redis_ca_file {
            let pem = std::fs::read_to_string(path)
                .map_err(|e| format!("--redis-ca-file {}: {e}", path.display()))?;
            if !pem.contains("-----BEGIN CERTIFICATE-----") {
                return Err(format!(
                    "--redis-ca-file {}: no PEM certificate in it",
                    path.display()
                ));
            }
        }
        if args.finished_ttl_secs == 0 {
            return Err("--finished-ttl-secs must be at least 1".into());
        }
        if args.idle_ttl_secs == 0 {
            return Err("--idle-ttl-secs must be at least 1".into());
        }
        if args.max_plies == 0 {
            return Err("--max-plies must be at least 1".into());
        }
        if args.memory_max_games == 0 || args.memory_max_mb == 0 {
            return Err("--memory-max-games and --memory-max-mb must be at least 1".into());
        }
        if args.max_event_streams == 0
            || args.request_timeout_secs == 0
            || args.stalled_client_timeout_secs == 0
        {
            return Err("--max-event-streams, --request-timeout-secs and \
                 --stalled-client-timeout-secs must be at least 1"
                .into());
        }
        if args.body_limit < 256 {
            return Err("--body-limit must be at least 256 bytes".into());
        }
        if args.analysis_max_movetime_ms == 0
            || args.analysis_max_depth == 0
            || args.analysis_max_nodes == 0
        {
            return Err("the --analysis-max-* caps must be at least 1".into());
        }
        let cors_origins = crate::service::cors::AllowedOrigins::parse(&args.cors_origins)?;
        let anon_quotas = match args.anon_quotas.trim() {
            "off" => None,
            spec => Some(
                crate::service::quota::Quotas::parse(
                    spec,
                    crate::service::quota::Quotas::ANONYMOUS,
                )
                .map_err(|e| format!("--anon-quotas: {e}"))?,
            ),
        };
        let trusted_proxies = args
            .trusted_proxies
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| {
                p.parse::<ipnet::IpNet>()
                    .or_else(|_| p.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                    .map_err(|_| format!("--trusted-proxies {p:?}: not an address or a CIDR"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let engine_threads = if args.engine_threads == 0 {
            cores()
        } else {
            args.engine_threads
        };
        let engine_only_threads = if args.engine_only_threads == 0 {
            (engine_threads / 2).max(1)
        } else {
            args.engine_only_threads.min(engine_threads)
        };
        Ok(Settings {
            listen,
            store,
            finished_ttl: Duration::from_secs(args.finished_ttl_secs),
            redis_ca_file: args.redis_ca_file,
            idle_ttl: Duration::from_secs(args.idle_ttl_secs),
            max_plies: args.max_plies,
            memory_max_games: args.memory_max_games,
            memory_max_bytes: args.memory_max_mb.saturating_mul(1 << 20),
            max_event_streams: args.max_event_streams,
            request_timeout: Duration::from_secs(args.request_timeout_secs),
            body_limit: args.body_limit,
            workers: args.workers,
            json_logs: args.json_logs,
            events_heartbeat: Duration::from_secs(args.events_heartbeat_secs.max(1)),
            events_max_lifetime: Duration::from_secs(args.events_max_lifetime_secs.max(1)),
            stalled_client_timeout: Duration::from_secs(args.stalled_client_timeout_secs),
            analysis: AnalysisSettings {
                workers: if args.analysis_workers == 0 {
                    cores()
                } else {
                    args.analysis_workers
                },
                queue: args.analysis_queue,
                caps: crate::engine::Caps {
                    max_depth: args.analysis_max_depth,
                    max_nodes: args.analysis_max_nodes,
                    max_time_ms: args.analysis_max_movetime_ms,
                },
            },
            search_nice: args.search_nice,
            engine_threads,
            engine_only_threads,
            cache_bytes: args.cache_mb * 1024 * 1024,
            clock_skew_ms: 0,
            cors_origins,
            anon_quotas,
            trusted_proxies,
        })
    }

    /// Settings for tests: port 0 on loopback, memory store, defaults elsewhere.
    pub fn for_tests() -> Settings {
        Settings {
            listen: "127.0.0.1:0".parse().expect("valid"),
            store: StoreSettings::Memory,
            finished_ttl: Duration::from_secs(3600),
            redis_ca_file: None,
            idle_ttl: Duration::from_secs(24 * 3600),
            max_plies: 2000,
            memory_max_games: 10_000,
            memory_max_bytes: 256 << 20,
            max_event_streams: 1000,
            request_timeout: Duration::from_secs(10),
            body_limit: 16 * 1024,
            workers: 2,
            json_logs: false,
            events_heartbeat: Duration::from_secs(15),
            events_max_lifetime: Duration::from_secs(3600),
            stalled_client_timeout: Duration::from_secs(30),
            analysis: AnalysisSettings {
                workers: 2,
                queue: 4,
                caps: crate::engine::Caps {
                    max_depth: 32,
                    max_nodes: 20_000_000,
                    max_time_ms: 5000,
                },
            },
            search_nice: 10,
            engine_threads: 2,
            engine_only_threads: 1,
            cache_bytes: 16 * 1024 * 1024,
            clock_skew_ms: 0,
            cors_origins: crate::service::cors::AllowedOrigins::Any,
            anon_quotas: None,
            trusted_proxies: Vec::new(),
        }
    }
}
