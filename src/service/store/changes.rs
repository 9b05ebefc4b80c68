//! In-process fan-out of "game X is now at version v", so that every watcher connected to this
//! replica wakes up on a change, wherever it was made. One `watch` channel per watched game:
//! thousands of idle watchers cost a few bytes each, not a thread.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

#[derive(Default)]
pub struct Changes {
    games: Mutex<HashMap<String, watch::Sender<u64>>>,
}

impl Changes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<u64>>> {
        self.games.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the watchers of `id` (if any) with its new version.
    pub fn notify(&self, id: &str, version: u64) {
        let mut games = self.lock();
        if let Some(sender) = games.get(id) {
            if sender.receiver_count() == 0 {
                games.remove(id);
            } else {
                sender.send_if_modified(|v| {
                    let newer = version > *v;
                    *v = (*v).max(version);
                    newer
                });
            }
        }
    }

    /// A receiver that changes whenever `id` gets a new version.
    pub fn subscribe(&self, id: &str) -> watch::Receiver<u64> {
        let mut games = self.lock();
        games.retain(|_, s| s.receiver_count() > 0);
        games
            .entry(id.to_string())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }
}
