//! The CLI client, run as the real binary against a real server started here (embedded store).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use pillarz::service::configuration::Settings;
use pillarz::service::startup::Application;
use serde_json::Value;

struct Server {
    url: String,
    tokens: PathBuf,
    _dir: TempDir,
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn server() -> Server {
    server_with(Settings::for_tests()).await
}

async fn server_with(settings: Settings) -> Server {
    server_with_thinker(settings, pillarz::service::engine_seats::engine_thinker()).await
}

async fn server_with_thinker(
    settings: Settings,
    thinker: pillarz::service::engine_seats::Thinker,
) -> Server {
    let app = Application::build_with(settings, thinker).unwrap();
    let url = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(app.run_until_stopped());
    let dir = std::env::temp_dir().join(format!("pillarz-cli-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    Server {
        url,
        tokens: dir.join("tokens.json"),
        _dir: TempDir(dir),
    }
}

impl Server {
    /// `pillarz <args>` against this server.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pillarz"));
        command
            .args(args)
            .env("PILLARZ_URL", &self.url)
            .env("PILLARZ_TOKENS", &self.tokens);
        command
    }

    /// Runs `pillarz <args>` against this server, with `stdin` as its input.
    async fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut command = self.command(args);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let input = stdin.to_string();
        tokio::task::spawn_blocking(move || {
            let mut child = command.spawn().unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        })
        .await
        .unwrap()
    }

