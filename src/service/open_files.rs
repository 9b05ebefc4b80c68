//! The process's limit of open files, raised before serving.
//!
//! Every connection is a descriptor, and an event stream or a waiting analysis holds a second
//! one (`peer`). The soft limit a process inherits is often 1,024 (a login shell, containerd 2,
//! systemd's default), far below the hard limit the same system allows, and a replica that
//! ran out of descriptors stopped accepting connections altogether: a move waited in the
//! listen queue behind streams that `--max-event-streams` would have let in. So, as Go's
//! runtime and nginx's `worker_rlimit_nofile` do, the soft limit is raised to the hard one
//! before serving; if even that is short of what the settings let clients hold, the log says
//! so once at start, rather than a replica failing under load.

use super::configuration::Settings;

/// Descriptors that the settings let clients hold at once, with room for everything else
/// (the listener, the store's connections, the runtime's own).
fn wanted(settings: &Settings) -> u64 {
    2 * settings.max_event_streams as u64 + 1024
}

/// Raises the soft limit of open files to the hard limit, and logs it against what
/// `settings` want.
pub fn raise(settings: &Settings) {
    let wanted = wanted(settings);
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) if limit < wanted => tracing::warn!(
            limit,
            wanted,
            "the open-file limit (its hard limit) is lower than --max-event-streams lets \
             clients reach; raise it (ulimit -Hn, LimitNOFILE) or lower --max-event-streams"
        ),
        Ok(limit) => tracing::info!(limit, "open-file limit"),
        Err(error) => tracing::warn!(%error, "the open-file limit could not be raised"),
    }
}
