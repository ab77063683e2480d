//! docs/api.md runs as written: every `sh` block of the page, in order, through bash and
//! curl against `tally serve` (its own table on DynamoDB Local). Each call must answer a
//! 2xx; a block's last call must have a status the paragraph after the block names, and
//! the fields of the JSON the page shows after it (values that differ from run to run
//! aside: times, hashes, ticket numbers, the beacon).
//!
//! What the page cannot hold true forever is substituted: the addresses, tomorrow's date
//! for its closing time, this year's in the invoice numbers, and the drand network. The
//! winners need a round's signature: the server trusts the test network of
//! tests/fixtures/beacon.json, whose genesis is set to now, and a stand-in for drand's
//! HTTP API answers a round's signature once the round's time has come, so the page's
//! `sleep` lines are dropped and no block waits longer than the round takes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::helpers::{TestTable, endpoint};
use crate::serve::Server;
use tally_domain::time::Epoch;
use tally_testkit::beacon::{network_json, signature};

/// Seconds between two rounds of the test network.
const ROUND_PERIOD: i64 = 3;

/// One `sh` block of the page, with what the page says it answers.
struct Block {
    script: String,
    /// The statuses named by the paragraph after the block.
    statuses: Vec<u16>,
    /// The JSON shown after that paragraph, if any.
    shown: Option<String>,
}

/// One curl call of a block: its status and body.
struct Call {
    status: u16,
    body: String,
}

/// The page's text for what cannot stay true as written, and what replaces it.
fn substitutions(api: &str, drand: &str, tally: &Path) -> Vec<(String, String)> {
    let tomorrow = Timestamp::now() + SignedDuration::from_hours(24);
    let next_year = Timestamp::now() + SignedDuration::from_hours(24 * 365);
    // The page's series UABC numbers in Berlin's year.
    let year = jiff::tz::TimeZone::get("Europe/Berlin")
        .unwrap()
        .to_datetime(Timestamp::now())
        .year();
    let (yyyy, yy) = (year.to_string(), format!("{:02}", year % 100));
    [
        ("http://127.0.0.1:3000", api.to_owned()),
        (
            "https://api.drand.sh/52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971",
            format!("{drand}/test"),
        ),
        (
            r#""network": "quicknet""#,
            r#""network": "test""#.to_owned(),
        ),
        ("target/debug/tally", tally.display().to_string()),
        (
            "2026-12-24T18:00:00",
            tomorrow.strftime("%Y-%m-%dT%H:%M:%S").to_string(),
        ),
        (
            "2027-05-31T23:59:59",
            next_year.strftime("%Y-%m-%dT%H:%M:%S").to_string(),
        ),
        ("UABC26", format!("UABC{yy}")),
        ("period=2026", format!("period={yyyy}")),
        ("--period 2026", format!("--period {yyyy}")),
        (r#""period": "2026""#, format!(r#""period": "{yyyy}""#)),
    ]
    .into_iter()
    .map(|(from, to)| (from.to_owned(), to))
    .collect()
}

fn substitute(text: &str, substitutions: &[(String, String)]) -> String {
    substitutions
        .iter()
        .fold(text.to_owned(), |text, (from, to)| text.replace(from, to))
}

/// The `sh` blocks of `page`, in order, each with the statuses and JSON shown after it.
fn blocks(page: &str) -> Vec<Block> {
    let lines: Vec<&str> = page.lines().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        if lines[at] != "```sh" {
            at += 1;
            continue;
        }
        let end = at + 1 + lines[at + 1..].iter().position(|l| *l == "```").unwrap();
        let script = lines[at + 1..end].join("\n");
        // The paragraph after the block, then a JSON block right after it.
        let mut next = end + 1;
        while next < lines.len() && lines[next].is_empty() {
            next += 1;
        }
        let paragraph_end = next
            + lines[next..]
                .iter()
                .position(|l| l.is_empty() || l.starts_with("```"))
                .unwrap_or(lines.len() - next);
        let paragraph = lines[next..paragraph_end].join(" ");
        let shown = (lines.get(paragraph_end + 1) == Some(&"```json")).then(|| {
            let start = paragraph_end + 2;
            let close = start + lines[start..].iter().position(|l| *l == "```").unwrap();
            lines[start..close].join("\n")
        });
        found.push(Block {
            script,
            statuses: statuses_named(&paragraph),
            shown,
        });
        at = end + 1;
    }
    found
}

/// Every `` `NNN` `` of a paragraph.
fn statuses_named(paragraph: &str) -> Vec<u16> {
    paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|code| code.len() == 3)
        .filter_map(|code| code.parse().ok())
        .collect()
}

/// Runs `script` with bash in `dir`; curl is a function that logs each call's status and
/// body to `log` (one line each: the status and the body in base64).
fn run_block(script: &str, dir: &Path, log: &Path, env: &[(&str, String)]) -> Vec<Call> {
    std::fs::write(log, "").unwrap();
    let prelude = r#"set -euo pipefail
curl() {
  local answer status
  answer=$(command curl -sS --max-time 120 -w '\n%{http_code}' "$@")
  status=${answer##*$'\n'}
  answer=${answer%$'\n'*}
  printf '%s %s\n' "$status" "$(printf '%s' "$answer" | base64 -w0)" >> "$WALK_LOG"
  printf '%s\n' "$answer"
}
"#;
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("{prelude}{script}"))
        .current_dir(dir)
        .env("WALK_LOG", log)
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the block failed:\n{script}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| {
            let (status, body) = line.split_once(' ').unwrap();
            Call {
                status: status.parse().unwrap(),
                body: String::from_utf8(STANDARD.decode(body).unwrap()).unwrap(),
            }
        })
        .collect()
}

