//! `pillarz serve` settings, from flags or environment variables, validated before any I/O.

use std::net::SocketAddr;
use std::time::Duration;

/// Run the HTTP service.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, env = "PILLARZ_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Keep games in Redis at this URL (e.g. redis://127.0.0.1:6379) instead of in memory.
    #[arg(long = "redis", env = "PILLARZ_REDIS_URL", value_name = "URL")]
    pub redis_url: Option<String>,
    /// Prefix of every Redis key (a namespace, so several deployments can share one Redis).
    #[arg(long, env = "PILLARZ_REDIS_PREFIX", default_value = "pillarz")]
    pub redis_prefix: String,
    /// Seconds a finished game is kept before it expires.
    #[arg(long, env = "PILLARZ_FINISHED_TTL_SECS", default_value_t = 7 * 24 * 3600)]
    pub finished_ttl_secs: u64,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "PILLARZ_BODY_LIMIT", default_value_t = 16 * 1024)]
    pub body_limit: usize,
    /// HTTP worker threads (0: one per core).
    #[arg(long, env = "PILLARZ_WORKERS", default_value_t = 0)]
    pub workers: usize,
    /// Log as JSON lines instead of human-readable text.
    #[arg(long, env = "PILLARZ_JSON_LOGS")]
    pub json_logs: bool,
}

/// Where games are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSettings {
    Memory,
    Redis { url: String, prefix: String },
}

/// Validated settings of the service.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    pub store: StoreSettings,
    pub finished_ttl: Duration,
    pub body_limit: usize,
    pub workers: usize,
    pub json_logs: bool,
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
                redis::Client::open(url.as_str()).map_err(|e| format!("--redis {url:?}: {e}"))?;
                StoreSettings::Redis {
                    url,
                    prefix: args.redis_prefix,
                }
            }
        };
        if args.finished_ttl_secs == 0 {
            return Err("--finished-ttl-secs must be at least 1".into());
        }
        if args.body_limit < 256 {
            return Err("--body-limit must be at least 256 bytes".into());
        }
        Ok(Settings {
            listen,
            store,
            finished_ttl: Duration::from_secs(args.finished_ttl_secs),
            body_limit: args.body_limit,
            workers: args.workers,
            json_logs: args.json_logs,
        })
    }

    /// Settings for tests: port 0 on loopback, memory store, defaults elsewhere.
    pub fn for_tests() -> Settings {
        Settings {
            listen: "127.0.0.1:0".parse().expect("valid"),
            store: StoreSettings::Memory,
            finished_ttl: Duration::from_secs(3600),
            body_limit: 16 * 1024,
            workers: 2,
            json_logs: false,
        }
    }
}