    async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, "").await;
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    async fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        serde_json::from_str(&self.ok(&all).await).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn catalog_new_show_moves_move_clock_resign() {
    let s = server().await;
    let catalog = s.ok(&["catalog"]).await;
    assert!(catalog.contains("alcazar") && catalog.contains("size-8,jumpers"));
    assert_eq!(
        s.json(&["catalog"]).await["games"]
            .as_array()
            .unwrap()
            .len(),
        4
    );

    let id = s
        .ok(&["new", "pillarz", "--clock", "5m+3s"])
        .await
        .trim()
        .to_string();
    assert_eq!(id.len(), 36);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&s.tokens).unwrap()).unwrap();
    assert_eq!(
        saved[&id].as_object().unwrap().len(),
        2,
        "both tokens saved"
    );

    let shown = s.ok(&["show", &id]).await;
    assert!(
        shown.contains("p1 to move") && shown.contains("clock p1: 4:5")
            || shown.contains("clock p1: 5:00"),
        "{shown}"
    );
    let moves = s.ok(&["moves", &id]).await;
    assert_eq!(moves.split_whitespace().count(), 300);
    let played = s.ok(&["move", &id, " C2 + B1 "]).await;
    assert!(played.starts_with("played b1+c2"), "{played}");
    let view = s.json(&["show", &id]).await;
    assert_eq!(view["moves"], serde_json::json!(["b1+c2"]));
    assert_eq!(view["turn"], "p2");
    let clock = s.ok(&["clock", &id]).await;
    assert!(clock.contains("clock p2") && clock.contains("(running)"));
    assert!(
        s.json(&["clock", &id]).await["remaining_ms"]["p1"]
            .as_u64()
            .unwrap()
            > 300_000
    );
    let resigned = s.ok(&["resign", &id, "--seat", "p2"]).await;
    assert!(resigned.contains("p2 resigned") && resigned.contains("finished: p1 (resign)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn analyze_a_game_and_a_position() {
    let s = server().await;
    let id = s.ok(&["new", "alcazar"]).await.trim().to_string();
    let text = s
        .ok(&["analyze", &id, "--depth", "3", "--multipv", "2"])
        .await;
    assert!(text.contains("best move:") && text.contains("depth 3") && text.contains("2. "));
    let json = s
        .json(&[
            "analyze",
            "--game",
            "pillarz",
            "--position",
            "0o00x00/1231x0/21o040/11200/01000 2",
            "--depth",
            "5",
        ])
        .await;
    assert_eq!(json["score"], serde_json::json!({"win_in": 3}));
    let timed = s
        .json(&[
            "analyze",
            "--game",
            "pyrga",
            "--position",
            "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 -",
            "--movetime",
            "200ms",
        ])
        .await;
    assert!(timed["time_ms"].as_u64().unwrap() < 2000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn analyze_batch_reports_every_line_and_keeps_going() {
    let s = server().await;
    let file = s.tokens.with_file_name("batch.txt");
    std::fs::write(
        &file,
        [
            "b5,c6,d7,e2,e8,f3,g4,h5 b8 h2 1 -",
            "# a comment",
            "not a position",
            r#"{"game": "pillarz", "position": "00000/00o00x0/00000/00x00o0/00000 1"}"#,
            r#"{"game": "chess", "position": "8/8 w"}"#,
            "{broken json",
            "b5,c6,d7,d9,e2,f3,g4,h5 b8 h2 2 d9",
        ]
        .join("\n"),
    )
    .unwrap();
    let out = s
        .run(
            &[
                "analyze-batch",
                file.to_str().unwrap(),
                "--game",
                "alcazar",
                "--depth",
                "2",
                "--concurrency",
                "3",
            ],
            "",
        )
        .await;
    assert_eq!(out.status.code(), Some(1), "failures make the exit code 1");
    let results: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let lines: Vec<u64> = results
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(
        lines,
        [1, 3, 4, 5, 6, 7],
        "one result per input line, in order"
    );
    let ok: Vec<bool> = results.iter().map(|r| r["ok"] == true).collect();
    assert_eq!(ok, [true, false, true, false, false, true]);
    assert_eq!(results[1]["error"]["code"], "bad_position");
    assert_eq!(results[3]["error"]["code"], "bad_request");
    assert_eq!(results[4]["error"]["code"], "bad_input");
    assert!(results[0]["analysis"]["best_move"].is_string());
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("6 positions, 3 failed")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scripted_play_session_through_stdin() {
    let s = server().await;
    let out = s
        .run(
            &["play", "pyrga", "--vs-engine", "1"],
            "?\nSb2\nnonsense\nresign\n",
        )
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("you play p1 against the level-1 engine"),
        "{text}"
    );
    assert!(text.contains("legal moves: "), "{text}");
    assert!(text.contains("you played Sb2"), "{text}");
    assert!(text.contains("bad_notation"), "{text}");
    assert!(text.contains("finished: p2 (resign)"), "{text}");
    assert!(text.contains("game over"));
    // The engine answered the first move before the resignation.
    assert!(text.contains("moves: Sb2 "), "{text}");
}

/// While the engine thinks, `play` waits on the game's stream: it asked for the view 20 times a
/// second, and a caller's read quota (3 a second here) refused it within the engine's think.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn play_waits_for_the_engine_on_the_stream() {
    use pillarz::service::engine_seats::{Thinker, engine_thinker};
    use pillarz::service::quota::Quotas;
    let engine = engine_thinker();
    let slow: Thinker = std::sync::Arc::new(move |seat_engine, state, turn| {
        std::thread::sleep(std::time::Duration::from_secs(2));
        engine(seat_engine, state, turn)
    });
    let mut settings = Settings::for_tests();
    settings.anon_quotas = Some(Quotas::parse("read=3/s", Quotas::ANONYMOUS).unwrap());
    let s = server_with_thinker(settings, slow).await;
    let started = std::time::Instant::now();
    let out = s
        .run(&["play", "pyrga", "--vs-engine", "1"], "Sb2\nresign\n")
        .await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() >= std::time::Duration::from_secs(2));
    // The engine's answer came before the resignation, which ended the game.
    assert!(text.contains("moves: Sb2 "), "{text}");
    assert!(text.contains("finished: p2 (resign)"), "{text}");
}

#[tokio::test]
async fn errors_have_their_own_exit_codes() {
    let s = server().await;
    let refused = s
        .run(&["show", "6a3e7f3a-0000-4000-8000-000000000000"], "")
        .await;
    assert_eq!(refused.status.code(), Some(3));
    let err = String::from_utf8(refused.stderr).unwrap();
    assert!(err.starts_with("error: game_not_found: "), "{err}");
    assert_eq!(err.lines().count(), 1);
    let bad_args = s.run(&["new", "pillarz", "--clock", "5 parsecs"], "").await;
    assert_eq!(bad_args.status.code(), Some(2));
    let pyrga_id = s.ok(&["new", "pyrga"]).await;
    let no_token = s
        .run(
            &[
                "move",
                pyrga_id.trim(),
                "Sa1",
                "--seat",
                "p2",
                "--tokens-file",
                "/nonexistent/t.json",
            ],
            "",
        )
        .await;
    assert_eq!(no_token.status.code(), Some(2));
    let mut down = Command::new(env!("CARGO_BIN_EXE_pillarz"));
    let down = down
        .args(["catalog", "--server", "http://127.0.0.1:9"])
        .output()
        .unwrap();
    assert_eq!(down.status.code(), Some(5));
    assert!(
        String::from_utf8(down.stderr)
            .unwrap()
            .contains("cannot reach the server")
    );
}

/// With `--json`, an error is one JSON line on stderr with a stable code, and the same exit
/// code as without (it was the text line, which a script that asked for JSON cannot parse).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn errors_are_json_when_json_was_asked_for() {
    let s = server().await;
    let json_error = |out: &Output, exit: i32| -> Value {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(exit), "{err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        serde_json::from_str::<Value>(&err).unwrap_or_else(|e| panic!("{e}: {err}"))["error"]
            .clone()
    };
    let refused = s
        .run(
            &["show", "6a3e7f3a-0000-4000-8000-000000000000", "--json"],
            "",
        )
        .await;
    let error = json_error(&refused, 3);
    assert_eq!(error["code"], "game_not_found");
    assert_eq!(error["status"], 404);
    assert!(error["detail"].as_str().unwrap().contains("6a3e7f3a"));

    let bad_clock = s
        .run(&["new", "pillarz", "--clock", "5 parsecs", "--json"], "")
        .await;
    assert_eq!(json_error(&bad_clock, 2)["code"], "bad_input");
    // clap's own usage errors too, once `--json` is on the line.
    let no_move = s.run(&["move", "--json", "some-id"], "").await;
    let error = json_error(&no_move, 2);
    assert_eq!(error["code"], "bad_input");
    assert!(
        error["detail"].as_str().unwrap().contains("<MOVE>"),
        "{error}"
    );

    let mut down = s.command(&["catalog", "--json", "--server", "http://127.0.0.1:9"]);
    let down = down.output().unwrap();
    let error = json_error(&down, 5);
    assert_eq!(error["code"], "network");
    assert!(
        error["detail"]
            .as_str()
            .unwrap()
            .contains("cannot reach the server")
    );

    // Help is still help, and without `--json` an error is still the text line.
    let help = s.run(&["show", "--json", "--help"], "").await;
    assert!(help.status.success() && String::from_utf8_lossy(&help.stdout).contains("Usage"));
    let text = s
        .run(&["show", "6a3e7f3a-0000-4000-8000-000000000000"], "")
        .await;
    assert!(String::from_utf8_lossy(&text.stderr).starts_with("error: game_not_found: "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn board_saves_an_svg_and_watch_follows_the_game_to_its_end() {
    board_and_watch(server().await).await;
}

/// The server ends every event stream after its lifetime (1 s here); `watch` resumes where it
/// was and follows the game to its end all the same, missing nothing and repeating nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn watch_resumes_a_stream_the_server_ended() {
    let mut settings = Settings::for_tests();
    settings.events_max_lifetime = std::time::Duration::from_secs(1);
    settings.events_heartbeat = std::time::Duration::from_millis(300);
    board_and_watch(server_with(settings).await).await;
}

async fn board_and_watch(s: Server) {
    let id = s.ok(&["new", "pyrga"]).await.trim().to_string();
    s.ok(&["move", &id, "Sb2"]).await;
    let file = s.tokens.with_file_name("board.svg");
    s.ok(&["board", &id, "-o", file.to_str().unwrap()]).await;
    let svg = std::fs::read_to_string(&file).unwrap();
    roxmltree::Document::parse(&svg).unwrap();
    assert!(
        svg.contains("Sb2"),
        "the last move is in the title position"
    );
    let before = s.ok(&["board", &id, "--ply", "0"]).await;
    assert!(before.contains("<title>-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 -</title>"));

    // Follow the game from another process while it is played to its end.
    let watcher = Command::new(env!("CARGO_BIN_EXE_pillarz"))
        .args(["watch", &id, "--json"])
        .env("PILLARZ_URL", &s.url)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    s.ok(&["move", &id, "Tc2N"]).await;
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    s.ok(&["resign", &id, "--seat", "p1"]).await;
    let out = tokio::task::spawn_blocking(move || watcher.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success());
    let versions: Vec<u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["version"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(
        versions,
        [2, 3, 4],
        "the current view, then every change, then the end"
    );
}

// ---- Hostile servers and concurrent users -------------------------------------------------

/// Many `new` commands at once (here: their saves, from threads) each keep their tokens: the
/// file is read, changed and written under a lock, through a temporary file of its own.
#[test]
fn concurrent_token_saves_keep_every_token_in_an_owner_only_file() {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::{Arc, Barrier};
    let dir = std::env::temp_dir().join(format!("pillarz-tokens-{}", uuid::Uuid::new_v4()));
    let _cleanup = TempDir(dir.clone());
    let path = dir.join("tokens.json");
    const SAVES: usize = 32;
    let start = Arc::new(Barrier::new(SAVES));
    let threads: Vec<_> = (0..SAVES)
        .map(|i| {
            let (path, start) = (path.clone(), start.clone());
            std::thread::spawn(move || {
                let seats = [(pillarz::api::Seat::P1, format!("token-{i}"))].into();
                start.wait();
                pillarz::client::tokens::save(&path, &format!("game-{i}"), &seats)
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap().unwrap();
    }
    let saved = pillarz::client::tokens::load(&path).unwrap();
    let missing: Vec<usize> = (0..SAVES)
        .filter(|i| !saved.contains_key(&format!("game-{i}")))
        .collect();
    assert!(missing.is_empty(), "tokens of games {missing:?} were lost");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "mode {mode:o}");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "tokens.json" && name != "tokens.json.lock")
        .collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}

/// What a fake server does on one connection.
enum Step {
    /// Writes these bytes.
    Send(Vec<u8>),
    /// Writes `times` blocks of 64 KiB of `x` (no newline), without holding them all at once.
    Flood { times: usize },
    /// Keeps the connection open and silent (for longer than any test waits).
    Stall,
}

fn text(s: &str) -> Step {
    Step::Send(s.as_bytes().to_vec())
}

/// One chunk of a chunked body.
fn chunk(s: &str) -> Step {
    Step::Send(format!("{:x}\r\n{s}\r\n", s.len()).into_bytes())
}

const CHUNKED_NDJSON: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n";
const LAST_CHUNK: &str = "0\r\n\r\n";

/// A complete JSON answer, closing the connection after it.
fn answer(status: &str, content_type: &str, body: &str) -> Step {
    text(&format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    ))
}

/// A raw HTTP server on loopback: the n-th connection (from 0) gets `script(n)`. Returns its
/// URL and the request heads it received, in order.
async fn fake_server(
    script: impl Fn(usize) -> Vec<Step> + Send + Sync + 'static,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = heads.clone();
    let script = std::sync::Arc::new(script);
    tokio::spawn(async move {
        for n in 0.. {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (seen, script) = (seen.clone(), script.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte).await {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let head = String::from_utf8_lossy(&head).to_lowercase();
                // Read the request's body too: a socket closed with unread bytes is reset, and
                // the reset may reach the client before it read the answer.
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |n| n.trim().parse().unwrap());
                let mut body = vec![0u8; length];
                if stream.read_exact(&mut body).await.is_err() {
                    return;
                }
                seen.lock().unwrap().push(head);
                let block = vec![b'x'; 64 * 1024];
                for step in script(n) {
                    let sent = match step {
                        Step::Send(bytes) => stream.write_all(&bytes).await,
                        Step::Flood { times } => {
                            let mut result = Ok(());
                            for _ in 0..times {
                                result = stream.write_all(&block).await;
                                if result.is_err() {
                                    break;
                                }
                            }
                            result
                        }
                        Step::Stall => {
                            tokio::time::sleep(std::time::Duration::from_secs(120)).await;
                            Ok(())
                        }
                    };
                    if sent.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, heads)
}

/// Runs `pillarz <args>` against `url`, killing it if it has not ended within `deadline`.
/// Returns its output and whether it ended by itself in time.
async fn run_within(url: &str, args: &[&str], deadline: std::time::Duration) -> (Output, bool) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pillarz"));
    command
        .args(args)
        .env("PILLARZ_URL", url)
        .env("PILLARZ_TOKENS", "/nonexistent/tokens.json")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        // Drain the pipes on threads so that a chatty child never blocks on them.
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let out = std::thread::spawn(move || {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut stdout, &mut v).unwrap();
            v
        });
        let err = std::thread::spawn(move || {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut stderr, &mut v).unwrap();
            v
        });
        let started = std::time::Instant::now();
        let mut in_time = true;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > deadline {
                in_time = false;
                child.kill().unwrap();
                break child.wait().unwrap();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let output = Output {
            status,
            stdout: out.join().unwrap(),
            stderr: err.join().unwrap(),
        };
        (output, in_time)
    })
    .await
    .unwrap()
}

/// A game view as the stream's `game` line, at `version`, ongoing or finished.
fn game_line(version: u64, finished: bool, mv: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({"event": "game", "version": version, "game": game_view(version, finished, mv)})
    )
}

/// A Pyrga game's view at `version`, ongoing or finished.
fn game_view(version: u64, finished: bool, mv: &str) -> Value {
    serde_json::json!({
        "id": "6a3e7f3a-0000-4000-8000-000000000000", "game": "pyrga", "variants": [],
        "start_position": "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 -",
        "position": "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 -", "turn": "p1", "ply": 0,
        "version": version, "status": if finished { "finished" } else { "ongoing" },
        "result": if finished { serde_json::json!("p1") } else { Value::Null },
        "termination": if finished { serde_json::json!("resign") } else { Value::Null },
        "moves": [mv], "clock": null, "engine_seats": {}
    })
}

/// An answer that declares a body of 100 GB is refused before its bytes are read, and the
/// client ends at once with exit 7 instead of reading until its timeout (or memory) runs out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_body_over_the_cap_is_refused_at_once() {
    let (url, _) = fake_server(|_| {
        vec![
            text("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000000000\r\n\r\n"),
            Step::Flood { times: 256 },
            Step::Stall,
        ]
    })
    .await;
    assert_show_stops_at_the_cap(&url, "declares 100000000000 bytes").await;
}

