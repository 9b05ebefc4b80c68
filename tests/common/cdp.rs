//! A small Chrome DevTools Protocol client for driving the web page in headless Chromium.
//!
//! Hand-written over one WebSocket instead of a CDP crate: the tests need a dozen methods
//! (targets and browser contexts, evaluate, mouse, keys, screenshots, console events), and
//! the crates generate the whole protocol, which would cost this 2-core machine minutes of
//! compilation for every clean build. Flat sessions (`Target.attachToTarget` with `flatten`)
//! let one socket drive several pages, each in its own browser context (separate storage,
//! like two people on two machines).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;
/// What each page reported as an error: uncaught exceptions, `console.error`, and the
/// browser's own error log (failed requests among them), by session id.
type Errors = Arc<Mutex<HashMap<String, Vec<String>>>>;

/// A headless Chromium and the one socket that drives it; the process ends when it drops.
pub struct Browser {
    child: Child,
    profile: PathBuf,
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
    errors: Errors,
    next_id: Arc<AtomicU64>,
}

/// The binary: `$CHROMIUM`, or `chromium` on the path (Debian's package).
fn chromium() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".to_string())
}

impl Browser {
    pub async fn launch() -> Browser {
        static N: AtomicU64 = AtomicU64::new(0);
        let profile = std::env::temp_dir().join(format!(
            "pillarz-cdp-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let mut child = Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--mute-audio",
                "--remote-debugging-port=0",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium must be installed (apt-get install chromium)");
        // Chromium prints its socket's address on stderr once it listens.
        let stderr = child.stderr.take().expect("piped");
        let url = tokio::task::spawn_blocking(move || {
            let mut lines = BufReader::new(stderr).lines();
            let url = lines
                .by_ref()
                .map_while(Result::ok)
                .find_map(|l| {
                    l.split_once("DevTools listening on ")
                        .map(|(_, u)| u.trim().to_string())
                })
                .expect("chromium announces its DevTools socket");
            // Keep draining stderr so that chromium never blocks on a full pipe.
            std::thread::spawn(move || for _ in lines {});
            url
        })
        .await
        .unwrap();
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("the DevTools socket accepts us");
        let (mut sink, mut stream) = socket.split();
        let (out, mut outbox) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(text) = outbox.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Arc::default();
        let errors: Errors = Arc::default();
        let (p, e) = (pending.clone(), errors.clone());
        tokio::spawn(async move {
            while let Some(Ok(msg)) = stream.next().await {
                let Message::Text(text) = msg else { continue };
                let Ok(v) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                if let Some(id) = v["id"].as_u64() {
                    if let Some(tx) = p.lock().unwrap().remove(&id) {
                        let _ = tx.send(v);
                    }
                } else if let Some(error) = page_error(&v) {
                    let session = v["sessionId"].as_str().unwrap_or("").to_string();
                    e.lock().unwrap().entry(session).or_default().push(error);
                }
            }
        });
        Browser {
            child,
            profile,
            out,
            pending,
            errors,
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    async fn send(&self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.out.send(msg.to_string()).expect("the socket is open");
        let answer = tokio::time::timeout(Duration::from_secs(30), rx)
            .await
            .unwrap_or_else(|_| panic!("no answer to {method} in 30 s"))
            .expect("the browser answered");
        if let Some(err) = answer.get("error") {
            panic!("{method} failed: {err}");
        }
        answer["result"].clone()
    }

    /// A new page in a browser context of its own, with a viewport of `width`×`height`
    /// (`mobile` also turns on touch-style emulation).
    pub async fn page(&self, width: u32, height: u32, mobile: bool) -> Page<'_> {
        let context = self
            .send(None, "Target.createBrowserContext", json!({}))
            .await["browserContextId"]
            .clone();
        let target = self
            .send(
                None,
                "Target.createTarget",
                json!({"url": "about:blank", "browserContextId": context}),
            )
            .await["targetId"]
            .clone();
        let session = self
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
            )
            .await["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string();
        let page = Page {
            browser: self,
            session,
            target: target.as_str().expect("a target id").to_string(),
        };
        for domain in ["Runtime", "Page", "Log"] {
            page.call(&format!("{domain}.enable"), json!({})).await;
        }
        page.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        )
        .await;
        page
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// The text of an event that reports a page error, if `v` is one.
fn page_error(v: &Value) -> Option<String> {
    let p = &v["params"];
    match v["method"].as_str()? {
        "Runtime.exceptionThrown" => Some(format!(
            "exception: {}",
            p["exceptionDetails"]["exception"]["description"]
                .as_str()
                .or(p["exceptionDetails"]["text"].as_str())
                .unwrap_or("?")
        )),
        "Runtime.consoleAPICalled" if matches!(p["type"].as_str(), Some("error" | "assert")) => {
            let args: Vec<String> = p["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| {
                    a["value"]
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| a["description"].to_string())
                })
                .collect();
            Some(format!("console.error: {}", args.join(" ")))
        }
        "Log.entryAdded" if p["entry"]["level"] == "error" => Some(format!(
            "log: {} {}",
            p["entry"]["text"].as_str().unwrap_or(""),
            p["entry"]["url"].as_str().unwrap_or("")
        )),
        _ => None,
    }
}

/// One page (tab) of a [`Browser`].
pub struct Page<'b> {
    browser: &'b Browser,
    session: String,
    target: String,
}

/// How long any wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

impl Page<'_> {
    /// Closes the page (its errors stay readable).
    pub async fn close(&self) {
        self.browser
            .send(None, "Target.closeTarget", json!({"targetId": self.target}))
            .await;
    }

