//! The two verifiers of a drawn draw run on its answers written to files: Tally's own
//! check (the one `tally verify-draw` and the browser page run) and the independent
//! `scripts/verify-draw.py`; and which step each failed first.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use tally_domain::winners::{BeaconNetworks, Outcome, check_answers};

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

/// The answers written to files in a folder of their own, removed when this drops.
#[derive(Debug)]
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

    /// The verifier's arguments for these files: `--draw` and `--networks` when written.
    pub fn options(&self) -> Vec<&Path> {
        let mut options = Vec::new();
        for (flag, path) in [("--draw", &self.draw), ("--networks", &self.networks)] {
            if let Some(path) = path {
                options.push(Path::new(flag));
                options.push(path.as_path());
            }
        }
        options
    }
}

impl Drop for DrawFiles {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// The first step a command-line verifier printed as failed (`FAIL <step> ...`), when it
/// exited 1; `Ok` when it exited 0 and printed no failure.
pub fn printed_verdict(output: &Output, who: &str) -> Result<(), String> {
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

/// Tally's own check of the files, trusting quicknet and the networks file if written.
pub fn tally_verdict(files: &DrawFiles) -> Result<(), String> {
    let read = |path: &Path| std::fs::read_to_string(path).unwrap();
    let networks = files.networks.as_deref().map(read);
    let trusted = BeaconNetworks::with_json(networks.as_deref()).expect("trusted networks");
    let kept = files.draw.as_deref().map(read);
    let report = check_answers(
        &read(&files.winners),
        &read(&files.eligible),
        kept.as_deref(),
        &trusted,
    );
    match report.steps.iter().find(|s| s.outcome == Outcome::Fail) {
        None => Ok(()),
        Some(step) => Err(step.id.to_owned()),
    }
}

/// `scripts/verify-draw.py` on the files, run by the PATH's `python3` with
/// `python_flags`.
pub fn run_python_verifier(files: &DrawFiles, python_flags: &[&str]) -> Output {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/verify-draw.py");
    Command::new("python3")
        .args(python_flags)
        .arg(script)
        .arg(&files.winners)
        .arg(&files.eligible)
        .args(files.options())
        .env_remove("TALLY_BEACON_NETWORKS")
        .output()
        .unwrap()
}

/// Runs both verifiers on the files.
pub fn run_verifiers(files: &DrawFiles) -> Verdicts {
    let python = run_python_verifier(files, &[]);
    Verdicts {
        rust: tally_verdict(files),
        python: printed_verdict(&python, "verify-draw.py"),
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