/// A chunked answer with this `head`, then 15 MB without a line's end, then nothing more.
fn endless_chunks(head: &str) -> Vec<Step> {
    let mut steps = vec![text(head)];
    let block = "x".repeat(60_000);
    for _ in 0..256 {
        steps.push(chunk(&block));
    }
    steps.push(Step::Stall);
    steps
}

/// An answer without a length (chunked) is read up to the cap and no further.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_without_a_length_is_cut_at_the_cap() {
    let (url, _) = fake_server(|_| {
        endless_chunks(
            "HTTP/1.1 404 Not Found\r\ncontent-type: application/problem+json\r\ntransfer-encoding: chunked\r\n\r\n",
        )
    })
    .await;
    assert_show_stops_at_the_cap(&url, "runs past the 4194304 bytes").await;
}

/// `pillarz show` against `url` ends in time (without the cap it reads until its 5 s timeout
/// or its memory runs out) with exit 7 and an error that says `why`.
async fn assert_show_stops_at_the_cap(url: &str, why: &str) {
    let deadline = std::time::Duration::from_secs(30);
    let (out, in_time) = run_within(url, &["show", "x", "--timeout", "5s"], deadline).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(in_time, "still reading after {deadline:?}");
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(err.contains(why), "{err}");
}

/// A stream that goes silent (no line, not even a heartbeat) for longer than the idle timeout
/// is given up and resumed after the last version seen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_resumes_a_stream_that_went_silent() {
    let (url, heads) = fake_server(|n| match n {
        0 => vec![
            text(CHUNKED_NDJSON),
            chunk(&game_line(2, false, "Sb2")),
            Step::Stall,
        ],
        _ => the_last_stream(),
    })
    .await;
    let deadline = std::time::Duration::from_secs(30);
    let (out, in_time) = run_within(
        &url,
        &[
            "watch",
            "x",
            "--json",
            "--timeout",
            "2s",
            "--idle-timeout",
            "1s",
        ],
        deadline,
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        in_time,
        "still waiting on a silent stream after {deadline:?}"
    );
    assert!(out.status.success(), "{err}");
    let heads = heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert!(heads[1].contains("last-event-id: 2\r\n"), "{}", heads[1]);
    assert_eq!(versions(&out.stdout), [2, 3]);
}

