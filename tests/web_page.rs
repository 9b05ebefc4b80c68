//! The web page at `/`, driven in a real headless Chromium through the DevTools protocol:
//! a full game against the level-1 engine in each of the four games made by clicks on the
//! board, a two-person game through the shared link in two browser contexts (one of them
//! phone-sized, moving by typed notation, reloaded mid-game), an analysis, and another site
//! that tries to show the page in a frame. Every test fails on any console error or uncaught
//! exception of the page.
//!
//! The test side chooses its moves with the API's own analysis (so the games end soon) and
//! clicks them; that the page offers exactly the legal moves is checked on every move: the
//! squares the page marks as the first click are the legal moves' first clicks.
//!
//! `PILLARZ_SCREENSHOTS=<dir> cargo test --release --test web_page` also saves PNGs of each
//! game's board and of the analysis view, at desktop and phone widths.

#[path = "common/cdp.rs"]
mod cdp;

use std::collections::BTreeSet;
use std::path::PathBuf;

use cdp::{Browser, Page};
use pillarz::service::configuration::Settings;
use pillarz::service::startup::Application;
use serde_json::{Value, json};

/// One browser at a time: the tests share a 2-core machine with the service they drive.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const DESKTOP: (u32, u32) = (1200, 900);
const PHONE: (u32, u32) = (390, 844);

struct Service {
    base: String,
    http: reqwest::Client,
}

impl Service {
    async fn start() -> Service {
        let app = Application::build(Settings::for_tests()).unwrap();
        let base = format!("http://127.0.0.1:{}", app.port());
        tokio::spawn(app.run_until_stopped());
        Service {
            base,
            http: reqwest::Client::new(),
        }
    }

    async fn get(&self, path: &str) -> Value {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "GET {path}: {}", r.status());
        r.json().await.unwrap()
    }

    async fn post(&self, path: &str, body: Value, token: Option<&str>) -> Value {
        let mut req = self.http.post(format!("{}{path}", self.base)).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        let v: Value = r.json().await.unwrap();
        assert!(status.is_success(), "POST {path}: {status} {v}");
        v
    }

    /// The positions after each of `moves` played from `position` (on a game of its own).
    async fn positions_after(&self, game: &str, position: &str, moves: &[String]) -> Vec<String> {
        let created = self
            .post(
                "/v1/games",
                json!({"game": game, "position": position}),
                None,
            )
            .await;
        let id = created["game"]["id"].as_str().unwrap().to_string();
        let mut turn = created["game"]["turn"].as_str().unwrap().to_string();
        let mut out = Vec::new();
        for m in moves {
            let token = created["tokens"][&turn].as_str().unwrap();
            let after = self
                .post(
                    &format!("/v1/games/{id}/moves"),
                    json!({"move": m}),
                    Some(token),
                )
                .await;
            turn = after["turn"].as_str().unwrap().to_string();
            out.push(after["position"].as_str().unwrap().to_string());
        }
        out
    }
}

fn screenshots() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("PILLARZ_SCREENSHOTS")?);
    std::fs::create_dir_all(&dir).unwrap();
    Some(dir)
}

fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// The clicks that make `mv`, as the page spells moves (`src/service/web/clicks.js`); `variant`
/// picks one of the spellings a move has, so both get clicked in a game.
fn clicks(game: &str, mv: &str, position: &str, variant: bool) -> Vec<String> {
    let s = |x: &str| x.to_string();
    match game {
        "pillarz" if mv.contains('+') => {
            let (a, b) = mv.split_once('+').unwrap();
            if variant {
                vec![s(b), s(a)]
            } else {
                vec![s(a), s(b)]
            }
        }
        "pillarz" => mv.split(['-', '^']).map(s).collect(),
        "pilastri" => mv.split('-').map(s).collect(),
        "pyrga" => {
            let piece = format!("piece:{}", &mv[..1]);
            let square = s(&mv[1..3]);
            let mut out = if variant {
                vec![square, piece]
            } else {
                vec![piece, square]
            };
            if mv.len() > 3 {
                out.push(format!("dir:{}", &mv[3..]));
            }
            out
        }
        "alcazar" if mv.starts_with('K') => {
            let parts: Vec<&str> = position.split_whitespace().collect();
            let knight = if parts[3] == "1" { parts[1] } else { parts[2] };
            if variant {
                vec![s(&mv[1..])]
            } else {
                vec![s(knight), s(&mv[1..])]
            }
        }
        "alcazar" => vec![s(&mv[..2]), s(&mv[2..])],
        other => panic!("no game {other}"),
    }
}

