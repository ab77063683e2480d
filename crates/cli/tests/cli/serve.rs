//! `tally serve` as a process: where it finds its table, and how it stops. Without
//! `DYNAMODB_ENDPOINT` it serves DynamoDB Local, whatever AWS variables are set; the table
//! in AWS only with `--aws`, which its log announces and which needs a deployment's
//! secret; an endpoint off loopback never without it. Ctrl-C ends it by its shutdown
//! deadline, a second one at once, whatever a client holds open. Nothing here
//! leaves 127.0.0.1: "AWS" is a closed local port, or DynamoDB Local itself through the
//! SDK's `AWS_ENDPOINT_URL`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tally::api::local_server::SHUTDOWN_DEADLINE;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::helpers::{TestTable, endpoint};
use tally_testkit::http::exchange;

/// `tally serve` on a free port, killed when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:port`, as the server says.
    pub address: String,
    log: PathBuf,
}

/// `tally serve ARGS` with `env` set and `unset` removed from the test's environment, on
/// a free loopback port, its output (stdout and stderr) in `log`.
fn tally_serve(args: &[&str], env: &[(&str, &str)], unset: &[&str], log: &Path) -> Child {
    let output = std::fs::File::create(log).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_tally"));
    command
        .arg("serve")
        .args(args)
        .env("TALLY_ADDR", "127.0.0.1:0");
    for name in unset {
        command.env_remove(name);
    }
    command
        .envs(env.iter().copied())
        .stdout(output.try_clone().unwrap())
        .stderr(output)
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

impl Server {
    /// Starts `tally serve` as [`tally_serve`] does, and waits until it listens.
    pub fn start(args: &[&str], env: &[(&str, &str)], unset: &[&str], log: &Path) -> Self {
        let mut child = tally_serve(args, env, unset, log);
        for _ in 0..600 {
            let said = std::fs::read_to_string(log).unwrap_or_default();
            if let Some(rest) = said.split("listening on ").nth(1) {
                let address = rest.split_whitespace().next().unwrap().to_owned();
                return Self {
                    child,
                    address,
                    log: log.to_owned(),
                };
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("tally serve ended ({status}): {said}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        panic!("tally serve did not listen within a minute");
    }

    /// Sends it SIGINT, as Ctrl-C does.
    fn interrupt(&self) {
        let sent = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    /// Its exit status once it ended, if it ends within `patience`.
    fn ended_within(&mut self, patience: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        while started.elapsed() < patience {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// A connection that sent half a request head and holds it open.
    async fn stall(&self) -> TcpStream {
        let authority = self.address.trim_start_matches("http://");
        let mut stream = TcpStream::connect(authority).await.unwrap();
        let half = format!("GET /draws HTTP/1.1\r\nhost: {authority}\r\n");
        stream.write_all(half.as_bytes()).await.unwrap();
        stream
    }

    /// What it has written so far.
    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Creates a draw through it: its status.
    async fn create_draw(&self) -> u16 {
        let authority = self.address.trim_start_matches("http://");
        let body = r#"{"total_tickets": 10}"#;
        let request = format!(
            "POST /draws HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut stream = TcpStream::connect(authority).await.unwrap();
        exchange(&mut stream, &request).await.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tally serve ARGS`, which must end without serving: its output.
fn refused(args: &[&str], env: &[(&str, &str)], unset: &[&str], log: &Path) -> String {
    let mut child = tally_serve(args, env, unset, log);
    for _ in 0..600 {
        if let Ok(Some(status)) = child.try_wait() {
            assert_eq!(status.code(), Some(2));
            return std::fs::read_to_string(log).unwrap();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!(
        "tally serve {args:?} still runs: {}",
        std::fs::read_to_string(log).unwrap()
    );
}

/// The port of the tests' DynamoDB Local.
fn local_port() -> String {
    endpoint()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned()
}

/// The variables that would send the SDK to an AWS account, with credentials that are
/// no one's; `aws` is where "AWS" is.
fn aws_named(aws: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_PROFILE", "production".to_owned()),
        ("AWS_REGION", "eu-west-1".to_owned()),
        ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "not-a-key".to_owned()),
        ("AWS_EC2_METADATA_DISABLED", "true".to_owned()),
        ("AWS_ENDPOINT_URL", aws.to_owned()),
    ]
}

fn borrowed<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect()
}

#[tokio::test]
async fn without_an_endpoint_the_local_server_serves_dynamodb_local_even_where_aws_is_named() {
    let table = TestTable::reserve();
    let log = std::env::temp_dir().join(format!("{}-serve.log", table.name()));
    // Were it to take the table in AWS, it would find nothing listening there.
    let mut env = aws_named("http://127.0.0.1:1");
    env.extend([
        ("TABLE_NAME", table.name().to_owned()),
        ("DYNAMODB_PORT", local_port()),
    ]);
    let server = {
        let (env, log) = (env.clone(), log.clone());
        tokio::task::spawn_blocking(move || {
            Server::start(&[], &borrowed(&env), &["DYNAMODB_ENDPOINT"], &log)
        })
        .await
        .unwrap()
    };
    let said = server.output();
    assert!(
        said.contains(&format!("at http://127.0.0.1:{}", local_port())),
        "{said}"
    );
    assert_eq!(server.create_draw().await, 201);
    drop(server);
    let _ = std::fs::remove_file(&log);
}

#[tokio::test]
async fn the_table_in_aws_is_served_only_with_aws_announced_and_with_a_deployment_secret() {
    let table = TestTable::reserve();
    let log = std::env::temp_dir().join(format!("{}-serve.log", table.name()));
    // DynamoDB Local stands in for AWS, through the SDK's own variable.
    let mut env = aws_named(&endpoint());
    env.push(("TABLE_NAME", table.name().to_owned()));
    let env_with_secret = {
        let mut env = env.clone();
        env.push((
            "TALLY_DEPLOYMENT_SECRET",
            tally_testkit::lambda_harness::generated_secret(),
        ));
        env
    };
    let (said, both, server) = tokio::task::spawn_blocking({
        let log = log.clone();
        move || {
            let unset = ["DYNAMODB_ENDPOINT", "TALLY_DEPLOYMENT_SECRET"];
            let said = refused(&["--aws"], &borrowed(&env), &unset, &log);
            let with_endpoint = [
                borrowed(&env_with_secret),
                vec![("DYNAMODB_ENDPOINT", "http://127.0.0.1:1")],
            ]
            .concat();
            let both = refused(&["--aws"], &with_endpoint, &[], &log);
            let server = Server::start(&["--aws"], &borrowed(&env_with_secret), &unset, &log);
            (said, both, server)
        }
    })
    .await
    .unwrap();
    assert!(
        said.contains("no deployment secret is configured"),
        "{said}"
    );
    assert!(both.contains("drop one"), "{both}");
    let output = server.output();
    assert!(
        output.contains(&format!("(table {} in AWS)", table.name())),
        "{output}"
    );
    assert!(
        output.contains("WARN") && output.contains("serving the table in AWS"),
        "{output}"
    );
    assert_eq!(server.create_draw().await, 201);
    drop(server);
    let _ = std::fs::remove_file(&log);
}

#[tokio::test]
async fn the_local_server_writes_metrics_lines_only_when_asked() {
    for (args, env, written) in [
        (&[][..], &[][..], false),
        (&["--metrics"][..], &[][..], true),
        (&[][..], &[("TALLY_METRICS", "true")][..], true),
    ] {
        let table = TestTable::reserve();
        let log = std::env::temp_dir().join(format!("{}-serve.log", table.name()));
        let mut vars = vec![
            ("TABLE_NAME", table.name().to_owned()),
            ("DYNAMODB_ENDPOINT", endpoint()),
        ];
        vars.extend(env.iter().map(|(k, v)| (*k, (*v).to_owned())));
        let server = {
            let log = log.clone();
            let args: Vec<&'static str> = args.to_vec();
            tokio::task::spawn_blocking(move || {
                Server::start(&args, &borrowed(&vars), &["TALLY_METRICS"], &log)
            })
            .await
            .unwrap()
        };
        assert_eq!(server.create_draw().await, 201);
        assert_eq!(server.create_draw().await, 201);
        let lines = server
            .output()
            .lines()
            .filter(|line| line.starts_with('{') && line.contains("\"_aws\""))
            .count();
        assert_eq!(lines >= 2, written, "{args:?} {env:?}: {}", server.output());
        assert_eq!(lines == 0, !written, "{args:?} {env:?}");
        drop(server);
        let _ = std::fs::remove_file(&log);
    }
}

#[tokio::test]
async fn the_local_server_refuses_to_listen_beyond_loopback() {
    let table = TestTable::reserve();
    let log = std::env::temp_dir().join(format!("{}-serve.log", table.name()));
    let env = [("TABLE_NAME", table.name().to_owned())];
    let said = tokio::task::spawn_blocking({
        let log = log.clone();
        move || refused(&["--addr", "0.0.0.0:0"], &borrowed(&env), &[], &log)
    })
    .await
    .unwrap();
    assert!(said.contains("loopback address only"), "{said}");
    let _ = std::fs::remove_file(&log);
}

#[tokio::test]
async fn without_aws_the_local_server_refuses_an_endpoint_beyond_this_machine() {
    let table = TestTable::reserve();
    let log = std::env::temp_dir().join(format!("{}-serve.log", table.name()));
    let env = [
        ("TABLE_NAME", table.name().to_owned()),
        (
            "DYNAMODB_ENDPOINT",
            "https://dynamodb.eu-west-1.amazonaws.com".to_owned(),
        ),
    ];
    let said = tokio::task::spawn_blocking({
        let log = log.clone();
        move || refused(&[], &borrowed(&env), &["TALLY_DEPLOYMENT_SECRET"], &log)
    })
    .await
    .unwrap();
    assert!(
        said.contains("names https://dynamodb.eu-west-1.amazonaws.com")
            && said.contains("loopback endpoint"),
        "{said}"
    );
    let _ = std::fs::remove_file(&log);
}

#[tokio::test]
async fn the_local_server_refuses_a_header_read_timeout_of_zero() {
    let table = TestTable::reserve();
    let log = std::env::temp_dir().join(format!("{}-serve.log", table.name()));
    let env = [
        ("TABLE_NAME", table.name().to_owned()),
        ("DYNAMODB_ENDPOINT", endpoint()),
    ];
    let said = tokio::task::spawn_blocking({
        let log = log.clone();
        move || {
            refused(
                &["--header-read-timeout-ms", "0"],
                &borrowed(&env),
                &[],
                &log,
            )
        }
    })
    .await
    .unwrap();
    assert!(said.contains("--header-read-timeout-ms"), "{said}");
    let _ = std::fs::remove_file(&log);
}

/// `tally serve` on the test's DynamoDB Local, patient with request heads: only a
/// shutdown ends a connection that sends half of one.
async fn patient_server(table: &TestTable, log: &Path) -> Server {
    let env = [
        ("TABLE_NAME", table.name().to_owned()),
        ("DYNAMODB_ENDPOINT", endpoint()),
    ];
    let log = log.to_owned();
    tokio::task::spawn_blocking(move || {
        Server::start(
            &["--header-read-timeout-ms", "600000"],
            &borrowed(&env),
            &[],
            &log,
        )
    })
    .await
    .unwrap()
}

/// A server with a client holding half a request head open, interrupted `times` times
/// 300 ms apart: how long it took to end after the first, and what it printed. It must end
/// well.
async fn interrupted(times: usize) -> (Duration, String) {
    let table = TestTable::reserve();
    let log = std::env::temp_dir().join(format!("{}-serve.log", table.name()));
    let mut server = patient_server(&table, &log).await;
    let _stalled = server.stall().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let interrupted = Instant::now();
    for time in 0..times {
        if time > 0 {
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        server.interrupt();
    }
    let (status, server) =
        tokio::task::spawn_blocking(move || (server.ended_within(SHUTDOWN_DEADLINE * 4), server))
            .await
            .unwrap();
    let took = interrupted.elapsed();
    let output = server.output();
    assert!(status.is_some_and(|s| s.success()), "{status:?}: {output}");
    drop(server);
    let _ = std::fs::remove_file(&log);
    (took, output)
}

#[tokio::test]
async fn interrupted_the_local_server_ends_by_its_deadline_whatever_a_client_holds_open() {
    let (took, output) = interrupted(1).await;
    assert!(
        took >= SHUTDOWN_DEADLINE,
        "{took:?}: it waited for the connection"
    );
    assert!(output.contains("dropped"), "{output}");
}

#[tokio::test]
async fn a_second_interrupt_ends_the_local_server_without_waiting_for_its_connections() {
    let (took, output) = interrupted(2).await;
    assert!(took < SHUTDOWN_DEADLINE, "{took:?}");
    assert!(output.contains("interrupted again"), "{output}");
}