/// The stream a resumed `watch` gets in these tests: the game's last change (version 3, the
/// end), and the stream's end.
fn the_last_stream() -> Vec<Step> {
    vec![
        text(CHUNKED_NDJSON),
        chunk(&game_line(3, true, "Sb2")),
        text(LAST_CHUNK),
    ]
}

/// The versions of `watch --json`'s lines, in order.
fn versions(stdout: &[u8]) -> Vec<u64> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["version"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// A line that never ends is refused once it passes the cap, not buffered without end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_refuses_a_line_without_end() {
    let (url, _) = fake_server(|_| endless_chunks(CHUNKED_NDJSON)).await;
    let deadline = std::time::Duration::from_secs(30);
    let (out, in_time) = run_within(&url, &["watch", "x", "--json"], deadline).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(in_time, "still buffering a line after {deadline:?}");
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(err.contains("line"), "{err}");
}

/// A problem+json refusal with this status (`"503 Service Unavailable"`), and a
/// `Retry-After` if given, closing the connection after it.
fn refusal(status: &str, retry_after: Option<u64>) -> String {
    let (code, reason) = status.split_once(' ').unwrap();
    let body = format!(
        r#"{{"type":"/problems/x","title":"{reason}","status":{code},"code":"x","detail":"not now"}}"#
    );
    let retry_after = retry_after.map_or(String::new(), |s| format!("retry-after: {s}\r\n"));
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/problem+json\r\n{retry_after}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// `watch` of a game whose first stream ends at version 2, whose reconnection is answered
/// `answer`, and whose next stream brings its end: it must resume, repeating nothing and
/// missing nothing. Returns how long it took.
async fn watch_through_an_answer_on_reconnect(answer: String) -> std::time::Duration {
    let (url, heads) = fake_server(move |n| match n {
        0 => vec![
            text(CHUNKED_NDJSON),
            chunk(&game_line(2, false, "Sb2")),
            text(LAST_CHUNK),
        ],
        1 => vec![text(&answer)],
        _ => the_last_stream(),
    })
    .await;
    let deadline = std::time::Duration::from_secs(30);
    let started = std::time::Instant::now();
    let (out, in_time) = run_within(&url, &["watch", "x", "--json"], deadline).await;
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(in_time, "{err}");
    assert!(out.status.success(), "exit {:?}: {err}", out.status.code());
    assert_eq!(heads.lock().unwrap().len(), 3);
    assert_eq!(versions(&out.stdout), [2, 3]);
    took
}

/// A server busy for a moment (503) when `watch` reconnects is waited out, as when the
/// connection is cut, not taken for a refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_resumes_after_a_503_on_reconnect() {
    watch_through_an_answer_on_reconnect(refusal("503 Service Unavailable", None)).await;
}

