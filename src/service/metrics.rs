//! Prometheus metrics, served at `GET /metrics` (by `routes::metrics`): requests and latencies per route and status,
//! moves applied, compare-and-set conflicts, the analysis queue and its durations, store errors,
//! engine-seat failures, and the process's CPU time and memory.

use std::sync::LazyLock;

use prometheus::{
    HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
};

pub struct Metrics {
    registry: Registry,
    pub requests: IntCounterVec,
    pub latency: HistogramVec,
    pub moves_applied: IntCounter,
    pub cas_conflicts: IntCounter,
    pub stale_cache_refreshes: IntCounter,
    pub engine_failures: IntCounter,
    pub store_errors: IntCounter,
    pub store_games: IntGauge,
    pub store_bytes: IntGauge,
    pub analysis_queue: IntGauge,
    pub analysis_seconds: HistogramVec,
    pub rate_limited: IntCounterVec,
}

fn build() -> Metrics {
    let registry = Registry::new_custom(Some("pillarz".into()), None).expect("a valid prefix");
    let requests = IntCounterVec::new(
        Opts::new(
            "http_requests_total",
            "HTTP requests by route, method and status",
        ),
        &["route", "method", "status"],
    )
    .expect("valid metric");
    let latency = HistogramVec::new(
        HistogramOpts::new("http_request_duration_seconds", "HTTP request latency").buckets(vec![
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
        ]),
        &["route", "method"],
    )
    .expect("valid metric");
    let moves_applied =
        IntCounter::new("moves_applied_total", "Moves applied to games").expect("valid");
    let cas_conflicts = IntCounter::new(
        "cas_conflicts_total",
        "Writes that lost a compare-and-set race and were recomputed",
    )
    .expect("valid");
    let stale_cache_refreshes = IntCounter::new(
        "stale_cache_refreshes_total",
        "Writes refused on this replica's cached game whose fresh read found a newer version \
         (another replica wrote since): each cost a second round trip to the store",
    )
    .expect("valid");
    let engine_failures = IntCounter::new(
        "engine_failures_total",
        "Engine-seat searches that failed (panicked); their seats are retried",
    )
    .expect("valid");
    let store_errors = IntCounter::new(
        "store_errors_total",
        "Requests failed by the store (unavailable or full)",
    )
    .expect("valid");
    let store_games = IntGauge::new(
        "memory_store_games",
        "Games held by the embedded store (0 with Redis)",
    )
    .expect("valid");
    let store_bytes = IntGauge::new(
        "memory_store_bytes",
        "Bytes the embedded store counts its games for, against --memory-max-mb (0 with Redis)",
    )
    .expect("valid");
    let analysis_queue =
        IntGauge::new("analysis_queue_depth", "Analyses running or waiting").expect("valid");
    let analysis_seconds = HistogramVec::new(
        HistogramOpts::new(
            "analysis_duration_seconds",
            "Time spent searching per analysis",
        )
        .buckets(vec![0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]),
        &["game"],
    )
    .expect("valid metric");
    let rate_limited = IntCounterVec::new(
        Opts::new(
            "rate_limited_total",
            "Requests refused with 429, by quota class",
        ),
        &["class"],
    )
    .expect("valid metric");
    for collector in [
        Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
        Box::new(latency.clone()),
        Box::new(moves_applied.clone()),
        Box::new(cas_conflicts.clone()),
        Box::new(stale_cache_refreshes.clone()),
        Box::new(engine_failures.clone()),
        Box::new(store_errors.clone()),
        Box::new(store_games.clone()),
        Box::new(store_bytes.clone()),
        Box::new(analysis_queue.clone()),
        Box::new(analysis_seconds.clone()),
        Box::new(rate_limited.clone()),
        // CPU time, memory and file descriptors of the process (Linux), e.g. for the load
        // test's CPU time per move.
        Box::new(ProcessMetrics(
            prometheus::process_collector::ProcessCollector::for_self(),
        )),
    ] {
        registry.register(collector).expect("registered once");
    }
    Metrics {
        registry,
        requests,
        latency,
        moves_applied,
        cas_conflicts,
        stale_cache_refreshes,
        engine_failures,
        store_errors,
        store_games,
        store_bytes,
        analysis_queue,
        analysis_seconds,
        rate_limited,
    }
}

/// The prometheus crate's process metrics, with the CPU time to the microsecond: the crate
/// counts it in whole seconds, which over a 20-second load test phase is an error of a
/// tenth in the CPU time per move that the load generator reports.
struct ProcessMetrics(prometheus::process_collector::ProcessCollector);

impl prometheus::core::Collector for ProcessMetrics {
    fn desc(&self) -> Vec<&prometheus::core::Desc> {
        self.0.desc()
    }

    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        let mut families = self.0.collect();
        if let Some(seconds) = cpu_seconds(libc::RUSAGE_SELF) {
            for family in &mut families {
                if family.name() == "process_cpu_seconds_total" {
                    for metric in family.mut_metric() {
                        let mut counter = prometheus::proto::Counter::default();
                        counter.set_value(seconds);
                        metric.set_counter(counter);
                    }
                }
            }
        }
        families
    }
}

/// The CPU time used, user and system, in seconds: by this process and all its threads
/// (`RUSAGE_SELF`) or by the calling thread (`RUSAGE_THREAD`).
fn cpu_seconds(who: libc::c_int) -> Option<f64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: `getrusage` fills the struct it is given when it answers 0; it is read only then.
    let usage = unsafe {
        if libc::getrusage(who, usage.as_mut_ptr()) != 0 {
            return None;
        }
        usage.assume_init()
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(seconds(usage.ru_utime) + seconds(usage.ru_stime))
}

/// The process's metrics (one registry per process, shared by every app it runs).
pub static METRICS: LazyLock<Metrics> = LazyLock::new(build);

impl Metrics {
    /// Every metric's current value, for the scrape (`routes::metrics`).
    pub fn gather(&self) -> Vec<prometheus::proto::MetricFamily> {
        self.registry.gather()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_scraped() -> f64 {
        METRICS
            .gather()
            .iter()
            .find(|f| f.name() == "pillarz_process_cpu_seconds_total")
            .expect("the process's CPU time is scraped")
            .get_metric()[0]
            .get_counter()
            .get_value()
    }

    #[test]
    fn the_process_cpu_time_is_scraped_to_a_fraction_of_a_second() {
        let thread = || cpu_seconds(libc::RUSAGE_THREAD).expect("getrusage");
        let before = cpu_scraped();
        let (started, thread_started) = (std::time::Instant::now(), thread());
        // 300 ms of this thread's CPU, however busy the machine (within reason).
        let mut x = 1u64;
        while thread() - thread_started < 0.3 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            assert!(started.elapsed() < std::time::Duration::from_secs(60));
        }
        let after = cpu_scraped();
        // Whole seconds rise by 0, or by 1 to a whole number: the process's counter includes
        // this thread's 300 ms, to the microsecond.
        assert!(after - before >= 0.299, "{before} → {after}");
        assert!(after.fract() != 0.0, "{after}");
    }
}
