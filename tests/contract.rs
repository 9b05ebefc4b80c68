//! The contract, checked from outside as integrators meet it: schemathesis (pinned, fixed seed,
//! every check, every phase including the stateful one) against the real binary with Redis must
//! find nothing; and a client that openapi-python-client generates from the committed
//! `openapi/openapi.json` must play a full game of each game and get analyses
//! (`tests/python/play_all.py`). Both tools come from PyPI (`tests/run` installs them); a missing
//! or different version fails the test with the command that installs the right one.

#[path = "common/free_port.rs"]
mod free_port;
use free_port::free_port;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The versions `tests/run` installs; the fixed seed reproduces a run only with the same one.
const SCHEMATHESIS: &str = "4.32.5";
const OPENAPI_PYTHON_CLIENT: &str = "0.29.1";

/// schemathesis's test cases per operation and phase, and its seed.
const MAX_EXAMPLES: &str = "10";
const SEED: &str = "1";
/// A bound on the whole schemathesis run, well above its usual time on two busy cores.
const ST_DEADLINE: Duration = Duration::from_secs(240);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "pillarz-contract-{name}-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A private `redis-server` and the service (the real binary) on it, on free loopback ports;
/// both killed when dropped.
struct Service {
    redis: Child,
    server: Child,
    base: String,
}

impl Service {
    fn start(log: &Path) -> Service {
        let redis_port = free_port();
        let redis = Command::new("redis-server")
            .args(["--port", &redis_port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (apt-get install redis-server)");
        let port = free_port();
        let log = std::fs::File::create(log).unwrap();
        let server = Command::new(env!("CARGO_BIN_EXE_pillarz"))
            .arg("serve")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--redis", &format!("redis://127.0.0.1:{redis_port}")])
            // Quotas on, as deployed (so an unknown `X-Api-Key` is `401 bad_api_key`; with
            // `off` keys are not looked at), but too large to reach: a fuzzer's burst is not what
            // quotas are tested with (tests/api/quotas.rs), and a `429` would make the run
            // depend on timing.
            .args([
                "--anon-quotas",
                "create=1000000/s,write=1000000/s,read=1000000/s,analysis=100000000/s,keys=1000000/s,\
                 streams=10000",
            ])
            // Analyses are capped short, and one thread plays the engine seats the fuzzer
            // creates, so the run is about the contract, not about the engine's speed.
            .args(["--analysis-max-movetime-ms", "100"])
            .args(["--analysis-max-nodes", "200000"])
            .args(["--analysis-max-depth", "6"])
            .args(["--engine-threads", "1"])
            // Every game ends within the Python script's bound, by its rules or this cap.
            .args(["--max-plies", "800"])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("the pillarz binary runs");
        let service = Service {
            redis,
            server,
            base: format!("http://127.0.0.1:{port}"),
        };
        service.wait_ready();
        service
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let address = self.base.trim_start_matches("http://").to_string();
        while Instant::now() < deadline {
            if let Ok(mut stream) = std::net::TcpStream::connect(&address) {
                use std::io::{Read, Write};
                let request = format!(
                    "GET /healthz/ready HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
                );
                let mut answer = String::new();
                if stream.write_all(request.as_bytes()).is_ok()
                    && stream.read_to_string(&mut answer).is_ok()
                    && answer.starts_with("HTTP/1.1 200")
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the service did not become ready at {}", self.base);
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        for child in [&mut self.server, &mut self.redis] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The version a Python tool prints, or a failure that says how to install the pinned one.
fn require(tool: &str, version_args: &[&str], package: &str, pinned: &str) {
    let install = format!("tests/run installs it (or: python3 -m pip install {package}=={pinned})");
    let out = Command::new(tool)
        .args(version_args)
        .output()
        .unwrap_or_else(|e| panic!("{tool} is needed for the contract tests ({e}): {install}"));
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains(pinned),
        "{tool} {pinned} is needed for the contract tests, found {:?}: {install}",
        text.trim()
    );
}

/// Runs `command` with its output in `out`, failing it if it runs past `deadline`.
fn run_bounded(mut command: Command, out: &Path, deadline: Duration) -> (bool, String) {
    let file = std::fs::File::create(out).unwrap();
    let mut child = command
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let text = std::fs::read_to_string(out).unwrap_or_default();
    match status {
        Some(status) => (status.success(), text),
        None => (
            false,
            format!("{text}\n--- killed: still running after {deadline:?}"),
        ),
    }
}

#[test]
fn schemathesis_finds_no_failures() {
    require("st", &["--version"], "schemathesis", SCHEMATHESIS);
    let scratch = Scratch::new("st");
    let service = Service::start(&scratch.0.join("server.log"));
    let mut st = Command::new("st");
    st.arg("--no-color")
        .arg("--config-file")
        .arg(root().join("tests/contract/schemathesis.toml"))
        .arg("run")
        .arg(format!("{}/openapi.json", service.base))
        .args(["--checks", "all"])
        .args(["--phases", "examples,coverage,fuzzing,stateful"])
        .args(["--seed", SEED, "--max-examples", MAX_EXAMPLES])
        .args(["--workers", "1"])
        .args(["--request-timeout", "10"])
        // Its example database and reports stay in the scratch directory.
        .current_dir(&scratch.0);
    let (passed, output) = run_bounded(st, &scratch.0.join("st.txt"), ST_DEADLINE);
    // The closing line (`=== 4 warnings in 98.2s ===`, or the failures and errors) and the count
    // of test cases above it.
    let summary = output
        .lines()
        .rev()
        .find(|line| line.starts_with("==="))
        .unwrap_or("(no summary line)")
        .to_string();
    let cases = output
        .lines()
        .skip_while(|line| line.trim() != "Test cases:")
        .nth(1)
        .unwrap_or("")
        .trim()
        .to_string();
    println!("schemathesis {SCHEMATHESIS}: {summary} ({cases})");
    if !passed {
        let log = std::fs::read_to_string(scratch.0.join("server.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        panic!(
            "schemathesis found failures:\n{output}\n--- the server's last log lines:\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    assert!(
        !summary.contains("fail") && !summary.contains("error") && cases.ends_with("passed"),
        "{output}"
    );
}

#[test]
fn a_generated_python_client_plays_every_game() {
    require(
        "openapi-python-client",
        &["--version"],
        "openapi-python-client",
        OPENAPI_PYTHON_CLIENT,
    );
    let scratch = Scratch::new("python");
    let generated = Command::new("openapi-python-client")
        .arg("generate")
        .arg("--path")
        .arg(root().join("openapi/openapi.json"))
        .arg("--config")
        .arg(root().join("tests/python/openapi-python-client.yaml"))
        .args(["--meta", "none", "--fail-on-warning"])
        .arg("--output-path")
        .arg(scratch.0.join("pillarz_client"))
        .output()
        .unwrap();
    assert!(
        generated.status.success(),
        "openapi-python-client could not generate a client from openapi/openapi.json:\n{}{}",
        String::from_utf8_lossy(&generated.stdout),
        String::from_utf8_lossy(&generated.stderr)
    );
    let service = Service::start(&scratch.0.join("server.log"));
    let mut script = Command::new("python3");
    script
        .arg(root().join("tests/python/play_all.py"))
        .arg(&service.base)
        .arg(&scratch.0);
    let (passed, output) = run_bounded(
        script,
        &scratch.0.join("play.txt"),
        Duration::from_secs(120),
    );
    println!("generated client: {output}");
    assert!(passed, "the generated client's run failed:\n{output}");
}