#[test]
fn terminal_escaping_escapes_control_characters_and_keeps_the_rest() {
    let text = "a\u{1b}]0;x\u{7}b\u{9b}c\u{7f}\nd é\u{202e}f\u{2066}";
    assert_eq!(
        pillarz::client::terminal::escape_controls(text, true),
        "a\\u{1b}]0;x\\u{7}b\\u{9b}c\\u{7f}\nd é\\u{202e}f\\u{2066}"
    );
    assert_eq!(
        pillarz::client::terminal::escape_controls(text, false),
        "a\\u{1b}]0;x\\u{7}b\\u{9b}c\\u{7f}\\nd é\\u{202e}f\\u{2066}"
    );
    assert!(matches!(
        pillarz::client::terminal::escape_controls("plain", false),
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn json_keeps_its_value_without_raw_controls() {
    let value = serde_json::json!({"detail": "a\u{1b}b\u{9b}c\u{7f}d\u{202e}é"});
    let text = serde_json::to_string(&value).unwrap().replace(':', ":\t\r");
    let escaped = pillarz::client::terminal::escape_json_controls(&text);
    assert_eq!(escaped, r#"{"detail":  "a\u001bb\u009bc\u007fd\u202eé"}"#);
    let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
    assert_eq!(back, value);
}

/// Whether output holds a raw control or bidirectional character but a newline.
fn is_raw(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes)
        .chars()
        .any(|c| pillarz::client::terminal::is_hidden(c) && c != '\n')
}

/// Terminal control sequences and bidirectional overrides sent by a server (in a problem's
/// detail, in a game's moves) reach the terminal escaped, never as they are; `--json` keeps
/// them JSON-escaped (DEL, the C1 controls and the overrides too, which JSON itself allows
/// raw).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_characters_from_a_server_are_escaped_for_the_terminal() {
    const EVIL: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}31m\u{202e}";
    let problem = serde_json::json!({"type": "/problems/game_not_found", "title": "Not Found",
        "status": 404, "code": "game_not_found", "detail": format!("no game {EVIL} here")});
    let view: Value =
        serde_json::from_str::<Value>(game_line(2, false, EVIL).trim()).unwrap()["game"].clone();
    let (problem, view) = (problem.to_string(), view.to_string());
    let (url, _) = fake_server(move |n| match n {
        0 => vec![answer(
            "404 Not Found",
            "application/problem+json",
            &problem,
        )],
        1 | 2 => vec![answer("200 OK", "application/json", &view)],
        _ => vec![
            text(CHUNKED_NDJSON),
            chunk(&game_line(3, true, EVIL)),
            text(LAST_CHUNK),
        ],
    })
    .await;
    let deadline = std::time::Duration::from_secs(30);
    let (refused, _) = run_within(&url, &["show", "x"], deadline).await;
    assert_eq!(refused.status.code(), Some(3));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !is_raw(&refused.stderr),
        "raw control characters in {err:?}"
    );
    assert!(err.contains("no game \\u{1b}]0;owned\\u{7}"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let (shown, _) = run_within(&url, &["show", "x"], deadline).await;
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(!is_raw(&shown.stdout), "raw control characters in {text:?}");
    assert!(text.contains("moves: \\u{1b}]0;owned"), "{text}");

    let (json, _) = run_within(&url, &["show", "x", "--json"], deadline).await;
    assert!(!is_raw(&json.stdout));
    let value: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["moves"][0], EVIL, "JSON keeps the string, escaped");

    let (watched, _) = run_within(&url, &["watch", "x", "--json"], deadline).await;
    assert!(watched.status.success());
    assert!(!is_raw(&watched.stdout));
    let line: Value = serde_json::from_slice(&watched.stdout).unwrap();
    assert_eq!(line["game"]["moves"][0], EVIL);
}

/// A server that takes the connection and never answers it is given up after `--timeout`; so
/// is one that sends a refusal's head at once but never its body (the stream's client has no
/// overall timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_gives_up_on_a_server_that_never_answers() {
    const REFUSAL_HEAD: &str = "HTTP/1.1 404 Not Found\r\ncontent-type: application/problem+json\r\ncontent-length: 500\r\n\r\n{";
    for head in [None, Some(REFUSAL_HEAD)] {
        let (url, _) =
            fake_server(move |_| head.map(text).into_iter().chain([Step::Stall]).collect()).await;
        let deadline = std::time::Duration::from_secs(30);
        let (out, in_time) = run_within(&url, &["watch", "x", "--timeout", "1s"], deadline).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(in_time, "still waiting after {deadline:?}, sent {head:?}");
        assert_eq!(out.status.code(), Some(6), "{err}");
    }
}

