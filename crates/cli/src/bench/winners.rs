//! Drawing winners at scale: the eligible list of a sold-out draw of 10,000,000 tickets
//! with voids, computed from synthetic stripe cursors (time and peak memory), then a draw
//! of 100,000 tickets end to end (sold, voided, closed, drawn and verified through the
//! service against the table).

use std::num::NonZeroUsize;
use std::ops::Range;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use clap::Args;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tally::store::Store;
use tally::tickets::{TicketError, TicketService};
use tally_domain::draw::DrawConfig;
use tally_domain::hex;
use tally_domain::ids::{DrawId, PayerId, PaymentId};
use tally_domain::instant::{InstantKey, InstantPrize, InstantWins, MAX_INSTANT_PRIZES};
use tally_domain::journal::Operator;
use tally_domain::permutation::{Permutation, PermutationKey};
use tally_domain::purchase::PurchaseRequest;
use tally_domain::secret::DeploymentSecret;
use tally_domain::seed::DrawSeed;
use tally_domain::winners::{
    BeaconNetworks, DrawInputs, EligibleSet, PickRecord, Picks, ProofPick, PublicList, PublicProof,
    check,
};

use super::create_draw;

#[derive(Args)]
pub struct WinnersBenchArgs {
    /// Tickets of the synthetic sold-out draw.
    #[arg(long, default_value_t = 10_000_000)]
    winners_tickets: u64,
    /// Share of its tickets voided.
    #[arg(long, default_value_t = 0.01)]
    winners_void_share: f64,
    /// Tickets of the draw sold, voided and drawn end to end.
    #[arg(long, default_value_t = 100_000)]
    end_to_end_tickets: u64,
    /// Skip the winners benchmark.
    #[arg(long)]
    pub skip_winners: bool,
}

/// Computing the eligible list of a synthetic sold-out draw, without DynamoDB.
pub(super) fn synthetic(args: &WinnersBenchArgs) -> Result<(), String> {
    let total = args.winners_tickets;
    let config = DrawConfig::new(total, None, None).map_err(|e| e.to_string())?;
    let layout = config.layout();
    let mut rng = StdRng::seed_from_u64(11);
    // Sold out: each stripe sold from both ends, met somewhere inside.
    let sold: Vec<Range<u64>> = (0..config.stripes())
        .flat_map(|s| {
            let indices = layout.indices(s);
            let bottom = rng.random_range(0..=indices.end - indices.start);
            [
                indices.start..indices.start + bottom,
                indices.start + bottom..indices.end,
            ]
        })
        .collect();
    let key = PermutationKey::generate();
    let permutation = Permutation::new(total, &key);
    let voids = (total as f64 * args.winners_void_share) as usize;
    let voided: Vec<u64> = {
        let mut picked = std::collections::HashSet::new();
        while picked.len() < voids {
            picked.insert(permutation.apply(rng.random_range(0..total)) + 1);
        }
        picked.into_iter().collect()
    };
    println!(
        "\nWinners of a sold-out draw of {total} tickets in {} stripes, {} voided (synthetic cursors, no DynamoDB)",
        config.stripes(),
        voided.len()
    );
    let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
    for threads in [NonZeroUsize::MIN, threads] {
        let memory = PeakMemory::start();
        let cpu_before = cpu_seconds();
        let started = Instant::now();
        let mut set = EligibleSet::sold(&permutation, &sold, threads);
        let images = started.elapsed();
        set.remove_voided(&voided).map_err(|e| e.to_string())?;
        let digest = set.digest();
        let listed = started.elapsed();
        let inputs = DrawInputs {
            seed: *DrawSeed::generate().as_bytes(),
            digest,
        };
        let picks = Picks::new(&set, inputs).take(100, &[7; 32]);
        let drawn = started.elapsed();
        let cpu = cpu_seconds()
            .zip(cpu_before)
            .map(|(after, before)| after - before);
        let body = STANDARD.encode(set.to_bitmap()).len();
        println!(
            "  {} thread(s): sold tickets {:.2} s, eligible list and digest {:.2} s, 100 picks {:.3} s: {:.2} s in all{}",
            threads,
            images.as_secs_f64(),
            (listed - images).as_secs_f64(),
            (drawn - listed).as_secs_f64(),
            drawn.as_secs_f64(),
            cpu.map_or(String::new(), |cpu| format!(
                " ({cpu:.2} s of CPU: the figure a busy machine does not inflate)"
            ))
        );
        println!(
            "    eligible {}, first winner {}, bitmap {} bytes, {body} in base64 ({:.1}% of a 6 MB Lambda response)",
            set.count(),
            picks[0].1,
            set.to_bitmap().len(),
            100.0 * body as f64 / 6_291_456.0
        );
        if let Some((peak, before)) = memory.peak() {
            println!(
                "    peak resident memory {:.1} MB ({:.1} MB above the {:.1} MB before)",
                peak as f64 / 1024.0,
                peak.saturating_sub(before) as f64 / 1024.0,
                before as f64 / 1024.0
            );
        }
    }
    instant_map_cost(total)
}

