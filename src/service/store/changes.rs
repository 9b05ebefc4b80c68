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

    /// Wakes every watcher to look again, as if its game had changed (after a time in which
    /// changes could have been missed).
    pub fn wake_all(&self) {
        for sender in self.lock().values() {
            sender.send_modify(|_| {});
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

    /// Whether someone on this replica watches `id`.
    pub fn is_watched(&self, id: &str) -> bool {
        self.lock()
            .get(id)
            .is_some_and(|sender| sender.receiver_count() > 0)
    }

    /// The games someone on this replica watches.
    pub fn watched(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, sender)| sender.receiver_count() > 0)
            .map(|(id, _)| id.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_is_watched_while_a_receiver_lives() {
        let changes = Changes::default();
        assert!(!changes.is_watched("a"));
        let receiver = changes.subscribe("a");
        assert!(changes.is_watched("a"));
        assert_eq!(changes.watched(), vec!["a".to_string()]);
        drop(receiver);
        assert!(!changes.is_watched("a"));
        assert!(changes.watched().is_empty());
    }

    #[tokio::test]
    async fn notify_wakes_with_newer_versions_only_and_wake_all_wakes_everyone() {
        let changes = Changes::default();
        let mut receiver = changes.subscribe("a");
        changes.notify("a", 3);
        receiver.changed().await.unwrap();
        assert_eq!(*receiver.borrow_and_update(), 3);
        changes.notify("a", 2);
        assert!(!receiver.has_changed().unwrap());
        changes.wake_all();
        assert!(receiver.has_changed().unwrap());
        assert_eq!(*receiver.borrow_and_update(), 3);
    }
}
