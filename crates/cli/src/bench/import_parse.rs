//! The import parse benchmark: `tally import` reads generated CSV and JSON-lines files of
//! 20,000 to 200,000 lines. Parsing in linear time keeps the time per line flat as files
//! grow. It needs no DynamoDB.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::file_import::read_lines;
use clap::Args;

#[derive(Args)]
pub struct ImportParseArgs {
    /// Skip timing how `tally import` parses files.
    #[arg(long)]
    skip_import_parse: bool,
}

/// File sizes, in lines; the last against the first shows whether parsing is linear.
const SIZES: [usize; 3] = [20_000, 40_000, 200_000];

/// Parses of each file; the fastest counts, as other work on the machine only slows runs.
const RUNS: usize = 3;

#[derive(Clone, Copy)]
enum Format {
    Csv,
    JsonLines,
}

impl Format {
    fn label(self) -> &'static str {
        match self {
            Self::Csv => "CSV",
            Self::JsonLines => "JSON lines",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::JsonLines => "jsonl",
        }
    }

    /// A file of `lines` lines: one order per line (after the CSV header), with a quoted
    /// field holding a comma.
    fn generate(self, lines: usize) -> String {
        let mut text = String::with_capacity(lines * 80);
        match self {
            Self::Csv => {
                text.push_str("external_ref,customer,total\n");
                for i in 1..lines {
                    text.push_str(&format!("PO-{i},\"Smith, J\",{}.{:02}\n", i % 997, i % 100));
                }
            }
            Self::JsonLines => {
                for i in 0..lines {
                    text.push_str(&format!(
                        "{{\"external_ref\": \"PO-{i}\", \"data\": {{\"customer\": \"Smith, J\", \"total\": \"{}.{:02}\"}}}}\n",
                        i % 997,
                        i % 100
                    ));
                }
            }
        }
        text
    }

    /// Orders in a file of `lines` lines.
    fn orders(self, lines: usize) -> usize {
        match self {
            Self::Csv => lines - 1,
            Self::JsonLines => lines,
        }
    }
}

pub fn run(args: &ImportParseArgs) -> Result<(), String> {
    if args.skip_import_parse {
        return Ok(());
    }
    let dir = std::env::temp_dir().join(format!("tally-bench-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = time_formats(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn time_formats(dir: &Path) -> Result<(), String> {
    println!("Parsing import files (fastest of {RUNS} parses each, no DynamoDB)");
    for format in [Format::Csv, Format::JsonLines] {
        let mut per_line = Vec::new();
        for lines in SIZES {
            let path = write_file(dir, format, lines)?;
            let elapsed = fastest_parse(&path, format.orders(lines))?;
            let micros = elapsed.as_secs_f64() * 1e6 / lines as f64;
            println!(
                "  {:<10} {lines:>7} lines  {:>8.3} s  {micros:>6.2} µs/line",
                format.label(),
                elapsed.as_secs_f64()
            );
            per_line.push(micros);
        }
        println!(
            "  {:<10} per-line time, {} lines against {}: {:.2}x (linear is about 1x)",
            format.label(),
            SIZES[SIZES.len() - 1],
            SIZES[0],
            per_line[per_line.len() - 1] / per_line[0]
        );
    }
    Ok(())
}

fn write_file(dir: &Path, format: Format, lines: usize) -> Result<PathBuf, String> {
    let path = dir.join(format!("orders-{lines}.{}", format.extension()));
    std::fs::write(&path, format.generate(lines))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The fastest of `RUNS` parses of `path`, after checking that every order was read.
fn fastest_parse(path: &Path, orders: usize) -> Result<Duration, String> {
    let mut fastest = Duration::MAX;
    for _ in 0..RUNS {
        let started = Instant::now();
        let lines = read_lines(path)?;
        fastest = fastest.min(started.elapsed());
        let valid = lines.iter().filter(|l| l.item.is_ok()).count();
        if valid != orders {
            return Err(format!(
                "{}: read {valid} orders of {orders}",
                path.display()
            ));
        }
    }
    Ok(fastest)
}
