//! The integration test harness: the real Worker in workerd (`wrangler dev --local`) with a fresh local
//! D1, driven over real HTTP.
//!
//! [`Worker::start`] builds what is missing, picks a free loopback port, copies a fresh local state
//! (D1 migrated, the sample build's packs in R2) to a new folder, starts wrangler in its own process
//! group and waits until the Worker answers (on new ports, when another process took the first).
//! Dropping the [`Worker`] stops the whole group, so no workerd is left behind, also when a test fails.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

pub mod browser;
pub mod corpus;
pub mod fixtures;
pub mod kitchen;
pub mod oauth;
pub mod openai;
pub mod runner;
pub mod scripted;
pub mod transcribers;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the repo").to_path_buf()
}

/// The builder the tests run: the one `scripts/build.sh` makes, in the `local` profile (release code
/// without the whole-program link step; deploys and benchmarks build `release`).
pub fn builder_bin() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    target.join("local/builder")
}

/// Runs `tests/.venv/bin/<program>` (a consumer's checker that `scripts/setup.sh --test` installs)
/// with `args`; unless it passes, fails with `what` and everything it said.
pub async fn venv_check(program: &str, args: &[String], what: &str) -> Result<()> {
    let program = root().join("tests/.venv/bin").join(program);
    let output =
        tokio::process::Command::new(&program).args(args).output().await.with_context(|| {
            format!("running {} (scripts/setup.sh --test installs it)", program.display())
        })?;
    if !output.status.success() {
        bail!("{what}{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    }
    Ok(())
}

/// Fails unless `text` (what `what` names, for the message) holds each of `needles`: the first it
/// lacks is named, with the whole text.
pub fn ensure_says(what: &str, text: &str, needles: &[&str]) -> Result<()> {
    for needle in needles {
        ensure!(text.contains(needle), "{what} does not say {needle:?}:\n{text}");
    }
    Ok(())
}

/// Sends a GET (or another safe request), and once more when the connection closed before any answer
/// came, as wrangler's dev proxy does at times under a loaded machine (cloudflare/workers-sdk#14641): a
/// safe request is idempotent, so any HTTP client may send it again (RFC 9110 §9.2.2), and doing so says
/// nothing of the Worker.
pub async fn send_safe(request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
    let again = request.try_clone().context("a safe request has no streamed body")?;
    match request.send().await {
        Err(error) if error.is_request() || error.is_connect() => {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(again.send().await?)
        }
        answered => Ok(answered?),
    }
}

/// What a benchmark says of request times: how many, the median, the 99th percentile and the
/// slowest (`n=… p50=… ms p99=… ms max=… ms`). Sorts `times`.
pub fn latency_summary(times: &mut [Duration]) -> String {
    times.sort();
    let pick = |q: f64| times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    format!(
        "n={} p50={:.1} ms p99={:.1} ms max={:.1} ms",
        times.len(),
        ms(pick(0.50)),
        ms(pick(0.99)),
        ms(*times.last().unwrap())
    )
}

static BUILD: Once = Once::new();

/// Builds content and worker once per test run unless `COMMONPLACE_SKIP_BUILD=1` (the test script
/// has just built them).
fn ensure_built() {
    BUILD.call_once(|| {
        let built = root().join("edge/build/worker/shim.mjs").exists()
            && root().join("dist.assets/_layout/root.json").exists();
        if built && std::env::var("COMMONPLACE_SKIP_BUILD").as_deref() == Ok("1") {
            return;
        }
        let status =
            Command::new("bash").arg("scripts/build.sh").current_dir(root()).status().expect("bash runs");
        assert!(status.success(), "scripts/build.sh failed");
    });
}

/// Builds the commit at HEAD of the content repo `repo` into `out` with `builder build --git`, as a
/// deploy does.
pub fn build_git_head(repo: &Path, out: &Path) -> Result<()> {
    let mut build = Command::new(builder_bin());
    build.arg("build").arg("--git").arg(repo).args(["--rev", "HEAD", "--out"]).arg(out);
    run(&mut build, "builder build --git")?;
    Ok(())
}

/// Puts the packs of the build in `out` into the local R2 under `state`, as `scripts/dev.sh` does.
fn fill_local_r2(out: &Path, state: &Path) -> Result<()> {
    let mut fill = Command::new("bash");
    fill.arg("scripts/r2-local.sh").args([out, state]).current_dir(root());
    run(&mut fill, "filling the local R2 (scripts/r2-local.sh)")?;
    Ok(())
}

/// Runs `command` without input to its end; its output, or, when it fails, what it said on stderr
/// with `what` it was.
fn run(command: &mut Command, what: &str) -> Result<std::process::Output> {
    let output = command.stdin(Stdio::null()).output().with_context(|| format!("running {what}"))?;
    if !output.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(output)
}

/// The local state a new worker starts from: D1 with every migration applied and the sample build's
/// packs in R2. Made once per test run and copied for each worker (milliseconds), rather than applying
/// the migrations and filling R2 for each (two wrangler runs, about ten seconds). A worker on another
/// build gets that build's packs put in after the copy (`fill_local_r2`).
static STARTING_STATE: tokio::sync::OnceCell<PathBuf> = tokio::sync::OnceCell::const_new();

async fn starting_state() -> Result<PathBuf> {
    let work = root().join("tests/.work");
    // Starting states of test runs that are over (their process is gone).
    for entry in std::fs::read_dir(&work)?.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if let Some(pid) = name.strip_prefix("starting-state-").and_then(|pid| pid.parse::<i32>().ok())
            && unsafe_kill(pid, 0) != 0
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let state = work.join(format!("starting-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&state);
    migrate(&state)?;
    fill_local_r2(&root().join("dist"), &state)?;
    Ok(state)
}

fn migrate(state: &Path) -> Result<()> {
    let state_arg = state.to_string_lossy().to_string();
    let mut migrate = wrangler(&["d1", "migrations", "apply", "DB", "--local", "--persist-to", &state_arg]);
    run(&mut migrate, "wrangler d1 migrations apply")?;
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    run(
        Command::new("cp").arg("-a").arg(from).arg(to),
        &format!("cp -a {} {}", from.display(), to.display()),
    )?;
    Ok(())
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn wrangler(args: &[&str]) -> Command {
    let mut cmd = Command::new(root().join("node_modules/.bin/wrangler"));
    cmd.args(args)
        .current_dir(root())
        .env("WRANGLER_SEND_METRICS", "false")
        .env("CLOUDFLARE_CF_FETCH_ENABLED", "false")
        .env("NO_COLOR", "1")
        .env("CI", "true");
    cmd
}

/// Extra settings for one worker: `--var NAME:VALUE` pairs (`{base}` in a value is the worker's own
/// address), a build to serve instead of `dist` (the
/// `--out` folder of `builder build`, whose production layout `<out>.assets` and `<out>.r2` is served),
/// and the local D1 state of an earlier worker to carry on from (see
/// [`Worker::stop_keeping_state`]) instead of a fresh one.
///
/// Every worker runs as a development run (`ENVIRONMENT=dev`, as `scripts/dev.sh` starts one) unless
/// `vars` sets `ENVIRONMENT` itself.
#[derive(Debug, Default, Clone)]
pub struct Config {
    pub vars: Vec<(String, String)>,
    pub out: Option<PathBuf>,
    pub state: Option<PathBuf>,
}

/// A running worker; stopped on drop.
#[derive(Debug)]
pub struct Worker {
    pub base: String,
    child: Child,
    state: PathBuf,
    keep_state: bool,
    log: PathBuf,
    dev_vars: PathBuf,
}

impl Worker {
    pub async fn start() -> Result<Worker> {
        Worker::start_with(Config::default()).await
    }

    pub async fn start_with(config: Config) -> Result<Worker> {
        ensure_built();
        let work = root().join("tests/.work");
        std::fs::create_dir_all(&work)?;
        let state = match &config.state {
            Some(state) => state.clone(),
            None => {
                static STARTED: AtomicU32 = AtomicU32::new(0);
                let n = STARTED.fetch_add(1, Ordering::Relaxed);
                let state = work.join(format!("d1-{}-{n}", std::process::id()));
                let _ = std::fs::remove_dir_all(&state);
                let template = STARTING_STATE.get_or_try_init(starting_state).await?;
                copy_dir(template, &state)?;
                state
            }
        };
        if config.state.is_some() {
            migrate(&state)?;
        }
        let out = config.out.clone().unwrap_or_else(|| root().join("dist"));
        fill_local_r2(&out, &state)?;
        // A port that was free when we looked can be taken before workerd binds it (by another
        // process's listener or outgoing connection): workerd then stops at once, and new ports are
        // tried on the same state.
        const ATTEMPTS: usize = 3;
        let mut attempt = 1;
        loop {
            let mut worker = match Worker::spawn(&config, &work, &out, &state) {
                Ok(worker) => worker,
                Err(err) => {
                    if config.state.is_none() {
                        let _ = std::fs::remove_dir_all(&state);
                    }
                    return Err(err);
                }
            };
            match worker.wait_ready().await {
                Ok(()) => return Ok(worker),
                Err(err) if attempt < ATTEMPTS && worker.port_was_taken() => {
                    eprintln!("starting the worker again on new ports: {err:#}");
                    worker.keep_state = true;
                    attempt += 1;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// Starts wrangler on fresh ports, serving the build `out` on the local state `state`.
    fn spawn(config: &Config, work: &Path, out: &Path, state: &Path) -> Result<Worker> {
        let port = free_port()?;
        let state_arg = state.to_string_lossy().to_string();
        let log = work.join(format!("wrangler-{port}.log"));
        let log_file = std::fs::File::create(&log)?;
        let port_arg = port.to_string();
        // Each wrangler also opens an inspector port; left to itself, concurrent starts race for 9229.
        let inspector_arg = free_port()?.to_string();
        let mut args = vec![
            "dev",
            "--local",
            "--ip",
            "127.0.0.1",
            "--port",
            &port_arg,
            "--persist-to",
            &state_arg,
            "--show-interactive-dev-session=false",
            "--inspector-port",
            &inspector_arg,
            "--live-reload=false",
            // `/__scheduled` runs the cron, as the platform would every 15 minutes.
            "--test-scheduled",
        ];
        let assets = format!("{}.assets", out.display());
        args.push("--assets");
        args.push(&assets);
        // The development-only values go in this worker's own dotenv file, given with `--env-file`,
        // rather than in the repo's `.dev.vars`: workers with different settings run at once from one
        // checkout, and with `--env-file` wrangler skips `.dev.vars`, so a developer's own file (AI
        // keys, say) cannot change what a test sees. `ENVIRONMENT` stays out of `wrangler.toml`,
        // which is what a deploy ships.
        let dev_vars = work.join(format!("dev-vars-{port}"));
        let dev_values =
            if config.vars.iter().any(|(name, _)| name == "ENVIRONMENT") { "" } else { "ENVIRONMENT=dev\n" };
        std::fs::write(&dev_vars, dev_values)?;
        let dev_vars_arg = dev_vars.to_string_lossy().to_string();
        args.push("--env-file");
        args.push(&dev_vars_arg);
        // `{base}` in a value is this worker's own address (`SITE_URL`, say).
        let base = format!("http://127.0.0.1:{port}");
        let vars: Vec<String> =
            config.vars.iter().map(|(k, v)| format!("{k}:{}", v.replace("{base}", &base))).collect();
        for var in &vars {
            args.push("--var");
            args.push(var);
        }
        let mut cmd = wrangler(&args);
        // `ensure_built` ran the build; wrangler's own [build] run would only repeat it.
        cmd.env("COMMONPLACE_PREBUILT", "1");
        cmd.stdin(Stdio::null()).stdout(log_file.try_clone()?).stderr(log_file);
        cmd.process_group(0);
        // If this test process dies abruptly, the kernel stops wrangler too.
        unsafe_free_parent_death_signal(&mut cmd);
        let child = cmd.spawn().context("starting wrangler dev")?;
        Ok(Worker { base, child, state: state.to_path_buf(), keep_state: false, log, dev_vars })
    }

    /// Whether workerd could not listen on this worker's port, or on its inspector's.
    fn port_was_taken(&self) -> bool {
        self.log().contains("Address already in use")
    }

    async fn wait_ready(&self) -> Result<()> {
        // Bounded: a port taken by another listener may accept and never answer.
        let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build()?;
        let deadline = Instant::now() + Duration::from_secs(90);
        while Instant::now() < deadline {
            let answered = client.get(format!("{}/search/manifest.json", self.base)).send().await;
            // An answer on a port workerd could not take came from another server.
            if self.port_was_taken() {
                bail!("the worker's port was taken; wrangler said:\n{}", self.log())
            }
            if answered.is_ok_and(|response| response.status().is_success()) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        bail!("the worker did not answer within 90 s; wrangler said:\n{}", self.log())
    }

    /// The SQLite files behind this worker's local D1 (one per database binding).
    pub fn d1_files(&self) -> Vec<PathBuf> {
        let dir = self.state.join("v3/d1/miniflare-D1DatabaseObject");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
            .unwrap_or_default();
        files.retain(|path| path.extension().is_some_and(|ext| ext == "sqlite"));
        files
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last `n` lines of wrangler's log, for a failure's message.
    pub fn log_tail(&self, n: usize) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Runs one SQL statement on this worker's local D1, as an operator would with wrangler — for
    /// what has no route, such as giving an account the `editor` role.
    pub fn d1_execute(&self, sql: &str) -> Result<()> {
        let state = self.state.to_string_lossy().to_string();
        run(
            &mut wrangler(&["d1", "execute", "DB", "--local", "--persist-to", &state, "--command", sql]),
            "wrangler d1 execute",
        )?;
        Ok(())
    }
}

impl Worker {
    /// Runs one SQL query on this worker's local D1 and returns its rows, as `wrangler d1 execute
    /// --json` prints them.
    pub fn d1_query(&self, sql: &str) -> Result<Vec<serde_json::Value>> {
        let state = self.state.to_string_lossy().to_string();
        let output = run(
            &mut wrangler(&[
                "d1",
                "execute",
                "DB",
                "--local",
                "--persist-to",
                &state,
                "--json",
                "--command",
                sql,
            ]),
            "wrangler d1 execute",
        )?;
        let answer: serde_json::Value = serde_json::from_slice(&output.stdout).with_context(|| {
            format!("wrangler d1 execute said {}", String::from_utf8_lossy(&output.stdout))
        })?;
        Ok(answer[0]["results"].as_array().cloned().unwrap_or_default())
    }

    /// Puts the packs of the build in `out` into this worker's local R2, as a deploy uploads them.
    pub fn put_packs(&self, out: &Path) -> Result<()> {
        fill_local_r2(out, &self.state)
    }

    /// Stops the worker and hands back its local D1 state, for a next worker to start from, as a
    /// deploy of a new build keeps the database.
    pub fn stop_keeping_state(mut self) -> PathBuf {
        self.keep_state = true;
        self.state.clone()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        stop_group(&mut self.child);
        let _ = std::fs::remove_file(&self.dev_vars);
        if !self.keep_state {
            let _ = std::fs::remove_dir_all(&self.state);
        }
        // Keep the log of a failed run to read; a clean one is noise.
        if !std::thread::panicking() && std::env::var_os("COMMONPLACE_KEEP_LOGS").is_none() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// Stops the process group `leader` leads (we started it with `process_group(0)`): TERM, then KILL
/// after five seconds. The leader is reaped as soon as it exits: until then it still counts as one of
/// the group, which would keep every stop waiting the whole five seconds.
pub fn stop_group(leader: &mut Child) {
    let pgid = leader.id() as i32;
    let signal = |sig| unsafe_kill(-pgid, sig);
    signal(libc::SIGTERM);
    for _ in 0..50 {
        let _ = leader.try_wait();
        if unsafe_kill(-pgid, 0) != 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    signal(libc::SIGKILL);
    let _ = leader.wait();
}

#[allow(unsafe_code)]
fn unsafe_kill(pid: i32, sig: i32) -> i32 {
    // SAFETY: kill(2) has no memory effects; a wrong pid only yields an error code.
    unsafe { libc::kill(pid, sig) }
}

#[allow(unsafe_code)]
fn unsafe_free_parent_death_signal(cmd: &mut Command) {
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
}

/// A worker on a build of the content folder `content` (written next to it, in `<content>/../dist`),
/// allowed to fetch the loopback pair `allowed` (a scripted feed host's).
pub async fn worker_on_content(content: &Path, allowed: &str, settings: &[(&str, &str)]) -> Result<Worker> {
    let out = content.with_file_name("dist");
    let mut build = Command::new(builder_bin());
    build
        .args(["build", "--content", &content.to_string_lossy(), "--out", &out.to_string_lossy()])
        .current_dir(root());
    run(&mut build, "builder build")?;
    let mut vars = vec![("FETCH_ALLOW_LOOPBACK".to_string(), allowed.to_string())];
    vars.extend(settings.iter().map(|(name, value)| (name.to_string(), value.to_string())));
    Worker::start_with(Config { vars, out: Some(out), ..Config::default() }).await
}
