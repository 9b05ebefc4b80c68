//! A page's DOM after its scripts ran, from headless Chromium's `--dump-dom` (for tests that
//! only need to read what a page ends up showing; `cdp.rs` drives pages that need clicks).

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The DOM of `url` once its scripts have run (virtual time, so no waiting on real time),
/// followed by Chromium's stderr for failure messages. Each call gets its own profile, so
/// tests may run at once.
pub async fn dump_dom(url: String) -> String {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    let profile = std::env::temp_dir().join(format!("pillarz-dom-{}-{run}", std::process::id()));
    tokio::task::spawn_blocking(move || {
        let out = Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--virtual-time-budget=15000",
                "--dump-dom",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(&url)
            .output()
            .expect("chromium must be installed (apt-get install chromium)");
        let _ = std::fs::remove_dir_all(&profile);
        format!(
            "{}\n--- chromium stderr ---\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
    .await
    .unwrap()
}