    pub async fn call(&self, method: &str, params: Value) -> Value {
        self.browser.send(Some(&self.session), method, params).await
    }

    /// Navigates and waits until the page's script has started (`body[data-ready]`).
    pub async fn goto(&self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
        self.wait_for("document.body && document.body.dataset.ready === '1'")
            .await;
    }

    pub async fn reload(&self) {
        // The old document may still answer for a moment: it carries a mark the new one lacks.
        self.eval("window.__before_reload = true").await;
        self.call("Page.reload", json!({})).await;
        self.wait_for(
            "!window.__before_reload && document.body && document.body.dataset.ready === '1'",
        )
        .await;
    }

    /// The value of a JavaScript expression (awaited if it is a promise).
    pub async fn eval(&self, expression: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            )
            .await;
        if let Some(ex) = r.get("exceptionDetails") {
            panic!("{expression} threw: {ex}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expression` is truthy, or fails the test after [`WAIT`].
    pub async fn wait_for(&self, expression: &str) -> Value {
        let start = Instant::now();
        loop {
            let r = self
                .call(
                    "Runtime.evaluate",
                    json!({"expression": expression, "returnByValue": true}),
                )
                .await;
            let v = &r["result"]["value"];
            if r.get("exceptionDetails").is_none()
                && !v.is_null()
                && v != &json!(false)
                && v != &json!("")
                && v != &json!(0)
            {
                return v.clone();
            }
            if start.elapsed() > WAIT {
                let body = self
                    .eval("location.href + '\\n' + (document.body ? document.body.innerText : '')")
                    .await;
                let shot = std::env::temp_dir().join(format!("pillarz-cdp-{}.png", self.session));
                Box::pin(self.screenshot(&shot)).await;
                panic!(
                    "waited {WAIT:?} for {expression}\npage errors: {:?}\nscreenshot: {}\npage text:\n{}",
                    self.errors(),
                    shot.display(),
                    body.as_str().unwrap_or("")
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Makes this page the one in front: input events only reach the page in front, and a
    /// page behind another one has its timers throttled.
    async fn front(&self) {
        self.call("Page.bringToFront", json!({})).await;
    }

    /// A real mouse click at the centre of the element `selector` names (scrolled into view).
    pub async fn click(&self, selector: &str) {
        self.front().await;
        let sel = serde_json::to_string(selector).unwrap();
        let rect = self
            .wait_for(&format!(
                "(() => {{ const e = document.querySelector({sel}); if (!e) return null; \
                 e.scrollIntoView({{block: 'center', inline: 'center'}}); \
                 const r = e.getBoundingClientRect(); \
                 return r.width > 0 ? [r.x + r.width / 2, r.y + r.height / 2] : null; }})()"
            ))
            .await;
        let (x, y) = (rect[0].as_f64().unwrap(), rect[1].as_f64().unwrap());
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await;
        }
    }

    /// Focuses `selector` and types `text` into it, as a keyboard would.
    pub async fn type_into(&self, selector: &str, text: &str) {
        self.front().await;
        let sel = serde_json::to_string(selector).unwrap();
        self.wait_for(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return false; \
             e.focus(); return document.activeElement === e; }})()"
        ))
        .await;
        self.call("Input.insertText", json!({"text": text})).await;
    }

    /// Presses one key (`ArrowRight`, `Enter`, …) on the focused element.
    pub async fn press(&self, key: &str) {
        self.front().await;
        let code = match key {
            "Enter" => 13,
            "ArrowLeft" => 37,
            "ArrowRight" => 39,
            "Home" => 36,
            "End" => 35,
            _ => 0,
        };
        for kind in ["keyDown", "keyUp"] {
            let mut event =
                json!({"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code});
            if key == "Enter" && kind == "keyDown" {
                // The text is what makes Enter submit a form.
                event["text"] = json!("\r");
            }
            self.call("Input.dispatchKeyEvent", event).await;
        }
    }

    /// Saves a PNG of the whole page.
    pub async fn screenshot(&self, path: &Path) {
        let r = self
            .call(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true}),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("image data"))
            .unwrap();
        std::fs::write(path, png).unwrap();
    }

    /// The errors this page reported so far.
    pub fn errors(&self) -> Vec<String> {
        self.browser
            .errors
            .lock()
            .unwrap()
            .get(&self.session)
            .cloned()
            .unwrap_or_default()
    }
}
