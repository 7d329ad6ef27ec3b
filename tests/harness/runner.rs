//! A small test runner for the integration binary: one worker for the whole run, every test run
//! even when another fails, a panic caught as a failure, and a closing `N passed, N failed` line.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use crate::Worker;

pub type TestFuture = Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send>>;
pub type TestFn = fn(Arc<Worker>) -> TestFuture;

/// Names a list of `async fn(Arc<Worker>) -> anyhow::Result<()>` as tests.
#[macro_export]
macro_rules! tests {
    ($($path:path),* $(,)?) => {
        vec![$((stringify!($path), (|w| Box::pin($path(w))) as $crate::runner::TestFn)),*]
    };
}

/// Runs the tests whose name contains the first command-line argument (all when there is none).
pub fn run(tests: Vec<(&'static str, TestFn)>) -> ExitCode {
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-')).unwrap_or_default();
    let selected: Vec<_> = tests.into_iter().filter(|(name, _)| name.contains(&filter)).collect();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
    runtime.block_on(async move {
        let worker = match Worker::start().await {
            Ok(worker) => Arc::new(worker),
            Err(err) => {
                eprintln!("could not start the worker: {err:#}");
                println!("0 passed, {} failed", selected.len());
                return ExitCode::FAILURE;
            }
        };
        let (mut passed, mut failed) = (0, 0);
        for (name, test) in selected {
            let started = Instant::now();
            let outcome = tokio::spawn(test(worker.clone())).await;
            let ms = started.elapsed().as_millis();
            match outcome {
                Ok(Ok(())) => {
                    passed += 1;
                    println!("test {name} ... ok ({ms} ms)");
                }
                Ok(Err(err)) => {
                    failed += 1;
                    println!("test {name} ... FAILED\n{err:#}\n");
                }
                Err(panic) => {
                    failed += 1;
                    println!("test {name} ... FAILED (panicked)\n{panic}\n");
                }
            }
        }
        if failed > 0 {
            println!("--- wrangler log (tail) ---\n{}", worker.log_tail(40));
        }
        println!("\n{passed} passed, {failed} failed");
        if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
    })
}
