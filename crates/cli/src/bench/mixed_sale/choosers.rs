//! The choosers of the mixed sale: baskets of numbers picked on the grid, bought at once
//! or held, then paid, released or left to expire. A basket
//! some of whose numbers a lucky dip sold first (`409 numbers_taken`) swaps them for
//! numbers free on a fresh grid, as a buyer picks again.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tally::store::Store;
use tally::tickets::{ConvertRequest, TicketError, TicketService};
use tally_domain::availability::Availability;
use tally_domain::hold::HoldRequest;
use tally_domain::ids::{HoldId, PayerId, PaymentId};
use tally_domain::purchase::PurchaseRequest;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::super::sell_out::{as_a_client, buy};
use super::{MixedSaleArgs, Sale};

/// Numbers in one basket: 1 to this many.
const BASKET_MOST: u64 = 10;
/// Tries of one basket whose numbers keep being taken before it is given up.
const BASKET_TRIES: u32 = 20;
/// A held basket is paid or released this long after it was held, at random.
const PAYING_SECONDS: std::ops::RangeInclusive<u64> = 2..=10;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    Buy,
    Pay,
    Release,
    Expire,
}

#[derive(Clone)]
pub(super) struct Basket {
    numbers: Vec<u64>,
    fate: Fate,
}

impl Basket {
    /// Its numbers end up sold to the chooser.
    pub(super) fn bought(&self) -> bool {
        matches!(self.fate, Fate::Buy | Fate::Pay)
    }

    pub(super) fn len(&self) -> u64 {
        self.numbers.len() as u64
    }
}

/// Purchases or holds, and their tickets.
#[derive(Default, Clone, Copy)]
pub(super) struct Count {
    pub(super) count: u64,
    pub(super) tickets: u64,
}

impl Count {
    fn add(&mut self, tickets: usize) {
        self.count += 1;
        self.tickets += tickets as u64;
    }
}

#[derive(Default, Clone, Copy)]
pub(super) struct ChooserFigures {
    pub(super) bought: Count,
    pub(super) paid: Count,
    pub(super) released: Count,
    pub(super) expired: Count,
    /// Holds whose payment came after their deadline.
    pub(super) paid_late: Count,
    /// Answers `numbers_taken`.
    pub(super) taken: u64,
    /// Baskets whose numbers were all taken, or taken too often.
    pub(super) given_up: u64,
    /// Holds turned away because live holds took the draw's share where the basket lay
    /// (`holds_full`), or the numbers left were held (`tickets_held`): given up.
    pub(super) turned_away: u64,
}

/// Baskets of distinct random numbers, each with its fate, until the bought ones reach the
/// chosen share of the draw.
pub(super) fn plan_baskets(args: &MixedSaleArgs, total: u64) -> Vec<Basket> {
    let mut rng = StdRng::seed_from_u64(19);
    let mut numbers: Vec<u64> = (1..=total).collect();
    for i in (1..numbers.len()).rev() {
        numbers.swap(i, rng.random_range(0..=i));
    }
    let target = (args.mixed_chosen_share * total as f64) as u64;
    let (mut baskets, mut bought, mut next) = (Vec::new(), 0u64, 0usize);
    while bought < target && next < numbers.len() {
        let size = rng.random_range(1..=BASKET_MOST).min(target - bought) as usize;
        let fate = if rng.random::<f64>() >= args.mixed_held_share {
            Fate::Buy
        } else {
            let roll = rng.random::<f64>();
            if roll < args.mixed_expired_share {
                Fate::Expire
            } else if roll < args.mixed_expired_share + args.mixed_released_share {
                Fate::Release
            } else {
                Fate::Pay
            }
        };
        let end = (next + size).min(numbers.len());
        let basket = Basket {
            numbers: numbers[next..end].to_vec(),
            fate,
        };
        next = end;
        if basket.bought() {
            bought += basket.len();
        }
        baskets.push(basket);
    }
    baskets
}

