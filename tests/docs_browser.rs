//! The `/docs` page, rendered by a real headless Chromium: Swagger UI runs from the assets
//! compiled into the binary (no network) and lists the API's operations.

use std::process::Command;

use pillarz::service::configuration::Settings;
use pillarz::service::startup::Application;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swagger_ui_renders_the_operations_in_chromium() {
    let app = Application::build(Settings::for_tests()).unwrap();
    let url = format!("http://127.0.0.1:{}/docs", app.port());
    tokio::spawn(app.run_until_stopped());
    let profile = std::env::temp_dir().join(format!("pillarz-chromium-{}", std::process::id()));
    let dom = tokio::task::spawn_blocking(move || {
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
                "--virtual-time-budget=10000",
                "--dump-dom",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(&url)
            .output()
            .expect("chromium must be installed (apt-get install chromium)");
        let _ = std::fs::remove_dir_all(&profile);
        String::from_utf8_lossy(&out.stdout).into_owned()
    })
    .await
    .unwrap();
    // These elements exist only once Swagger UI's script has fetched and rendered the document.
    assert!(
        dom.contains("opblock-summary-path"),
        "Swagger UI did not render:\n{dom:.2000}"
    );
    for path in [
        "/v1/catalog",
        "/v1/games/{id}/moves",
        "/v1/analysis",
        "/v1/games/{id}/events",
    ] {
        assert!(dom.contains(path), "{path} is listed");
    }
}