/// More analyses in flight than the service's share for one caller (2 here: 2 workers, a
/// queue of 6) are refused `429` with `Retry-After`; `analyze-batch` waits as it is told and
/// tries again, and every line succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn analyze_batch_waits_out_the_share_of_the_analysis_pool() {
    use pillarz::service::quota::Quotas;
    let mut settings = Settings::for_tests();
    settings.anon_quotas = Some(Quotas::parse("analysis=600000/min", Quotas::ANONYMOUS).unwrap());
    settings.analysis.queue = 6;
    let s = server_with(settings).await;
    let refused_before = share_refusals(&s).await;
    let file = s.tokens.with_file_name("batch.txt");
    std::fs::write(&file, "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 -\n".repeat(8)).unwrap();
    let out = s
        .run(
            &[
                "analyze-batch",
                file.to_str().unwrap(),
                "--game",
                "pyrga",
                "--movetime",
                "300ms",
                "--concurrency",
                "4",
            ],
            "",
        )
        .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let failed: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.contains("\"ok\":true"))
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(stdout.lines().count(), 8);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("8 positions, 0 failed"));
    assert!(
        share_refusals(&s).await > refused_before,
        "no request was refused for the caller's share: the retries were not tested"
    );
}

/// How many analyses the service refused (`429`) for a caller's share of the pool, from its
/// `/metrics` (the process's: only the test above turns quotas on, and with them the share).
async fn share_refusals(s: &Server) -> u64 {
    let metrics = reqwest::get(format!("{}/metrics", s.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(r#"pillarz_rate_limited_total{class="analysis_share"} "#))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// `Retry-After: 0` does not make the client send its tries back to back: it waits at least
/// a quarter of a second between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_of_zero_still_spaces_the_tries() {
    let refused = refusal("429 Too Many Requests", Some(0));
    let (url, heads) = fake_server(move |_| vec![text(&refused)]).await;
    let client = pillarz::client::ApiClient::new(&url, std::time::Duration::from_secs(5));
    let started = std::time::Instant::now();
    let result = client
        .post_retrying(
            "/v1/analysis",
            &serde_json::json!({}),
            4,
            std::time::Duration::from_secs(10),
        )
        .await;
    assert!(
        matches!(result, Err(pillarz::client::ClientError::Refused(_))),
        "{result:?}"
    );
    assert_eq!(heads.lock().unwrap().len(), 5, "the first try and 4 more");
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(1000),
        "4 waits took only {:?}",
        started.elapsed()
    );
}

/// The id `new` prints and the lines `analyze-batch` writes come from the server too: they
/// reach the terminal without a raw control character (DEL and C1 ones included, which JSON
/// allows raw).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_and_analyze_batch_escape_the_servers_text() {
    const EVIL: &str = "g\u{1b}]0;owned\u{7}\u{9b}31m\u{7f}";
    let dir = std::env::temp_dir().join(format!("pillarz-escape-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let _cleanup = TempDir(dir.clone());
    let deadline = std::time::Duration::from_secs(30);

    let mut view: Value =
        serde_json::from_str::<Value>(game_line(1, false, "Sb2").trim()).unwrap()["game"].clone();
    view["id"] = EVIL.into();
    let created = serde_json::json!({"game": view, "tokens": {"p1": "t1", "p2": "t2"}}).to_string();
    let (url, _) =
        fake_server(move |_| vec![answer("201 Created", "application/json", &created)]).await;
    let tokens = dir.join("tokens.json");
    let (out, _) = run_within(
        &url,
        &["new", "pyrga", "--tokens-file", tokens.to_str().unwrap()],
        deadline,
    )
    .await;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(!is_raw(&out.stdout), "raw control characters in {stdout:?}");
    assert!(!is_raw(&out.stderr), "raw control characters in {stderr:?}");
    assert!(stdout.contains("g\\u{1b}]0;owned"), "{stdout}");

    let analysis = serde_json::json!({"best_move": EVIL}).to_string();
    let (url, _) =
        fake_server(move |_| vec![answer("200 OK", "application/json", &analysis)]).await;
    let file = dir.join("batch.txt");
    std::fs::write(&file, "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 -\n").unwrap();
    let (out, _) = run_within(
        &url,
        &["analyze-batch", file.to_str().unwrap(), "--game", "pyrga"],
        deadline,
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!is_raw(&out.stdout), "raw control characters in {stdout:?}");
    let line: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        line["analysis"]["best_move"], EVIL,
        "JSON keeps the string, escaped"
    );
}

/// When the tokens cannot be saved, the game exists on the server all the same: `new` fails,
/// but prints the game's seat tokens on stderr first, and they are the game's real tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn new_shows_the_tokens_it_could_not_save() {
    let s = server().await;
    let not_a_dir = s.tokens.with_file_name("a-file");
    std::fs::write(&not_a_dir, "").unwrap();
    let tokens = not_a_dir.join("tokens.json");
    let out = s
        .run(
            &["new", "pyrga", "--tokens-file", tokens.to_str().unwrap()],
            "",
        )
        .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let shown: Value = err
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no tokens on stderr: {err}"));
    let id = shown["game"].as_str().unwrap();
    let p1 = shown["tokens"]["p1"].as_str().unwrap();
    // With `--json`, the tokens are in the one line of the error.
    let out = s
        .run(
            &[
                "new",
                "alcazar",
                "--json",
                "--tokens-file",
                tokens.to_str().unwrap(),
            ],
            "",
        )
        .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let error: Value = serde_json::from_str(&err).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(error["error"]["code"], "tokens_not_saved");
    assert_eq!(error["error"]["tokens"].as_object().unwrap().len(), 2);
    assert_ne!(error["error"]["game"].as_str().unwrap(), id);
    let moved = reqwest::Client::new()
        .post(format!("{}/v1/games/{id}/moves", s.url))
        .bearer_auth(p1)
        .json(&serde_json::json!({"move": "Sb2"}))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status(), 200, "the token shown plays the game");
}

