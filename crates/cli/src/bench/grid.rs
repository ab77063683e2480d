//! The grid of a number picker (`GET /availability`) for a large draw, computed from
//! synthetic stripes without DynamoDB: half of the numbers sold (where the grid costs
//! most: it evaluates the smaller of the free and the sold indices), a tenth of the rest
//! chosen ahead of the cursors. Time on one thread and on every core, and the size of
//! the answer.

use std::num::NonZeroUsize;
use std::time::Instant;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use clap::Args;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tally_domain::availability::{StripeMarks, availability};
use tally_domain::draw::DrawConfig;
use tally_domain::permutation::{Permutation, PermutationKey};
use tally_domain::stripes::{Held, StripeCursors};

#[derive(Args)]
pub struct GridBenchArgs {
    /// Tickets of the synthetic draw whose grid is computed.
    #[arg(long, default_value_t = 1_000_000)]
    grid_tickets: u64,
    /// Skip the grid benchmark.
    #[arg(long)]
    pub skip_grid: bool,
}

pub(super) fn synthetic(args: &GridBenchArgs) -> Result<(), String> {
    let total = args.grid_tickets;
    let config = DrawConfig::new(total, None, None).map_err(|e| e.to_string())?;
    let layout = config.layout();
    let mut rng = StdRng::seed_from_u64(5);
    let stripes: Vec<StripeMarks> = (0..config.stripes())
        .map(|s| {
            let len = layout.len(s);
            let bottom = len / 4;
            let top = len / 4;
            let chosen = (bottom..len - top)
                .filter(|_| rng.random_range(0..10) == 0)
                .collect();
            (StripeCursors { bottom, top }, chosen, Held::new())
        })
        .collect();
    let permutation = Permutation::new(total, &PermutationKey::generate());
    let every = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
    println!(
        "Grid of free numbers, {total} tickets in {} stripes, half sold:",
        config.stripes()
    );
    for threads in [NonZeroUsize::MIN, every] {
        let started = Instant::now();
        let grid = availability(&permutation, layout, &stripes, 0, threads);
        let elapsed = started.elapsed();
        let encoded = STANDARD.encode(&grid.bitmap).len();
        println!(
            "  {} thread(s): {:.1} ms; {} free, bitmap {} bytes, {} characters of base64",
            threads,
            elapsed.as_secs_f64() * 1e3,
            grid.free,
            grid.bitmap.len(),
            encoded
        );
    }
    Ok(())
}