/// What every basket shares.
struct Choosing {
    sale: Arc<Sale>,
    /// One call at a time per process, as a Lambda instance serves one request at a time:
    /// a basket that arrives while every process is busy waits for one.
    processes: Semaphore,
    figures: Mutex<ChooserFigures>,
}

/// Baskets placed, and the payments and releases still to come.
pub(super) struct Placed {
    choosing: Arc<Choosing>,
    later: Vec<FollowUp>,
}

type FollowUp = JoinHandle<Result<(), String>>;

impl Placed {
    /// Waits for the payments and releases; answers what the choosers did.
    pub(super) async fn finish(self) -> Result<ChooserFigures, String> {
        for task in self.later {
            task.await.map_err(|e| e.to_string())??;
        }
        let figures = *self.choosing.figures();
        Ok(figures)
    }
}

/// Places every basket (bought or held), `processes` services serving them one call at a
/// time each; a held basket's payment or release comes 2 to 10 s after its hold, as a
/// payment webhook does, whatever the baskets still waiting.
pub(super) async fn place(
    sale: Arc<Sale>,
    store: Store,
    processes: usize,
    baskets: Vec<Basket>,
) -> Result<Placed, String> {
    let choosing = Arc::new(Choosing {
        sale,
        processes: Semaphore::new(processes.max(1)),
        figures: Mutex::new(ChooserFigures::default()),
    });
    let services: Vec<Arc<TicketService>> = (0..processes.max(1))
        .map(|_| Arc::new(TicketService::new(store.clone())))
        .collect();
    let mut tasks = Vec::new();
    for (index, basket) in baskets.into_iter().enumerate() {
        let service = services[index % services.len()].clone();
        tasks.push(tokio::spawn(settle(
            choosing.clone(),
            service,
            basket,
            index,
        )));
    }
    let mut later = Vec::new();
    for task in tasks {
        later.extend(task.await.map_err(|e| e.to_string())??);
    }
    Ok(Placed { choosing, later })
}

/// Buys or holds one basket, swapping numbers found taken; a held basket gets the task
/// that pays for it or releases it 2 to 10 s later, unless it is left to expire.
async fn settle(
    choosing: Arc<Choosing>,
    service: Arc<TicketService>,
    mut basket: Basket,
    index: usize,
) -> Result<Option<FollowUp>, String> {
    let sale = &choosing.sale;
    let size = basket.numbers.len();
    for attempt in 0..BASKET_TRIES {
        let serving = choosing
            .processes
            .acquire()
            .await
            .map_err(|e| e.to_string())?;
        basket.numbers.sort_unstable();
        let numbers = basket.numbers.clone();
        let quantity = numbers.len() as u32;
        let held = if basket.fate == Fate::Buy {
            let request = PurchaseRequest {
                draw_id: sale.draw_id.clone(),
                payment_id: id(&format!("chosen-{index}-{attempt}"))?,
                quantity,
                numbers: Some(numbers.clone()),
                payer_id: None,
                token: None,
                channel: Default::default(),
                amount: None,
            };
            buy(&service, request, &sale.repeats).await.map(|_| None)
        } else {
            let request = HoldRequest {
                draw_id: sale.draw_id.clone(),
                hold_id: HoldId::parse(&format!("basket-{index}-{attempt}"))
                    .map_err(|e| e.to_string())?,
                quantity,
                numbers: Some(numbers.clone()),
                // A buyer per basket: each holds one basket at a time.
                payer_id: PayerId::parse(&format!("chooser-{index}")).map_err(|e| e.to_string())?,
            };
            as_a_client(&sale.repeats, || service.hold(request.clone()))
                .await
                .map(|receipt| Some(receipt.hold.hold_id))
        };
        match held {
            Ok(None) => {
                sale.sold.fetch_add(u64::from(quantity), Ordering::Relaxed);
                choosing.figures().bought.add(numbers.len());
                return Ok(None);
            }
            Ok(Some(_)) if basket.fate == Fate::Expire => {
                choosing.figures().expired.add(numbers.len());
                return Ok(None);
            }
            Ok(Some(hold_id)) => {
                drop(serving);
                let mut rng = StdRng::seed_from_u64(index as u64);
                let paying = Duration::from_secs(rng.random_range(PAYING_SECONDS));
                let (choosing, fate) = (choosing.clone(), basket.fate);
                return Ok(Some(tokio::spawn(async move {
                    tokio::time::sleep(paying).await;
                    let _serving = choosing
                        .processes
                        .acquire()
                        .await
                        .map_err(|e| e.to_string())?;
                    follow_up(&choosing, &service, fate, hold_id, index, numbers.len()).await
                })));
            }
            Err(TicketError::NumbersTaken(taken)) => {
                choosing.figures().taken += 1;
                basket.numbers.retain(|n| !taken.contains(n));
                let grid = as_a_client(&sale.repeats, || service.availability(&sale.draw_id))
                    .await
                    .map_err(|e| format!("grid for basket {index}: {e}"))?;
                let mut free = free_numbers(&grid.availability);
                free.retain(|n| !basket.numbers.contains(n));
                let mut rng = StdRng::seed_from_u64(index as u64 * 1_000 + u64::from(attempt));
                while basket.numbers.len() < size && !free.is_empty() {
                    let picked = rng.random_range(0..free.len());
                    basket.numbers.push(free.swap_remove(picked));
                }
                if basket.numbers.is_empty() {
                    break;
                }
            }
            // As a buyer told to come back later, who does not.
            Err(TicketError::HoldsFull { .. } | TicketError::TicketsHeld { .. }) => {
                choosing.figures().turned_away += 1;
                return Ok(None);
            }
            Err(other) => return Err(format!("basket {index}: {other}")),
        }
    }
    choosing.figures().given_up += 1;
    Ok(None)
}

