//! `pillarz keys`: make and revoke integrators' API keys in the Redis the replicas use.
//! A key is printed once, at creation; the store keeps only its digest.

use std::process::ExitCode;

use crate::service::quota::Quotas;
use crate::service::quota::api_key::{ApiKey, KeyRecord};
use crate::service::store::{RedisStore, StoreClock};

use super::CliError;

/// Make or revoke API keys (they need the Redis store: `--redis`).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
    /// The Redis the replicas use.
    #[arg(
        long = "redis",
        env = "PILLARZ_REDIS_URL",
        value_name = "URL",
        global = true
    )]
    redis_url: Option<String>,
    /// The replicas' key prefix.
    #[arg(
        long,
        env = "PILLARZ_REDIS_PREFIX",
        default_value = "pillarz",
        global = true
    )]
    redis_prefix: String,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Make a key; prints it (once) and its id.
    Create {
        /// Who the key is for.
        #[arg(long)]
        name: String,
        /// The key's quotas, as `--anon-quotas` of `pillarz serve` (default: ten times the
        /// anonymous defaults; classes not named keep that default), but for `keys`, which
        /// counts an address's key lookups and is refused here.
        #[arg(long, default_value = "")]
        quotas: String,
    },
    /// Revoke a key, given the key itself or its id (effective within 10 s everywhere).
    Revoke {
        /// `pzk_…`, or the 32-hex-digit id `create` printed.
        key: String,
    },
}

fn usage(message: impl Into<String>) -> CliError {
    CliError::Usage(message.into())
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let url = args.redis_url.ok_or_else(|| {
        usage("API keys live in Redis: pass --redis <URL> (or PILLARZ_REDIS_URL)")
    })?;
    // Validate everything before any I/O.
    let action = match args.action {
        Action::Create { name, quotas } => {
            let name = name.trim().to_string();
            if name.is_empty() || name.len() > 100 {
                return Err(usage("--name must be 1 to 100 characters"));
            }
            if quotas
                .split(',')
                .any(|class| class.trim().starts_with("keys="))
            {
                return Err(usage(
                    "keys counts an address's key lookups; a key has no such quota",
                ));
            }
            let quotas = Quotas::parse(&quotas, Quotas::KEY).map_err(usage)?;
            Ok((name, quotas))
        }
        Action::Revoke { key } => {
            let digest = match ApiKey::parse(&key) {
                Some(key) => key.digest(),
                None if key.len() == 32 && key.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    key.to_ascii_lowercase()
                }
                None => return Err(usage("give the key (pzk_…) or its 32-hex-digit id")),
            };
            Err(digest)
        }
    };
    let store = RedisStore::new(
        &url,
        &args.redis_prefix,
        None,
        StoreClock::with_skew(0),
        std::time::Duration::from_secs(3600),
    )
    .map_err(|e| usage(format!("--redis: {e}")))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)?;
    runtime.block_on(async {
        match action {
            Ok((name, quotas)) => {
                let key = ApiKey::generate();
                let record = KeyRecord {
                    name: name.clone(),
                    quotas: quotas.spec_over(Quotas::KEY),
                };
                store
                    .put_api_key(&key.digest(), &record)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                let digest = key.digest();
                // The output is the key's only copy: if it cannot be shown, the command
                // failed (see `output`), and the stored key should go.
                outln!(
                    "key:    {}\nid:     {digest}\nname:   {name}\nquotas: {quotas}",
                    key.expose()
                )
                .map_err(|e| {
                    anyhow::anyhow!(
                        "the key {digest} was stored, but it could not be shown ({e}): revoke \
                         it (`pillarz keys revoke {digest}`) and make another"
                    )
                })?;
                eprintln!("keep the key now: it is not stored and cannot be shown again");
                Ok(ExitCode::SUCCESS)
            }
            Err(digest) => {
                if store
                    .delete_api_key(&digest)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?
                {
                    outln!("revoked {digest}")?;
                    Ok(ExitCode::SUCCESS)
                } else {
                    eprintln!("no key with id {digest}");
                    Ok(ExitCode::from(super::EXIT_FAILURE))
                }
            }
        }
    })
}
