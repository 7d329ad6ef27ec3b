//! A small test runner for the integration binary: every test run even when another fails, a panic
//! caught as a failure, and a closing `N passed, N failed` line.
//!
//! A test that takes the shared worker (`async fn(Arc<Worker>)`) runs on the one worker the run
//! starts, one such test at a time and in the listed order, since they share its database (some
//! expect what earlier ones left, some count what they find). A test that takes nothing
//! (`async fn()`) starts the workers it needs itself and shares nothing with the others: up to
//! [`apart_at_once`] of those run at the same time, beside the shared ones.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use crate::Worker;

pub type TestFuture = Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send>>;

/// One test: on the shared worker, or apart with workers of its own.
pub enum Test {
    Shared(Box<dyn Fn(Arc<Worker>) -> TestFuture + Send + Sync>),
    Apart(Box<dyn Fn() -> TestFuture + Send + Sync>),
}

/// What can be a [`Test`]: an async function of the shared worker, or of nothing. `Args` only tells
/// the two apart (each function type implements one of them).
pub trait IntoTest<Args> {
    fn into_test(self) -> Test;
}

impl<F, Fut> IntoTest<(Arc<Worker>,)> for F
where
    F: Fn(Arc<Worker>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    fn into_test(self) -> Test {
        Test::Shared(Box::new(move |worker| Box::pin(self(worker))))
    }
}

impl<F, Fut> IntoTest<()> for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    fn into_test(self) -> Test {
        Test::Apart(Box::new(move || Box::pin(self())))
    }
}

/// Names a list of test functions (see the module's text) as tests.
#[macro_export]
macro_rules! tests {
    ($($path:path),* $(,)?) => {
        vec![$((stringify!($path), $crate::runner::IntoTest::into_test($path))),*]
    };
}

/// How many tests with workers of their own run at once: `COMMONPLACE_TESTS_APART` if set, else 3
/// (on two cores most of a test's time is spent waiting on its worker, its scripted services or a
/// clock).
pub fn apart_at_once() -> usize {
    std::env::var("COMMONPLACE_TESTS_APART").ok().and_then(|n| n.parse().ok()).filter(|&n| n > 0).unwrap_or(3)
}

/// How one test ended.
enum Outcome {
    Passed,
    Failed(String),
}

async fn outcome(future: TestFuture) -> Outcome {
    match tokio::spawn(future).await {
        Ok(Ok(())) => Outcome::Passed,
        Ok(Err(err)) => Outcome::Failed(format!("{err:#}")),
        Err(panic) => Outcome::Failed(format!("(panicked) {panic}")),
    }
}

/// Runs the tests whose name contains the first command-line argument (all when there is none).
pub fn run(tests: Vec<(&'static str, Test)>) -> ExitCode {
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-')).unwrap_or_default();
    let (mut shared, mut apart) = (Vec::new(), Vec::new());
    for (name, test) in tests.into_iter().filter(|(name, _)| name.contains(&filter)) {
        match test {
            Test::Shared(test) => shared.push((name, test)),
            Test::Apart(test) => apart.push((name, test)),
        }
    }
    // The harness makes some blocking calls (copying a database, running the builder or wrangler, a
    // worker's stop): a thread for each test that can run at once, and one to spare for the scripted
    // services and timers, so one test's blocking call never stalls another's.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(apart_at_once() + 2)
        .enable_all()
        .build()
        .expect("a tokio runtime starts");
    runtime.block_on(async move {
        let (done, mut results) = tokio::sync::mpsc::unbounded_channel::<(&'static str, u128, Outcome)>();
        let shared_names: Vec<&'static str> = shared.iter().map(|(name, _)| *name).collect();
        let permits = Arc::new(tokio::sync::Semaphore::new(apart_at_once()));
        for (name, test) in apart {
            let (done, permits) = (done.clone(), permits.clone());
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await.expect("the semaphore stays open");
                let started = Instant::now();
                let outcome = outcome(test()).await;
                let _ = done.send((name, started.elapsed().as_millis(), outcome));
            });
        }
        let shared_lane = tokio::spawn(async move {
            if shared.is_empty() {
                return None;
            }
            let worker = match Worker::start().await {
                Ok(worker) => Arc::new(worker),
                Err(err) => {
                    // Said once; each test it would have run is failed by name.
                    println!("could not start the shared worker: {err:#}\n");
                    for (name, _) in shared {
                        let why = "not run: the shared worker did not start".to_string();
                        let _ = done.send((name, 0, Outcome::Failed(why)));
                    }
                    return None;
                }
            };
            for (name, test) in shared {
                let started = Instant::now();
                let outcome = outcome(test(worker.clone())).await;
                let _ = done.send((name, started.elapsed().as_millis(), outcome));
            }
            Some(worker)
        });
        let (mut passed, mut failed, mut shared_failed) = (0, 0, false);
        while let Some((name, ms, outcome)) = results.recv().await {
            match outcome {
                Outcome::Passed => {
                    passed += 1;
                    println!("test {name} ... ok ({ms} ms)");
                }
                Outcome::Failed(why) => {
                    failed += 1;
                    shared_failed |= shared_names.contains(&name);
                    println!("test {name} ... FAILED\n{why}\n");
                }
            }
        }
        // The shared worker's log speaks only of the tests that ran on it.
        let worker = shared_lane.await.ok().flatten();
        if let Some(worker) = worker.filter(|_| shared_failed) {
            println!("--- the shared worker's wrangler log (tail) ---\n{}", worker.log_tail(40));
        }
        println!("\n{passed} passed, {failed} failed");
        if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
    })
}
