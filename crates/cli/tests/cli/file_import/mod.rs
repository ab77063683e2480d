//! `tally import`: files of orders through the table and through a running API, run twice.

mod batches;
mod files;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{attr_s, of_kind, scan, spawn_app};

/// Runs `tally import FILE --series SERIES --source SOURCE` with `more` arguments, off the
/// test's runtime (a server it spawned keeps answering); its status, stdout and stderr.
pub async fn tally_import(file: &Path, series: &str, source: &str, more: &[&str]) -> Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tally"));
    command
        .arg("import")
        .arg(file)
        .args(["--series", series, "--source", source])
        .args(more);
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// The lines `tally import` wrote next to `file`, as JSON.
fn rejected_lines(file: &Path) -> Vec<Value> {
    let mut name = file.as_os_str().to_owned();
    name.push(".rejected.jsonl");
    std::fs::read_to_string(name)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tally-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A router over the app's table served on a free loopback port; its base URL.
async fn serve_api(app: &crate::helpers::TestApp) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = crate::helpers::router(app.store.clone());
    let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (base, server)
}
