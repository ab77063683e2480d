//! A bootstrap started as Lambda starts it: a clean environment holding what Lambda sets
//! for a `provided.al2023` function and what template.yaml gives its functions, its logs
//! in a file, and its memory read from `/proc`.

use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// What the bootstrap is given besides Lambda's own variables.
pub struct FunctionEnv<'a> {
    pub function: &'a str,
    pub table: &'a str,
    pub dynamodb_endpoint: &'a str,
    /// Stands in for the secret the template generates in Secrets Manager.
    pub deployment_secret: &'a str,
    /// Variables set last, over Lambda's and the template's (a log level, credentials).
    pub overrides: &'a [(&'a str, &'a str)],
}

/// A running bootstrap, killed when dropped.
pub struct Bootstrap {
    child: Child,
    pub log: PathBuf,
}

impl Drop for Bootstrap {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Lambda region and account the bench pretends to run in.
pub const REGION: &str = "us-east-1";
pub const ACCOUNT: &str = "123456789012";

impl Bootstrap {
    /// Starts `path` with the environment of Lambda (its runtime API at `runtime_api`) and
    /// of template.yaml's `Globals`; stdout and stderr go to `log`.
    pub fn start(
        path: &Path,
        env: &FunctionEnv<'_>,
        runtime_api: SocketAddr,
        log: PathBuf,
    ) -> Result<Self, String> {
        let output = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let errors = output.try_clone().map_err(|e| e.to_string())?;
        let name = format!("tally-{}", env.function);
        let child = Command::new(path)
            .env_clear()
            .envs([
                // What Lambda sets for a custom runtime.
                ("AWS_LAMBDA_RUNTIME_API", runtime_api.to_string().as_str()),
                ("AWS_LAMBDA_FUNCTION_NAME", &name),
                ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"),
                ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256"),
                ("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand"),
                ("AWS_LAMBDA_LOG_GROUP_NAME", &format!("/aws/lambda/{name}")),
                (
                    "AWS_LAMBDA_LOG_STREAM_NAME",
                    "2026/01/01/[$LATEST]cold-start",
                ),
                ("AWS_LAMBDA_LOG_FORMAT", "JSON"),
                ("AWS_LAMBDA_LOG_LEVEL", "TRACE"),
                ("AWS_REGION", REGION),
                ("AWS_DEFAULT_REGION", REGION),
                ("AWS_ACCESS_KEY_ID", "local"),
                ("AWS_SECRET_ACCESS_KEY", "local"),
                ("AWS_SESSION_TOKEN", "local"),
                ("AWS_EXECUTION_ENV", "AWS_Lambda_provided.al2023"),
                ("_HANDLER", "bootstrap"),
                ("LAMBDA_TASK_ROOT", "/var/task"),
                ("LAMBDA_RUNTIME_DIR", "/var/runtime"),
                ("LANG", "en_US.UTF-8"),
                ("TZ", ":UTC"),
                ("PATH", "/usr/local/bin:/usr/bin/:/bin:/opt/bin"),
                // template.yaml's Globals, and DynamoDB Local in place of DynamoDB.
                ("TABLE_NAME", env.table),
                ("RUST_LOG", "info"),
                ("TALLY_REQUEST_TIMEOUT_MS", "12000"),
                ("DYNAMODB_ENDPOINT", env.dynamodb_endpoint),
                // The events function's bus, stood in for by the runtime API's server.
                ("EVENT_BUS_NAME", "tally-cold-start"),
                ("EVENTBRIDGE_ENDPOINT", &format!("http://{runtime_api}")),
                ("TALLY_DEPLOYMENT_SECRET", env.deployment_secret),
            ])
            .envs(env.overrides.iter().copied())
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(errors)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", path.display()))?;
        Ok(Self { child, log })
    }

    /// The process's memory now, from `/proc/<pid>/status`.
    pub fn memory(&self) -> Result<Memory, String> {
        let path = format!("/proc/{}/status", self.child.id());
        let status = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        let kib = |field: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(field))
                .and_then(|rest| {
                    rest.trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
                .ok_or(format!("{path} has no {field}"))
        };
        Ok(Memory {
            rss_kib: kib("VmRSS:")?,
            peak_rss_kib: kib("VmHWM:")?,
        })
    }

    /// The exit status, if the process has ended.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

/// Resident memory of a process.
#[derive(Clone, Copy)]
pub struct Memory {
    /// Resident now (VmRSS).
    pub rss_kib: u64,
    /// The most ever resident (VmHWM).
    pub peak_rss_kib: u64,
}
