//! The local command line, `tally`: serve the API on localhost, create the table, import,
//! audit and export orders, check a drawn draw, write the contract files, run the bench.
//! A crate of its own, so that clap, csv and indicatif never reach a Lambda function.
//!
//! # A tour
//!
//! - `main.rs`: the commands and where each finds its table (`outcome.rs`: how a run ends,
//!   and which table, local or in AWS, a command means).
//! - `file_import/`: `tally import`, a file of orders read record by record and sent to
//!   the table or to a running API; `import.rs` its command.
//! - `ledger.rs`, `export.rs`, `export_draw.rs`, `spreadsheet.rs`: audits and CSV exports.
//! - `verify.rs`: `tally verify-draw`, the domain's check on files or a running API.
//! - `contract.rs`: openapi.json and the events' schemas, for `make openapi`.
//! - `bench/`: `tally bench` (`make bench`), one file per measurement; the cold starts
//!   run the functions' binaries through `tally_testkit::lambda_harness`.

mod bench;
mod contract;
mod export;
mod export_draw;
mod file_import;
mod import;
mod journal;
mod ledger;
mod outcome;
mod output_file;
mod register;
mod spreadsheet;
mod verify;

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tally::api::{self, AppState};
use tally::secrets::SecretUse;
use tally::settings::Settings;
use tally::store::{Store, StoreConfig};
use tracing::warn;

use outcome::{Failure, InAws, Location, locate, say};

#[derive(Parser)]
#[command(
    name = "tally",
    about = "Collision-free ticket and order numbers",
    version
)]
struct Cli {
    /// The DynamoDB table.
    #[arg(long, env = "TABLE_NAME", default_value = "tally", global = true)]
    table: String,
    /// DynamoDB endpoint (for `serve`, a loopback address only). Unset: the table in AWS
    /// when AWS_REGION, AWS_DEFAULT_REGION or AWS_PROFILE is set (for `serve`, only with
    /// --aws), else the DynamoDB Local of `make run` (127.0.0.1, port DYNAMODB_PORT or 8000).
    #[arg(long, env = "DYNAMODB_ENDPOINT", global = true)]
    endpoint: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create the table if it is missing, then serve the HTTP API.
    Serve {
        #[arg(long, env = "TALLY_ADDR", default_value = "127.0.0.1:3000")]
        addr: SocketAddr,
        /// How long a client may take to send a request's head; then its connection is
        /// closed.
        #[arg(
            long,
            env = "TALLY_HEADER_READ_TIMEOUT_MS",
            default_value_t = 10_000,
            value_parser = clap::value_parser!(u64).range(1..)
        )]
        header_read_timeout_ms: u64,
        /// Serve the table in AWS (the usual credential chain) rather than DynamoDB Local.
        /// The server authenticates no one: anyone who reaches its address acts on that
        /// table. It then needs the deployment's secret (TALLY_DEPLOYMENT_SECRET_ARN).
        #[arg(long)]
        aws: bool,
        /// Write the business metrics (CloudWatch's Embedded Metric Format, JSON lines) to
        /// the log when each request ends, as the Lambda functions do; requests that
        /// overlap share their lines.
        #[arg(long, env = "TALLY_METRICS")]
        metrics: bool,
    },
    /// Create the table if it is missing.
    CreateTable,
    // Boxed: its many options make it the largest command by far.
    /// Measure allocation against the table (use DynamoDB Local, never production).
    Bench(Box<bench::BenchArgs>),
    /// Number the orders of a file (JSON lines, or CSV with an external_ref column).
    Import(import::ImportArgs),
    /// Audit a period of a series: counts, gaps and their causes, the hash chain.
    Audit(ledger::PeriodArgs),
    /// Write a period of a series as CSV, in counter order.
    Export(export::ExportArgs),
    /// Enter every series on its issuer, once, after an upgrade from a version without
    /// issuers (scans the whole table); prints the series that overlap.
    RegisterSeries,
    /// Write every purchase of a draw as CSV (payment, payer, tickets, status).
    ExportDraw(export_draw::ExportArgs),
    /// Check a drawn draw from its public data alone (seed, eligible list, every pick).
    VerifyDraw(verify::VerifyArgs),
    /// Write the OpenAPI document of the HTTP API and the JSON Schema of each domain event.
    Contract(contract::ContractArgs),
    /// The operator journal: `verify` checks its numbers and hash chain.
    Journal(journal::JournalArgs),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    // A benchmark logs only problems: a line per purchase would measure the terminal.
    let default_level = match cli.command {
        Command::Bench(_)
        | Command::Import(_)
        | Command::Audit(_)
        | Command::Export(_)
        | Command::RegisterSeries
        | Command::ExportDraw(_)
        | Command::VerifyDraw(_)
        | Command::Contract(_)
        | Command::Journal(_) => "warn",
        _ => "info",
    };
    let mut settings = match Settings::from_env() {
        Ok(settings) => settings,
        Err(message) => return Failure::CouldNotRun(message).report(),
    };
    if let Command::Serve { metrics: true, .. } = cli.command {
        settings.log.metrics_lines = true;
    }
    tally::telemetry::init(&settings.log, default_level);
    let in_aws = match cli.command {
        Command::Serve { aws: true, .. } => InAws::Asked,
        Command::Serve { aws: false, .. } => InAws::Never,
        _ => InAws::WhenNamed,
    };
    let location = match locate(cli.endpoint, &cli.table, &settings, in_aws) {
        Ok(location) => location,
        Err(failure) => return failure.report(),
    };
    let config = match StoreConfig::new(
        cli.table,
        location.endpoint.clone(),
        settings.timeouts,
        settings.aws,
    ) {
        Ok(config) => config,
        Err(message) => return Failure::CouldNotRun(message).report(),
    };
    match run(cli.command, config, &location, settings).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

