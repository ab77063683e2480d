//! Runs the two command-line verifiers (`tally verify-draw`, `scripts/verify-draw.py`) on
//! a draw's answers written to files, and reads which step failed first.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Each verifier's verdict: `Ok` when no step failed, else the first failed step's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdicts {
    pub rust: Result<(), String>,
    pub python: Result<(), String>,
}

impl Verdicts {
    pub const BOTH_PASS: Self = Self {
        rust: Ok(()),
        python: Ok(()),
    };

    /// Both fail, first at step `id`.
    pub fn fail(id: &str) -> Self {
        Self {
            rust: Err(id.to_owned()),
            python: Err(id.to_owned()),
        }
    }
}

/// The answers written to files in a folder of their own.
pub struct DrawFiles {
    pub dir: PathBuf,
    pub winners: PathBuf,
    pub eligible: PathBuf,
    pub draw: Option<PathBuf>,
    pub networks: Option<PathBuf>,
}

impl DrawFiles {
    pub fn write(
        name: &str,
        winners: &Value,
        eligible: &Value,
        kept: Option<&Value>,
        networks: Option<&str>,
    ) -> Self {
        let dir = std::env::temp_dir().join(format!("tally-verify-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |file: &str, text: &str| -> PathBuf {
            let path = dir.join(file);
            std::fs::write(&path, text).unwrap();
            path
        };
        Self {
            winners: write("winners.json", &winners.to_string()),
            eligible: write("eligible.json", &eligible.to_string()),
            draw: kept.map(|k| write("draw.json", &k.to_string())),
            networks: networks.map(|n| write("networks.json", n)),
            dir,
        }
    }
}

impl Drop for DrawFiles {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// The first step a verifier printed as failed.
fn verdict(output: &Output, who: &str) -> Result<(), String> {
    let text = String::from_utf8_lossy(&output.stdout);
    let failed = text
        .lines()
        .find_map(|line| line.strip_prefix("FAIL"))
        .map(|rest| rest.split_whitespace().next().unwrap_or("").to_owned());
    match (output.status.code(), failed) {
        (Some(0), None) => Ok(()),
        (Some(1), Some(step)) => Err(step),
        _ => panic!(
            "{who} neither passed nor named a failed step: {text}{}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// Runs both verifiers on the files.
pub fn run_verifiers(files: &DrawFiles) -> Verdicts {
    let mut rust = Command::new(env!("CARGO_BIN_EXE_tally"));
    rust.args(["verify-draw", "--winners"])
        .arg(&files.winners)
        .arg("--eligible")
        .arg(&files.eligible)
        .env_remove("TALLY_BEACON_NETWORKS");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/verify-draw.py");
    let mut python = Command::new("python3");
    python
        .arg(script)
        .arg(&files.winners)
        .arg(&files.eligible)
        .env_remove("TALLY_BEACON_NETWORKS");
    for command in [&mut rust, &mut python] {
        if let Some(draw) = &files.draw {
            command.arg("--draw").arg(draw);
        }
        if let Some(networks) = &files.networks {
            command.arg("--networks").arg(networks);
        }
    }
    let rust = rust.output().unwrap();
    let python = python.output().unwrap();
    Verdicts {
        rust: verdict(&rust, "tally verify-draw"),
        python: verdict(&python, "verify-draw.py"),
    }
}

/// Writes the answers and runs both verifiers.
pub fn verifiers_accept(
    name: &str,
    winners: &Value,
    eligible: &Value,
    kept: Option<&Value>,
    networks: Option<&str>,
) -> Verdicts {
    run_verifiers(&DrawFiles::write(name, winners, eligible, kept, networks))
}