fn assert_no_errors(page: &Page<'_>, what: &str) {
    let errors = page.errors();
    assert!(
        errors.is_empty(),
        "{what}: the page reported errors: {errors:?}"
    );
}

const BOARD_STATE: &str = "(() => { const b = document.getElementById('game-board'); \
    if (b.dataset.status === 'finished') return 'finished'; \
    return b.dataset.turn === 'mine' ? 'mine:' + b.dataset.ply : null; })()";

/// Starts a game from the page's form against the level-1 engine and plays it to the end by
/// clicks; returns the finished game as the API shows it.
async fn full_game_against_level_1(game: &str, variants: &[&str]) {
    let _one = ONE_AT_A_TIME.lock().await;
    let service = Service::start().await;
    let browser = Browser::launch().await;
    let page = browser.page(DESKTOP.0, DESKTOP.1, false).await;
    page.goto(&format!("{}/", service.base)).await;
    page.eval(&format!(
        "(() => {{ const g = document.getElementById('new-game'); g.value = {}; \
         g.dispatchEvent(new Event('change')); document.getElementById('new-level').value = '1'; }})()",
        js(game)
    ))
    .await;
    for v in variants {
        page.click(&format!("#new-variants input[value=\"{v}\"]"))
            .await;
    }
    page.click("#new-start").await;
    let id = page
        .wait_for(
            "(() => { const p = new URLSearchParams(location.hash.slice(1)); \
             return p.get('token') && document.querySelector('#game-board svg') ? p.get('game') : null; })()",
        )
        .await
        .as_str()
        .unwrap()
        .to_string();
    let created = service.get(&format!("/v1/games/{id}")).await;
    assert_eq!(created["game"], game);
    assert_eq!(created["engine_seats"], json!({"p2": 1}));
    assert_eq!(created["variants"], json!(variants));
    assert!(
        created["clock"].is_object(),
        "the default time control is timed"
    );

    let mut mine = 0;
    loop {
        let state = page.wait_for(BOARD_STATE).await;
        let state = state.as_str().unwrap();
        if state == "finished" {
            break;
        }
        let ply: u64 = state.trim_start_matches("mine:").parse().unwrap();
        let view = service.get(&format!("/v1/games/{id}")).await;
        assert_eq!(view["ply"], ply, "the page shows the game's present");
        let position = view["position"].as_str().unwrap().to_string();
        let legal = service.get(&format!("/v1/games/{id}/legal-moves")).await;
        let legal: Vec<String> = serde_json::from_value(legal["moves"].clone()).unwrap();
        // The first clicks the page offers are exactly those of the legal moves.
        let offered: BTreeSet<String> = serde_json::from_value(
            page.eval(
                "[...document.querySelectorAll('#game-board [data-point].target')].map(e => e.getAttribute('data-point'))",
            )
            .await,
        )
        .unwrap();
        let expected: BTreeSet<String> = legal
            .iter()
            .flat_map(|m| {
                [
                    clicks(game, m, &position, false)[0].clone(),
                    clicks(game, m, &position, true)[0].clone(),
                ]
            })
            .collect();
        assert_eq!(
            offered, expected,
            "ply {ply}: the page offers the legal moves"
        );
        if mine == 2 && game == "pillarz" {
            // The clock of the side to move ticks on the page.
            let before = page
                .eval("document.getElementById('clock-p1').textContent")
                .await;
            page.wait_for(&format!(
                "document.getElementById('clock-p1').textContent !== {before}"
            ))
            .await;
        }
        let analysis = service
            .post(
                &format!("/v1/games/{id}/analysis"),
                json!({"limits": {"depth": 2}}),
                None,
            )
            .await;
        let best = analysis["best_move"].as_str().unwrap().to_string();
        assert!(legal.contains(&best));
        for token in clicks(game, &best, &position, mine % 2 == 1) {
            page.click(&format!("#game-board [data-point=\"{token}\"].target"))
                .await;
        }
        page.wait_for(&format!(
            "Number(document.getElementById('game-board').dataset.ply) > {ply}"
        ))
        .await;
        let after = service.get(&format!("/v1/games/{id}")).await;
        assert_eq!(
            after["moves"][ply as usize],
            json!(best),
            "the clicks made the move"
        );
        mine += 1;
        assert!(mine < 400, "the game does not end");
        if mine == 4
            && let Some(dir) = screenshots()
        {
            page.wait_for(BOARD_STATE).await;
            page.screenshot(&dir.join(format!("{game}-desktop.png")))
                .await;
            let phone = browser.page(PHONE.0, PHONE.1, true).await;
            phone.goto(&format!("{}/#game={id}", service.base)).await;
            phone
                .wait_for("document.querySelector('#game-board svg')")
                .await;
            phone
                .screenshot(&dir.join(format!("{game}-phone.png")))
                .await;
            assert_no_errors(&phone, "the watching phone");
            phone.close().await;
        }
    }
    let end = service.get(&format!("/v1/games/{id}")).await;
    assert_eq!(end["status"], "finished");
    let shown = page
        .wait_for(
            "(() => { const s = document.getElementById('game-status'); \
             return s.dataset.termination ? [s.dataset.result, s.dataset.termination, s.textContent] : null; })()",
        )
        .await;
    assert_eq!(shown[0], end["result"]);
    assert_eq!(shown[1], end["termination"]);
    let text = shown[2].as_str().unwrap();
    assert!(text.contains("wins") || text.contains("Draw"), "{text}");
    let listed = page
        .eval("[...document.querySelectorAll('#game-moves button')].map(b => b.textContent)")
        .await;
    assert_eq!(listed, end["moves"], "the move list is the game's");
    assert_no_errors(&page, game);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pillarz_game_against_level_1_by_clicks() {
    full_game_against_level_1("pillarz", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pilastri_game_against_level_1_by_clicks() {
    full_game_against_level_1("pilastri", &["jumpers"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pyrga_game_against_level_1_by_clicks() {
    full_game_against_level_1("pyrga", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alcazar_game_against_level_1_by_clicks() {
    full_game_against_level_1("alcazar", &[]).await;
}

async fn ply_of(page: &Page<'_>) -> u64 {
    page.eval("Number(document.getElementById('game-board').dataset.ply)")
        .await
        .as_u64()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_play_through_the_shared_link() {
    let _one = ONE_AT_A_TIME.lock().await;
    let service = Service::start().await;
    let browser = Browser::launch().await;
    let host = browser.page(DESKTOP.0, DESKTOP.1, false).await;
    host.goto(&format!("{}/", service.base)).await;
    host.click("input[name=opponent][value=person]").await;
    host.click("#new-start").await;
    let link = host
        .wait_for("document.getElementById('game-share-link').value")
        .await
        .as_str()
        .unwrap()
        .to_string();
    assert!(link.contains("#game=") && link.contains("seat=p2") && link.contains("token="));
    let id = link
        .split("game=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .to_string();
    // The guest: another browser context (no shared storage), phone-sized.
    let guest = browser.page(PHONE.0, PHONE.1, true).await;
    guest.goto(&link).await;
    guest
        .wait_for("document.querySelector('#game-board svg')")
        .await;

    for ply in 0..8u64 {
        let view = service.get(&format!("/v1/games/{id}")).await;
        let position = view["position"].as_str().unwrap().to_string();
        let best = service
            .post(
                &format!("/v1/games/{id}/analysis"),
                json!({"limits": {"depth": 2}}),
                None,
            )
            .await["best_move"]
            .as_str()
            .unwrap()
            .to_string();
        if ply % 2 == 0 {
            // The host clicks.
            host.wait_for(BOARD_STATE).await;
            for token in clicks("pillarz", &best, &position, false) {
                host.click(&format!("#game-board [data-point=\"{token}\"].target"))
                    .await;
            }
        } else {
            // The guest types the move, in upper case with spaces: the service accepts it.
            guest.wait_for(BOARD_STATE).await;
            guest
                .type_into("#game-move", &format!(" {} ", best.to_uppercase()))
                .await;
            guest.press("Enter").await;
        }
        for page in [&host, &guest] {
            page.wait_for(&format!(
                "Number(document.getElementById('game-board').dataset.ply) === {}",
                ply + 1
            ))
            .await;
        }
        if ply == 3 {
            // A reload resumes the game from the link, moves and all.
            host.reload().await;
            host.wait_for("document.querySelectorAll('#game-moves button').length === 4")
                .await;
            assert_eq!(ply_of(&host).await, 4);
        }
    }
    let moves = service.get(&format!("/v1/games/{id}")).await["moves"].clone();
    assert_eq!(moves.as_array().unwrap().len(), 8);
    // The guest resigns (the button asks twice); both pages show the end.
    guest.click("#game-resign").await;
    guest
        .wait_for("document.getElementById('game-resign').textContent === 'Really resign?'")
        .await;
    guest.click("#game-resign").await;
    for page in [&host, &guest] {
        let text = page
            .wait_for(
                "document.getElementById('game-status').dataset.termination === 'resign' \
                 && document.getElementById('game-status').textContent",
            )
            .await;
        assert!(text.as_str().unwrap().contains("(p1) wins"), "{text}");
    }
    let end = service.get(&format!("/v1/games/{id}")).await;
    assert_eq!(end["result"], "p1");
    assert_eq!(end["termination"], "resign");
    assert_no_errors(&host, "host");
    assert_no_errors(&guest, "guest");
}

/// The texts of the analysis lines on the page: `[score, [moves…]]` per line.
async fn lines_of(page: &Page<'_>) -> Value {
    page.wait_for(
        "(() => { const ls = [...document.querySelectorAll('#an-lines li')]; \
         return ls.length ? ls.map(l => [l.querySelector('.score').textContent, \
         [...l.querySelectorAll('.pv button')].map(b => b.textContent), \
         l.querySelector('.score').classList.contains('proven')]) : null; })()",
    )
    .await
}

async fn set_position(page: &Page<'_>, position: &str) {
    page.eval("document.getElementById('an-position').value = ''")
        .await;
    page.type_into("#an-position", position).await;
    page.click("#an-set").await;
    page.wait_for(&format!(
        "document.getElementById('an-board').dataset.position === {}",
        js(position)
    ))
    .await;
}

async fn analyse(page: &Page<'_>, limit: &str, lines: u32) -> Value {
    let set = page.eval(&format!(
        "document.getElementById('an-limit').value = {}; document.getElementById('an-multipv').value = '{lines}'; \
         [document.getElementById('an-limit').value, document.getElementById('an-multipv').value]",
        js(limit)
    ))
    .await;
    assert_eq!(set, json!([limit, lines.to_string()]));
    page.eval("document.getElementById('an-lines').replaceChildren()")
        .await;
    page.click("#an-run").await;
    lines_of(page).await
}

async fn board_position(page: &Page<'_>, ply: usize) -> String {
    page.wait_for(&format!(
        "document.getElementById('an-board').dataset.ply === '{ply}' && document.getElementById('an-board').dataset.position"
    ))
    .await
    .as_str()
    .unwrap()
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_analysis_shows_lines_and_plays_them_step_by_step() {
    let _one = ONE_AT_A_TIME.lock().await;
    let service = Service::start().await;
    let browser = Browser::launch().await;
    let page = browser.page(DESKTOP.0, DESKTOP.1, false).await;
    page.goto(&format!("{}/#analyse", service.base)).await;

    // A proven win is shown as one: p1's pawn on b1 (level 2) steps onto c1 (level 3).
    set_position(&page, "00000/00000/00o000/0x0000/02x30o0 1").await;
    let lines = analyse(&page, "depth:4", 1).await;
    assert_eq!(lines[0][0], "win in 1", "{lines}");
    assert_eq!(lines[0][1], json!(["b1-c1"]));
    assert_eq!(lines[0][2], true, "a proven score is marked");

    // Three lines with heuristic scores; the best line is played step by step.
    let root = "00000/00o00x0/00000/00x00o0/00000 1";
    set_position(&page, root).await;
    let lines = analyse(&page, "depth:4", 3).await;
    let lines = lines.as_array().unwrap();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let firsts: BTreeSet<String> = lines.iter().map(|l| l[1][0].to_string()).collect();
    assert_eq!(firsts.len(), 3, "three different moves");
    for l in lines {
        let score = l[0].as_str().unwrap();
        assert!(
            score.parse::<f64>().is_ok() && score.contains('.'),
            "a heuristic score in pawn units: {score}"
        );
    }
    let pv: Vec<String> = serde_json::from_value(lines[0][1].clone()).unwrap();
    assert!(pv.len() >= 2, "the best line has a continuation: {pv:?}");
    let expected = service.positions_after("pillarz", root, &pv).await;
    page.click("#an-lines li:first-child .play-line").await;
    assert_eq!(board_position(&page, 1).await, expected[0]);
    // The keyboard steps on through the line, and back.
    page.eval("document.activeElement.blur()").await;
    page.press("ArrowRight").await;
    assert_eq!(board_position(&page, 2).await, expected[1]);
    page.press("Home").await;
    assert_eq!(board_position(&page, 0).await, root);
    // A move clicked at a position of the line replaces the rest of the line.
    page.press("ArrowRight").await;
    board_position(&page, 1).await;
    let reply = service
        .post(
            "/v1/analysis",
            json!({"game": "pillarz", "position": expected[0], "limits": {"depth": 1}}),
            None,
        )
        .await["best_move"]
        .as_str()
        .unwrap()
        .to_string();
    for token in clicks("pillarz", &reply, &expected[0], false) {
        // The first click fetches the legal moves; later ones wait for the marked squares.
        let selector = format!("#an-board [data-point=\"{token}\"]");
        page.wait_for(&format!("document.querySelector({})", js(&selector)))
            .await;
        page.click(&selector).await;
        page.wait_for(&format!(
            "document.querySelector({}).classList.contains('selected') || document.getElementById('an-board').dataset.ply === '2'",
            js(&selector)
        ))
        .await;
    }
    let after = service
        .positions_after("pillarz", &expected[0], std::slice::from_ref(&reply))
        .await;
    assert_eq!(board_position(&page, 2).await, after[0]);
    let path = page
        .eval("[...document.querySelectorAll('#an-path button')].map(b => b.textContent)")
        .await;
    assert_eq!(path, json!([pv[0], reply]));
    if let Some(dir) = screenshots() {
        analyse(&page, "depth:4", 3).await;
        page.screenshot(&dir.join("analysis-desktop.png")).await;
        let phone = browser.page(PHONE.0, PHONE.1, true).await;
        phone
            .goto(&format!(
                "{}/#analyse&kind=alcazar&position={}",
                service.base,
                "b5,c6,d7,e2,e8,f3,g4,h5 b8 h2 1 -"
                    .replace(' ', "%20")
                    .replace(',', "%2C")
            ))
            .await;
        analyse(&phone, "depth:4", 3).await;
        phone.screenshot(&dir.join("analysis-phone.png")).await;
        assert_no_errors(&phone, "the analysis on a phone");
        phone.close().await;
    }

    // Any ply of a stored game: its positions come from the game's events.
    let created = service
        .post("/v1/games", json!({"game": "pyrga"}), None)
        .await;
    let id = created["game"]["id"].as_str().unwrap();
    let mut positions = vec![created["game"]["position"].as_str().unwrap().to_string()];
    for m in ["Sb2", "Tc2N", "Cc3", "Sc3"] {
        let turn = if positions.len() % 2 == 1 { "p1" } else { "p2" };
        let after = service
            .post(
                &format!("/v1/games/{id}/moves"),
                json!({"move": m}),
                created["tokens"][turn].as_str(),
            )
            .await;
        positions.push(after["position"].as_str().unwrap().to_string());
    }
    page.goto(&format!("{}/#analyse&from={id}&ply=2", service.base))
        .await;
    // (A change of the fragment alone: the page routes without reloading.)
    page.wait_for(&format!(
        "document.getElementById('an-board').dataset.position === {}",
        js(&positions[2])
    ))
    .await;
    assert_eq!(board_position(&page, 2).await, positions[2]);
    page.press("End").await;
    assert_eq!(board_position(&page, 4).await, positions[4]);
    let lines = analyse(&page, "depth:4", 2).await;
    assert_eq!(lines.as_array().unwrap().len(), 2);
    assert_no_errors(&page, "the analysis");
}

/// The page holds seat tokens and has a resign button, and the docs page sends requests: no
/// other site may show them in a frame of its own and have its visitor click there
/// (clickjacking). A route without those headers, in the same frame, is the control: it shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_site_cannot_show_the_pages_in_a_frame() {
    let _one = ONE_AT_A_TIME.lock().await;
    let service = Service::start().await;
    // The other site: a page on another port, whose frame shows the path after its `#`.
    let site = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let site_url = format!("http://127.0.0.1:{}/", site.local_addr().unwrap().port());
    // `loaded` once the frame has loaded what it was sent to: the service's page, or the
    // browser's error page in its place (both of another origin, unlike the first, empty
    // document every frame starts with).
    let html = format!(
        "<!doctype html><body><script>\
         const frame = document.createElement('iframe');\
         frame.onload = () => {{\
           try {{ frame.contentWindow.location.href; }} catch {{ document.title = 'loaded'; }}\
         }};\
         frame.src = '{}' + location.hash.slice(1);\
         document.body.appendChild(frame);\
         </script></body>",
        service.base
    );
    let server = actix_web::HttpServer::new(move || {
        let html = html.clone();
        actix_web::App::new().default_service(actix_web::web::to(move || {
            let html = html.clone();
            async move {
                actix_web::HttpResponse::Ok()
                    .content_type("text/html")
                    .body(html)
            }
        }))
    })
    .workers(1)
    .listen(site)
    .unwrap()
    .run();
    tokio::spawn(server);
    let browser = Browser::launch().await;
    let page = browser.page(DESKTOP.0, DESKTOP.1, false).await;
    for (path, shown) in [("/healthz/live", true), ("/", false), ("/docs", false)] {
        page.call(
            "Page.navigate",
            json!({ "url": format!("{site_url}?{path}#{path}") }),
        )
        .await;
        page.wait_for("document.title === 'loaded'").await;
        let url = format!("{}{path}", service.base);
        let tree = page.call("Page.getFrameTree", json!({})).await;
        let frame = &tree["frameTree"]["childFrames"][0]["frame"];
        // A refused frame shows the browser's error page instead.
        assert_eq!(frame["url"] == json!(url), shown, "{path}: {frame}");
    }
}