/// Pays for a hold or releases it. A payment that comes after the deadline (a machine
/// too slow to pay within `hold_seconds`) finds the hold expired, as a late buyer would.
async fn follow_up(
    choosing: &Choosing,
    service: &TicketService,
    fate: Fate,
    hold_id: HoldId,
    index: usize,
    tickets: usize,
) -> Result<(), String> {
    let sale = &choosing.sale;
    if fate == Fate::Release {
        as_a_client(&sale.repeats, || {
            service.release_hold(&sale.draw_id, &hold_id)
        })
        .await
        .map_err(|e| format!("release of basket {index}: {e}"))?;
        choosing.figures().released.add(tickets);
        return Ok(());
    }
    let request = ConvertRequest {
        draw_id: sale.draw_id.clone(),
        payment_id: id(&format!("paid-{index}"))?,
        hold_id,
        token: None,
    };
    match as_a_client(&sale.repeats, || service.convert(request.clone())).await {
        Ok(_) => {
            sale.sold.fetch_add(tickets as u64, Ordering::Relaxed);
            choosing.figures().paid.add(tickets);
            Ok(())
        }
        Err(TicketError::HoldExpired(_)) => {
            choosing.figures().paid_late.add(tickets);
            Ok(())
        }
        Err(other) => Err(format!("payment of basket {index}: {other}")),
    }
}

/// The numbers a grid shows free: bit `n - 1` stands for number `n`, least significant
/// bit first.
fn free_numbers(grid: &Availability) -> Vec<u64> {
    (0..grid.total)
        .filter(|&i| grid.bitmap[(i / 8) as usize] >> (i % 8) & 1 == 1)
        .map(|i| i + 1)
        .collect()
}

impl Choosing {
    fn figures(&self) -> std::sync::MutexGuard<'_, ChooserFigures> {
        self.figures.lock().expect("not poisoned")
    }
}

fn id(text: &str) -> Result<PaymentId, String> {
    PaymentId::parse(text).map_err(|e| e.to_string())
}