/// Whether `shown` (from the page) holds in `answer`: every member shown is there, with
/// the value shown unless it is elided or differs from run to run.
fn check_shown(shown: &Value, answer: &Value, at: &str) {
    const VARYING: [&str; 6] = [
        "tickets",
        "seed_commitment",
        "beacon",
        "hash",
        "head",
        "recomputed_head",
    ];
    match (shown, answer) {
        (Value::Object(shown), Value::Object(answer)) => {
            for (key, value) in shown {
                let Some(got) = answer.get(key) else {
                    panic!("{at}.{key} is shown but not answered");
                };
                if !VARYING.contains(&key.as_str()) {
                    check_shown(value, got, &format!("{at}.{key}"));
                }
            }
        }
        (Value::Array(shown), Value::Array(answer)) => {
            assert_eq!(shown.len(), answer.len(), "{at}: {answer:?}");
            for (i, (value, got)) in shown.iter().zip(answer).enumerate() {
                check_shown(value, got, &format!("{at}[{i}]"));
            }
        }
        (Value::String(text), _) if elided(text) => {}
        _ => assert_eq!(shown, answer, "{at}"),
    }
}

/// A value the page elides or that is a time.
fn elided(text: &str) -> bool {
    text.contains("...") || text.contains('…') || tally_domain::time::parse_rfc3339(text).is_ok()
}

/// drand's `GET /{chain}/public/{round}`, answered once the round's time has come.
async fn stand_in_round(
    State(genesis): State<i64>,
    UrlPath((_chain, round)): UrlPath<(String, u64)>,
) -> Json<Value> {
    let published_ms = (genesis + (round as i64 - 1) * ROUND_PERIOD) * 1_000;
    let wait = published_ms - Timestamp::now().epoch_millis();
    if wait > 0 {
        tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    }
    Json(json!({"round": round, "signature": signature(round)}))
}

#[tokio::test]
async fn the_api_walkthrough_runs_as_written() {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/api.md")).unwrap();
    let genesis = Timestamp::now().epoch_seconds();
    let drand = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let drand_url = format!("http://{}", drand.local_addr().unwrap());
    let stand_in = axum::Router::new()
        .route(
            "/{chain}/public/{round}",
            axum::routing::get(stand_in_round),
        )
        .with_state(genesis);
    let drand_server = tokio::spawn(async move { axum::serve(drand, stand_in).await });

    let table = TestTable::reserve();
    let dir: PathBuf = std::env::temp_dir().join(format!("tally-walkthrough-{}", table.name()));
    std::fs::create_dir_all(&dir).unwrap();
    let networks = network_json(genesis, ROUND_PERIOD);
    let tally = PathBuf::from(env!("CARGO_BIN_EXE_tally"));
    let outcome = {
        let (dir, table, networks) = (dir.clone(), table.name().to_owned(), networks.clone());
        tokio::task::spawn_blocking(move || {
            let env = [
                ("TABLE_NAME", table.as_str()),
                ("DYNAMODB_ENDPOINT", &endpoint()),
                ("TALLY_BEACON_NETWORKS", &networks),
            ];
            let server = Server::start(&[], &env, &[], &dir.join("server.log"));
            let substitutions = substitutions(&server.address, &drand_url, &tally);
            let env = [
                ("TABLE_NAME", table.clone()),
                ("DYNAMODB_ENDPOINT", endpoint()),
                ("TALLY_BEACON_NETWORKS", networks.clone()),
            ];
            let blocks = blocks(&page);
            for block in &blocks {
                let script: String = substitute(&block.script, &substitutions)
                    .lines()
                    .filter(|line| !line.starts_with("sleep "))
                    .collect::<Vec<_>>()
                    .join("\n");
                let calls = run_block(&script, &dir, &dir.join("calls.log"), &env);
                for call in &calls {
                    assert!(
                        (200..300).contains(&call.status),
                        "{script}\nanswered {}: {}",
                        call.status,
                        call.body
                    );
                }
                let Some(last) = calls.last() else { continue };
                if !block.statuses.is_empty() {
                    assert!(
                        block.statuses.contains(&last.status),
                        "{script}\nanswered {}, the page says {:?}",
                        last.status,
                        block.statuses
                    );
                }
                if let Some(shown) = &block.shown {
                    let shown: Value = serde_json::from_str(&substitute(shown, &substitutions))
                        .unwrap_or_else(|e| panic!("the JSON after\n{script}\nis not JSON: {e}"));
                    let answer: Value = serde_json::from_str(&last.body).unwrap();
                    check_shown(&shown, &answer, "answer");
                }
            }
            blocks.len()
        })
        .await
    };
    drand_server.abort();
    let _ = std::fs::remove_dir_all(&dir);
    let ran = outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic.into_panic()));
    assert!(ran > 30, "only {ran} blocks found in docs/api.md");
}
