//! Cross-origin use, in a real headless Chromium: a page served from another loopback origin
//! creates a game, plays a move with its seat token, reads the exposed headers and follows the
//! events stream; a page from an origin the service does not allow is refused by the browser.

use actix_web::{App, HttpResponse, HttpServer, web};
use pillarz::service::configuration::Settings;
use pillarz::service::cors::AllowedOrigins;
use pillarz::service::startup::Application;

#[path = "common/dump_dom.rs"]
mod dump_dom;
use dump_dom::dump_dom;

/// The page: every step writes what it saw into `#out`, which the test reads from the DOM.
fn page(api: &str) -> String {
    format!(
        r#"<!doctype html><meta charset="utf-8"><pre id="out">running</pre><script type="module">
const api = "{api}";
const out = document.getElementById("out");
const lines = [];
const say = (line) => {{ lines.push(line); out.textContent = lines.join("\n"); }};
try {{
  let r = await fetch(api + "/v1/games", {{
    method: "POST",
    headers: {{ "content-type": "application/json" }},
    body: JSON.stringify({{ game: "pillarz" }}),
  }});
  const created = await r.json();
  say("created " + r.status + " location=" + (r.headers.get("location") !== null) +
      " request-id=" + (r.headers.get("x-request-id") !== null));
  const id = created.game.id;
  r = await fetch(api + "/v1/games/" + id + "/legal-moves");
  const legal = await r.json();
  r = await fetch(api + "/v1/games/" + id + "/moves", {{
    method: "POST",
    headers: {{
      "content-type": "application/json",
      "authorization": "Bearer " + created.tokens.p1,
      "idempotency-key": "first-move",
    }},
    body: JSON.stringify({{ move: legal.moves[0] }}),
  }});
  say("moved " + r.status + " etag=" + r.headers.get("etag"));
  const events = new EventSource(api + "/v1/games/" + id + "/events");
  await new Promise((resolve, reject) => {{
    events.addEventListener("game", (e) => {{
      say("stream ply=" + JSON.parse(e.data).ply);
      events.close();
      resolve();
    }});
    events.onerror = () => {{ events.close(); reject(new Error("events stream failed")); }};
  }});
  say("done");
}} catch (e) {{
  say("refused " + e.name);
}}
</script>"#
    )
}

/// Serves `html` at `/` from a port of its own (another origin than the API's).
async fn serve_page(listener: std::net::TcpListener, html: String) {
    let server = HttpServer::new(move || {
        let html = html.clone();
        App::new().route(
            "/",
            web::get().to(move || {
                let html = html.clone();
                async move { HttpResponse::Ok().content_type("text/html").body(html) }
            }),
        )
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    server.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_an_allowed_origin_plays_and_a_page_on_another_is_refused() {
    let allowed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let allowed_origin = format!("http://127.0.0.1:{}", allowed.local_addr().unwrap().port());
    let other_url = format!("http://127.0.0.1:{}/", other.local_addr().unwrap().port());

    let mut settings = Settings::for_tests();
    settings.cors_origins = AllowedOrigins::Only(vec![allowed_origin.clone()]);
    let app = Application::build(settings).unwrap();
    let api = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(app.run_until_stopped());
    tokio::spawn(serve_page(allowed, page(&api)));
    tokio::spawn(serve_page(other, page(&api)));

    let dom = dump_dom(format!("{allowed_origin}/")).await;
    for line in [
        "created 201 location=true request-id=true",
        "moved 200 etag=\"2\"",
        "stream ply=1",
        "done",
    ] {
        assert!(dom.contains(line), "expected {line:?} in:\n{dom:.3000}");
    }

    let dom = dump_dom(other_url).await;
    assert!(
        dom.contains("refused TypeError"),
        "a page from an origin not listed must not reach the API:\n{dom:.3000}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_origin_is_the_default() {
    let page_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let page_url = format!(
        "http://127.0.0.1:{}/",
        page_listener.local_addr().unwrap().port()
    );
    let app = Application::build(Settings::for_tests()).unwrap();
    let api = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(app.run_until_stopped());
    tokio::spawn(serve_page(page_listener, page(&api)));
    let dom = dump_dom(page_url).await;
    assert!(dom.contains("done"), "{dom:.3000}");
}