/// `--idle-timeout 0` is a usage error, found before any request is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_refuses_an_idle_timeout_of_zero() {
    let (url, heads) = fake_server(|_| vec![Step::Stall]).await;
    let deadline = std::time::Duration::from_secs(30);
    let (out, in_time) = run_within(
        &url,
        &["watch", "x", "--idle-timeout", "0", "--timeout", "1s"],
        deadline,
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(in_time);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--idle-timeout"), "{err}");
    assert!(heads.lock().unwrap().is_empty(), "a request was sent");
}

/// A `429` on reconnecting (the abandoned stream still counted by the `streams` quota) is
/// waited out as long as its `Retry-After` asks, then the stream is resumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_resumes_after_a_429_on_reconnect() {
    let took =
        watch_through_an_answer_on_reconnect(refusal("429 Too Many Requests", Some(2))).await;
    assert!(
        took >= std::time::Duration::from_secs(2),
        "Retry-After: 2 was not waited out"
    );
}

/// `watch` against a server that answers every stream with `line` and then ends it, so that
/// no stream brings anything new (nor lasts): it must back off and give up after 8 such
/// resumptions in a row (exit 7), not reconnect back to back for ever (it once made ~11,000
/// requests in 5 s, each line reset its backoff). Returns how many requests it made.
async fn assert_watch_gives_up_on_fruitless_streams(line: String) -> usize {
    let (url, heads) =
        fake_server(move |_| vec![text(CHUNKED_NDJSON), chunk(&line), text(LAST_CHUNK)]).await;
    let deadline = std::time::Duration::from_secs(30);
    let (out, in_time) = run_within(&url, &["watch", "x", "--json"], deadline).await;
    let requests = heads.lock().unwrap().len();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        in_time,
        "still reconnecting after {deadline:?}: {requests} requests"
    );
    assert_eq!(out.status.code(), Some(7), "{err}");
    requests
}

/// Heartbeats alone (the game is never even sent) are no progress.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_gives_up_on_streams_of_one_heartbeat() {
    let requests =
        assert_watch_gives_up_on_fruitless_streams("{\"event\":\"heartbeat\"}\n".into()).await;
    assert_eq!(requests, 8, "8 fruitless resumptions, then the end");
}

/// The game at the version already seen, over and over, is no progress either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_gives_up_on_streams_that_repeat_the_same_version() {
    let requests = assert_watch_gives_up_on_fruitless_streams(game_line(2, false, "Sb2")).await;
    assert_eq!(requests, 9, "the first stream (new), then 8 fruitless ones");
}

/// A server that fakes progress on every stream (a newer version, then the end) is followed,
/// but its connections are spaced: at most a few a second, not thousands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_reconnects_at_most_a_few_times_a_second() {
    let (url, heads) = fake_server(|n| {
        vec![
            text(CHUNKED_NDJSON),
            chunk(&game_line(n as u64 + 1, false, "Sb2")),
            text(LAST_CHUNK),
        ]
    })
    .await;
    let (out, in_time) = run_within(
        &url,
        &["watch", "x", "--json"],
        std::time::Duration::from_secs(2),
    )
    .await;
    let requests = heads.lock().unwrap().len();
    assert!(!in_time, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(requests <= 10, "{requests} requests in 2 s");
    assert!(requests >= 2, "watch did not resume after progress");
}

