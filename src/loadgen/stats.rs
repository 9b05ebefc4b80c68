//! Latency histograms and counts per endpoint, and the final report.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;

#[derive(Default)]
pub struct Stats {
    routes: Mutex<BTreeMap<&'static str, Route>>,
}

struct Route {
    latency: Histogram<u64>,
    statuses: BTreeMap<u16, u64>,
}

impl Stats {
    /// Records one request (`status` 0 for a network error).
    pub fn record(&self, route: &'static str, status: u16, took: Duration) {
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        let entry = routes.entry(route).or_insert_with(|| Route {
            latency: Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid bounds"),
            statuses: BTreeMap::new(),
        });
        let _ = entry.latency.record(took.as_micros().max(1) as u64);
        *entry.statuses.entry(status).or_default() += 1;
    }

    pub fn report(
        &self,
        elapsed: Duration,
        games: usize,
        moves: usize,
        lost: usize,
        duplicated: usize,
        illegal: usize,
    ) -> Report {
        let routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        let secs = elapsed.as_secs_f64();
        Report {
            secs,
            games,
            moves,
            moves_per_sec: moves as f64 / secs,
            lost,
            duplicated,
            illegal,
            cpu: Vec::new(),
            endpoints: routes
                .iter()
                .map(|(name, r)| EndpointReport {
                    name: name.to_string(),
                    requests: r.latency.len(),
                    per_sec: r.latency.len() as f64 / secs,
                    p50_ms: r.latency.value_at_quantile(0.50) as f64 / 1000.0,
                    p95_ms: r.latency.value_at_quantile(0.95) as f64 / 1000.0,
                    p99_ms: r.latency.value_at_quantile(0.99) as f64 / 1000.0,
                    errors: r
                        .statuses
                        .iter()
                        .filter(|(s, _)| !(200..300).contains(*s))
                        .map(|(_, n)| n)
                        .sum(),
                    statuses: r.statuses.clone(),
                })
                .collect(),
        }
    }
}

pub struct EndpointReport {
    pub name: String,
    pub requests: u64,
    pub per_sec: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    /// Network errors and every answer that is not a 2xx.
    pub errors: u64,
    pub statuses: BTreeMap<u16, u64>,
}

pub struct Report {
    pub secs: f64,
    pub games: usize,
    pub moves: usize,
    pub moves_per_sec: f64,
    pub lost: usize,
    pub duplicated: usize,
    pub illegal: usize,
    /// CPU seconds each replica used during the run (those whose metrics could be read).
    pub cpu: Vec<(String, f64)>,
    pub endpoints: Vec<EndpointReport>,
}

impl Report {
    pub fn errors(&self) -> u64 {
        self.endpoints.iter().map(|e| e.errors).sum()
    }

    /// Requests per second over every endpoint.
    pub fn requests_per_sec(&self) -> f64 {
        self.endpoints.iter().map(|e| e.per_sec).sum()
    }

    /// The replicas' CPU time per move, in microseconds.
    pub fn cpu_us_per_move(&self) -> Option<f64> {
        (self.moves > 0 && !self.cpu.is_empty())
            .then(|| self.cpu.iter().map(|(_, s)| s).sum::<f64>() * 1e6 / self.moves as f64)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<34} {:>8} {:>9} {:>8} {:>8} {:>8} {:>7}  statuses",
            "endpoint", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors"
        )?;
        for e in &self.endpoints {
            let statuses: Vec<String> = e
                .statuses
                .iter()
                .map(|(s, n)| {
                    if *s == 0 {
                        format!("net:{n}")
                    } else {
                        format!("{s}:{n}")
                    }
                })
                .collect();
            writeln!(
                f,
                "{:<34} {:>8} {:>9.1} {:>8.2} {:>8.2} {:>8.2} {:>7}  {}",
                e.name,
                e.requests,
                e.per_sec,
                e.p50_ms,
                e.p95_ms,
                e.p99_ms,
                e.errors,
                statuses.join(" ")
            )?;
        }
        writeln!(
            f,
            "{} games, {} moves in {:.1} s: {:.1} moves/s",
            self.games, self.moves, self.secs, self.moves_per_sec
        )?;
        writeln!(f, "{:.1} requests/s in all", self.requests_per_sec())?;
        for (target, secs) in &self.cpu {
            writeln!(f, "replica {target}: {secs:.2} s of CPU")?;
        }
        if let Some(us) = self.cpu_us_per_move() {
            writeln!(f, "service CPU per move: {us:.1} us")?;
        }
        write!(
            f,
            "errors {}, lost moves {}, duplicated moves {}, games that do not replay {}",
            self.errors(),
            self.lost,
            self.duplicated,
            self.illegal
        )
    }
}
