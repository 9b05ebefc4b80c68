//! The `/docs` page, rendered by a real headless Chromium: Swagger UI runs from the assets
//! compiled into the binary (no network) and lists the API's operations.

use pillarz::service::configuration::Settings;
use pillarz::service::startup::Application;

#[path = "common/dump_dom.rs"]
mod dump_dom;
use dump_dom::dump_dom;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swagger_ui_renders_the_operations_in_chromium() {
    let app = Application::build(Settings::for_tests()).unwrap();
    let url = format!("http://127.0.0.1:{}/docs", app.port());
    tokio::spawn(app.run_until_stopped());
    let dom = dump_dom(url).await;
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