/// A redirect is not followed: a move's `POST` turned into a `GET` by a `302` must not print
/// the game the `GET` found as the move played, and the seat's token must not follow it. Exit
/// 7, and the server saw the view's `GET` and the move's `POST`, nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_is_not_followed() {
    let view = game_view(2, false, "Sb2").to_string();
    let (url, heads) = fake_server(move |n| match n {
        1 => vec![text(
            "HTTP/1.1 302 Found\r\nlocation: /v1/games/x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        )],
        _ => vec![answer("200 OK", "application/json", &view)],
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    std::fs::write(&tokens, r#"{"x": {"p1": "secret-token"}}"#).unwrap();
    let deadline = std::time::Duration::from_secs(30);
    let (out, in_time) = run_within(
        &url,
        &["move", "x", "a1", "--tokens-file", tokens.to_str().unwrap()],
        deadline,
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(in_time, "{err}");
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(
        err.contains("302 Found") && err.contains("redirect"),
        "{err}"
    );
    let heads = heads.lock().unwrap();
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert!(heads[1].starts_with("post "), "{heads:?}");
}

/// `play` against a server whose new game has no token for the player's seat ends with exit 7
/// and says so (it panicked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_without_a_token_for_its_seat_says_so() {
    let (url, _) = fake_server(|_| {
        let created = serde_json::json!({"game": game_view(0, false, "Sb2"), "tokens": {}});
        vec![answer(
            "201 Created",
            "application/json",
            &created.to_string(),
        )]
    })
    .await;
    let deadline = std::time::Duration::from_secs(30);
    let (out, in_time) = run_within(&url, &["play", "pyrga", "--vs-engine", "1"], deadline).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(in_time, "{err}");
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(err.contains("without a token for p1"), "{err}");
}

/// A stream whose change does not follow the version `watch` has is not followed (a server
/// that sends changes out of order, or endless changes to nothing, is not piled up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_refuses_a_change_out_of_order() {
    let (url, _) = fake_server(|_| {
        let mut change = game_view(5, false, "Sb2");
        change["kind"] = "move".into();
        change["at"] = 0.into();
        change["seat"] = "p1".into();
        change["move"] = "Sb2".into();
        let line = serde_json::json!({"event": "change", "version": 5, "change": change});
        vec![
            text(CHUNKED_NDJSON),
            chunk(&game_line(1, false, "Sb2")),
            chunk(&format!("{line}\n")),
            Step::Stall,
        ]
    })
    .await;
    let deadline = std::time::Duration::from_secs(30);
    let (out, in_time) = run_within(&url, &["watch", "x", "--json"], deadline).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(in_time, "{err}");
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(
        err.contains("a change to version 5 after version 1"),
        "{err}"
    );
}

/// `analyze-batch` names a failure that is not the server's by what it was: an answer that
/// breaks the API is `protocol`, not `network`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_batch_names_a_broken_answer_protocol() {
    let (url, _) = fake_server(|_| vec![answer("200 OK", "application/json", "not json")]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("positions.txt");
    std::fs::write(&file, "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 -\n").unwrap();
    let deadline = std::time::Duration::from_secs(30);
    let (out, in_time) = run_within(
        &url,
        &["analyze-batch", file.to_str().unwrap(), "--game", "pyrga"],
        deadline,
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(in_time, "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["ok"], false, "{result}");
    assert_eq!(result["error"]["code"], "protocol", "{result}");
}

/// Runs `command` with its standard output a pipe whose reader has gone already, as
/// `pillarz … | head -0` leaves it: every write to it fails with `EPIPE`. A command still
/// running after 30 s (one that went on as if read) is killed, and the test fails.
async fn run_unread(mut command: Command) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    command
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped());
    tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("{command:?} went on with nobody reading it");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

/// Whether a command ended as a closed pipe should end it: exit 0, and nothing on stderr (no
/// panic, no "error: Broken pipe").
fn assert_quiet(args: &[&str], out: &Output) {
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{args:?} into a closed pipe: {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `pillarz bench | head -1` panicked ("failed printing to stdout: Broken pipe", exit 101):
/// a reader that has what it wanted and goes away is not a failure of the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_command_whose_reader_went_away_ends_quietly() {
    let offline: [&[&str]; 5] = [
        &["openapi"],
        &["perft", "pillarz", "2", "--divide"],
        &["bench"],
        &["bench-movegen", "--quick"],
        &[
            "match",
            "pyrga",
            "random",
            "greedy",
            "--games",
            "2",
            "--verbose",
        ],
    ];
    for args in offline {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pillarz"));
        command.args(args);
        assert_quiet(args, &run_unread(command).await);
    }

    let s = server().await;
    let id = s.ok(&["new", "pyrga"]).await.trim().to_string();
    let id = id.as_str();
    // (It failed on an untimed game: "unexpected answer from the server: invalid type: null".)
    assert_eq!(
        s.ok(&["clock", id]).await,
        "no clock: the game is untimed\n"
    );
    let batch = s.tokens.with_file_name("batch.txt");
    std::fs::write(&batch, "-,-,-,-/-,-,-,-/-,-,-,-/-,-,-,- 1 -\n").unwrap();
    let batch = batch.to_str().unwrap();
    let client: [&[&str]; 14] = [
        &["catalog"],
        &["play", "pyrga", "--vs-engine", "1"],
        &["analyze-batch", batch, "--game", "pyrga", "--depth", "2"],
        &["catalog", "--json"],
        &["new", "alcazar"],
        &["show", id],
        &["moves", id],
        &["clock", id],
        &["board", id],
        &["analyze", id, "--depth", "2"],
        &["analyze", id, "--depth", "2", "--json"],
        // The game goes on: `watch` would wait for its end, but stops at its first line.
        &["watch", id],
        &["move", id, "Sa1"],
        &["resign", id, "--seat", "p2"],
    ];
    for args in client {
        assert_quiet(args, &run_unread(s.command(args)).await);
    }
    // The server did what was asked: only the printing of its answer had no reader.
    let view = s.json(&["show", id]).await;
    assert_eq!(view["moves"], serde_json::json!(["Sa1"]));
    assert_eq!(view["status"], "finished");
}

/// Any other failure to write is still an error (a full disk behind a redirection), the
/// engine protocol's included (it ignored every failed write), and JSON with `--json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_write_to_standard_output_is_an_error() {
    let s = server().await;
    let into_full = |mut command: Command, stdin: &str| {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        command
            .stdin(Stdio::piped())
            .stdout(full)
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.as_bytes()).unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{command:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let mut openapi = Command::new(env!("CARGO_BIN_EXE_pillarz"));
    openapi.arg("openapi");
    let mut engine = Command::new(env!("CARGO_BIN_EXE_pillarz"));
    engine.arg("engine");
    for (command, stdin) in [(openapi, ""), (engine, "isready\nisready\n")] {
        let stderr = into_full(command, stdin);
        assert_eq!(
            stderr,
            "error: cannot write to standard output: No space left on device (os error 28)\n"
        );
    }
    let stderr = into_full(s.command(&["catalog", "--json"]), "");
    let error: Value = serde_json::from_str(&stderr).unwrap();
    assert_eq!(error["error"]["code"], "failure", "{stderr}");
}
