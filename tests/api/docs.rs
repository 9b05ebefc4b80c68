//! The OpenAPI document is current, and the docs page is served with its assets.

use pillarz::service::routes::ApiDoc;
use serde_json::Value;

use crate::helpers::TestApp;

#[test]
fn the_committed_openapi_document_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json");
    let committed = std::fs::read_to_string(path).unwrap();
    assert!(
        committed == ApiDoc::pretty_json(),
        "openapi/openapi.json is stale: run `cargo run --release -- openapi > openapi/openapi.json`"
    );
}

#[test]
fn every_endpoint_and_error_code_is_documented() {
    let doc: Value = serde_json::from_str(&ApiDoc::pretty_json()).unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/v1/catalog",
        "/v1/games",
        "/v1/games/{id}",
        "/v1/games/{id}/legal-moves",
        "/v1/games/{id}/moves",
        "/v1/games/{id}/resign",
        "/v1/games/{id}/clock",
        "/healthz/live",
        "/healthz/ready",
    ] {
        assert!(paths.contains_key(path), "{path} is documented");
    }
    let text = doc.to_string();
    for (code, _) in pillarz::service::error::ErrorCode::all() {
        assert!(text.contains(&format!("`{code}`")), "{code} is documented");
    }
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for (name, schema) in schemas {
        if let Some(props) = schema["properties"].as_object() {
            for (field, spec) in props {
                // utoipa puts the description of an optional field on its non-null `oneOf` arm.
                let arms = spec["oneOf"].as_array().cloned().unwrap_or_default();
                let documented = spec.get("description").is_some()
                    || arms.iter().any(|arm| arm.get("description").is_some());
                assert!(documented, "{name}.{field} has a description");
            }
        }
    }
}

#[tokio::test]
async fn the_docs_page_and_its_assets_are_served_offline() {
    let app = TestApp::spawn_in_memory().await;
    let page = app.get("/docs").await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("/docs/swagger-ui-bundle.js") && html.contains("/openapi.json"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no remote assets"
    );
    for asset in ["/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css"] {
        let response = app.get(asset).await;
        assert_eq!(response.status(), 200, "{asset}");
        assert!(response.bytes().await.unwrap().len() > 100_000);
    }
    let doc: Value = app.get("/openapi.json").await.json().await.unwrap();
    assert_eq!(doc["info"]["title"], "pillarz");
}
