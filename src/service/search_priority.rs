//! Searches (analyses and the engine seats' moves) run below the HTTP workers' priority.
//!
//! Why: a search is CPU-bound and bounded by its own limits (most often a think time), while
//! a request is short and waits on the network. When the cores are contended, a search at the
//! same priority takes its full time slices from the requests queued behind it, so every
//! move's latency pays for the analyses running beside it. At a higher nice value the kernel
//! runs the requests first: an analysis under load searches less deeply within its think
//! time, a move does not wait. On an idle machine nothing changes: niceness only orders
//! threads that compete for a core.
//!
//! Linux only: there each thread has its own nice value (`setpriority(PRIO_PROCESS, 0, …)`
//! applies to the calling thread), and lowering it needs no privilege. Raising it back
//! would, so a thread that ran a search stays at the lower priority; tokio's blocking pool
//! may reuse it for other blocking work, which the service has little of (a name lookup when
//! a store connection is made).

use std::cell::Cell;

thread_local! {
    /// This thread's nice value, once read.
    static NICE: Cell<Option<i32>> = const { Cell::new(None) };
}

/// Runs a search on tokio's blocking pool, on a thread at nice `nice` (see [`lower`]).
pub fn spawn<T: Send + 'static>(
    nice: i32,
    search: impl FnOnce() -> T + Send + 'static,
) -> tokio::task::JoinHandle<T> {
    tokio::task::spawn_blocking(move || {
        lower(nice);
        search()
    })
}

/// Lowers the calling thread's priority to `nice` (0 to 19) unless it is that low already;
/// never raises it. Failing to lower it is not an error: the search runs as it would have.
pub fn lower(nice: i32) {
    NICE.with(|known| {
        let current = known.get().unwrap_or_else(own_nice);
        known.set(Some(if nice > current && set_own_nice(nice) {
            nice
        } else {
            current
        }));
    });
}

#[cfg(target_os = "linux")]
fn set_own_nice(nice: i32) -> bool {
    // SAFETY: `setpriority` takes plain integers and touches no memory of ours.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) == 0 }
}

/// The calling thread's nice value.
#[cfg(target_os = "linux")]
pub fn own_nice() -> i32 {
    // SAFETY: as above. It answers -1 both for a failure and for nice -1, but asking about
    // the calling thread cannot fail.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
}

#[cfg(not(target_os = "linux"))]
fn set_own_nice(_nice: i32) -> bool {
    // Elsewhere `PRIO_PROCESS` would lower the whole process, HTTP workers included.
    false
}

#[cfg(not(target_os = "linux"))]
pub fn own_nice() -> i32 {
    0
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn lowers_only_the_calling_thread_and_only_downwards() {
        let before = own_nice();
        let seen = std::thread::spawn(|| {
            lower(7);
            let lowered = own_nice();
            // A smaller value would raise the priority again: ignored.
            lower(3);
            (lowered, own_nice())
        })
        .join()
        .expect("the thread ends");
        assert_eq!(seen, (7.max(before), 7.max(before)));
        assert_eq!(own_nice(), before, "other threads keep their priority");
    }

    #[test]
    fn zero_leaves_the_thread_alone() {
        let seen = std::thread::spawn(|| {
            let start = own_nice();
            lower(0);
            (start, own_nice())
        })
        .join()
        .expect("the thread ends");
        assert_eq!(seen.0, seen.1);
    }
}