/// What keeping the instant-win map out of the table costs a process: deriving the key
/// from the deployment secret and the map from the key, once per draw it loads.
fn instant_map_cost(total: u64) -> Result<(), String> {
    let secret = DeploymentSecret::local();
    let seed = DrawSeed::generate();
    let prizes = vec![InstantPrize {
        prize: "voucher".into(),
        count: MAX_INSTANT_PRIZES,
    }];
    let started = Instant::now();
    let key = InstantKey::derive(&secret, &seed);
    let wins = InstantWins::new(prizes, total, &key).map_err(|e| e.to_string())?;
    let map = wins.map(&key, total);
    println!(
        "  instant wins: key and map of {} winning numbers among {total}: {:.3} ms",
        map.len(),
        started.elapsed().as_secs_f64() * 1_000.0
    );
    Ok(())
}

/// A draw sold out through the service, 1% of its purchases voided, closed, drawn and
/// its eligible list served and verified.
pub(super) async fn end_to_end(args: &WinnersBenchArgs, store: &Store) -> Result<(), String> {
    let total = args.end_to_end_tickets;
    let draw_id = DrawId::parse("winners-e2e").expect("valid id");
    let config = DrawConfig::new(total, Some(50), None).map_err(|e| e.to_string())?;
    create_draw(store, &draw_id, config).await?;
    let service = TicketService::new(store.clone());
    println!("\nA draw of {total} tickets end to end (DynamoDB Local)");
    let started = Instant::now();
    let mut buyers = Vec::new();
    for buyer in 0..16u64 {
        let service = TicketService::new(store.clone());
        let draw_id = draw_id.clone();
        buyers.push(tokio::spawn(async move {
            let mut payments = Vec::new();
            for n in 0.. {
                let payment = PaymentId::parse(&format!("b{buyer}-{n}")).expect("valid id");
                let request = PurchaseRequest {
                    draw_id: draw_id.clone(),
                    payment_id: payment.clone(),
                    quantity: 50,
                    numbers: None,
                    payer_id: Some(PayerId::parse(&format!("payer-{}", n % 97)).expect("valid")),
                    token: None,
                    channel: Default::default(),
                    amount: None,
                };
                match service.purchase(request).await {
                    Ok(_) => payments.push(payment),
                    Err(TicketError::SoldOut { .. }) => return Ok(payments),
                    Err(other) => return Err(other.to_string()),
                }
            }
            Ok(payments)
        }));
    }
    let mut payments = Vec::new();
    for buyer in buyers {
        payments.extend(buyer.await.map_err(|e| e.to_string())??);
    }
    let sold_in = started.elapsed();
    for payment in payments.iter().step_by(100) {
        service
            .void_purchase(&draw_id, payment, "bench refund", &Operator::local())
            .await
            .map_err(|e| e.to_string())?;
    }
    service
        .close_draw(&draw_id, Some(10), &Operator::local())
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "  sold out in {:.1} s ({} purchases), {} voided, closed",
        sold_in.as_secs_f64(),
        payments.len(),
        payments.len().div_ceil(100)
    );
    let timed = Instant::now();
    let winners = service
        .draw_winners(&draw_id, None, None, &Operator::local())
        .await
        .map_err(|e| e.to_string())?;
    let drawing = timed.elapsed();
    let timed = Instant::now();
    let (_, eligible) = service
        .get_eligible(&draw_id, &Operator::local())
        .await
        .map_err(|e| e.to_string())?;
    let serving = timed.elapsed();
    let digest = hex::decode32(&winners.record.eligible_digest).ok_or("digest")?;
    let proof = PublicProof {
        seed: *winners.draw.seed.as_bytes(),
        seed_commitment: hex::decode32(&winners.draw.seed.commitment()).ok_or("commitment")?,
        total_tickets: total,
        eligible_count: winners.record.eligible_count,
        eligible_digest: digest,
        frozen_at_ms: 0,
        prizes: winners.record.prizes,
        drawn_at_ms: Some(0),
        network: None,
        beacon: None,
        picks: winners
            .picks
            .iter()
            .map(|p| ProofPick {
                record: PickRecord {
                    pick: p.pick,
                    prize: p.prize,
                    ticket: p.ticket,
                },
                requested_at_ms: None,
                beacon: None,
            })
            .collect(),
        published_prizes: winners
            .prizes()
            .iter()
            .map(|p| (p.prize, p.pick.ticket))
            .collect(),
        pending: None,
        instant: None,
    };
    let list = PublicList {
        total_tickets: total,
        bitmap: eligible.to_bitmap(),
        eligible_count: eligible.count(),
        eligible_digest: digest,
    };
    let timed = Instant::now();
    let report = check(&proof, &list, None, &BeaconNetworks::default());
    if let Some(failure) = report.failure() {
        return Err(failure);
    }
    println!(
        "  POST winners (10 prizes, {} eligible): {}; GET eligible: {}; verified in {}",
        winners.record.eligible_count,
        ms(drawing),
        ms(serving),
        ms(timed.elapsed())
    );
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

/// The peak resident memory of this process while a part runs (Linux: the high-water mark
/// is reset through /proc/self/clear_refs).
struct PeakMemory {
    before: Option<u64>,
}

impl PeakMemory {
    fn start() -> Self {
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        Self {
            before: reset.then(|| status_kb("VmRSS")).flatten(),
        }
    }

    /// Peak and starting resident memory, in KiB.
    fn peak(&self) -> Option<(u64, u64)> {
        Some((status_kb("VmHWM")?, self.before?))
    }
}

/// CPU time this process has used, user and system, in seconds (Linux, at 100 ticks a
/// second as the kernel reports them in /proc/self/stat).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which ends with ')': state is field 3, utime 14.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}