async fn run(
    command: Command,
    config: StoreConfig,
    location: &Location,
    settings: Settings,
) -> Result<(), Failure> {
    match command {
        Command::Serve {
            addr,
            header_read_timeout_ms,
            aws,
            ..
        } => {
            // It authenticates no one, so it is reachable from this machine only.
            if !addr.ip().is_loopback() {
                return Err(format!(
                    "tally serve listens on a loopback address only (127.0.0.1, ::1), not {addr}: \
                     it authenticates no one"
                )
                .into());
            }
            // The table in AWS holds a deployment's purchases: they are fingerprinted
            // under its secret, never the public local one.
            let secret_use = if aws {
                SecretUse::Deployment
            } else {
                SecretUse::on(settings.runtime)
            };
            let secret = settings.secret.load(secret_use).await?;
            let store = Store::connect(&config, None).await;
            store
                .ensure_table()
                .await
                .map_err(|e| Failure::from(e.to_string()).at(location))?;
            let app = api::local_router(
                AppState::configured(store, Some(secret), &settings.http),
                settings.http.verify_page,
            );
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            // The address bound, so that port 0 (any free port) says which one it got.
            let addr = listener
                .local_addr()
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            if aws {
                warn!(
                    table = config.table_name,
                    %addr,
                    "serving the table in AWS: anyone who reaches this address acts on it, unauthenticated"
                );
            }
            say!(
                "Tally is listening on http://{addr} ({})",
                location.described
            )?;
            say!(
                "Try: curl -s -X POST http://{addr}/draws -H 'content-type: application/json' -d '{{\"total_tickets\": 100}}'"
            )?;
            let header_read_timeout = std::time::Duration::from_millis(header_read_timeout_ms);
            let (interrupted, shutdown) = tokio::sync::oneshot::channel();
            let first_interrupt = async {
                let _ = tokio::signal::ctrl_c().await;
                let _ = interrupted.send(());
            };
            let serving =
                api::local_server::serve(listener, app, first_interrupt, header_read_timeout);
            // Listening for Ctrl-C turns off its default, so a second one ends the wait
            // for open connections, as it would have ended the process.
            let second_interrupt = async {
                match shutdown.await {
                    Ok(()) => drop(tokio::signal::ctrl_c().await),
                    Err(_) => std::future::pending().await,
                }
            };
            tokio::select! {
                served = serving => served.map_err(|e| Failure::from(e.to_string())),
                () = second_interrupt => {
                    warn!("interrupted again: open connections were dropped");
                    Ok(())
                }
            }
        }
        Command::CreateTable => {
            let store = Store::connect(&config, None).await;
            store
                .ensure_table()
                .await
                .map_err(|e| Failure::from(e.to_string()).at(location))?;
            say!("table {} is ready", config.table_name)?;
            Ok(())
        }
        Command::Bench(args) => Ok(bench::run(*args, config).await?),
        Command::Import(args) => import::run(args, config, location).await,
        Command::Audit(args) => ledger::audit(args, config)
            .await
            .map_err(|f| f.at(location)),
        Command::Export(args) => Ok(export::run(args, config)
            .await
            .map_err(|e| Failure::from(e).at(location))?),
        Command::RegisterSeries => register::run(config).await.map_err(|f| f.at(location)),
        Command::ExportDraw(args) => Ok(export_draw::run(args, config)
            .await
            .map_err(|e| Failure::from(e).at(location))?),
        // Every check that fails is a finding; so is a file it cannot read (exit 1).
        Command::VerifyDraw(args) => verify::run(args, settings.http.networks)
            .await
            .map_err(Failure::Found),
        Command::Contract(args) => Ok(contract::run(args)?),
        Command::Journal(args) => journal::run(args, config).await.map_err(|f| f.at(location)),
    }
}
