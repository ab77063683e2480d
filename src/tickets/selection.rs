//! What a purchase or hold asks for, checked against its draw before anything is read
//! or written: a lucky dip's `quantity`, or the numbers the buyer chose.

use super::TicketError;
use tally_domain::draw::DrawConfig;

/// Chosen `numbers` against the draw (their count is the quantity, so a wrong count is
/// theirs to answer), else a lucky dip's `quantity`.
pub(super) fn check_selection(
    quantity: u32,
    numbers: Option<&[u64]>,
    config: &DrawConfig,
) -> Result<(), TicketError> {
    let max = config.max_per_purchase();
    match numbers {
        Some(numbers) => check_numbers(numbers, config.total_tickets(), quantity, max),
        None if (1..=max).contains(&quantity) => Ok(()),
        None => Err(TicketError::InvalidQuantity { max, quantity }),
    }
}

/// Chosen numbers must be `quantity`, 1 to `max`, distinct numbers of the draw, in
/// ascending order (the API sorts them).
fn check_numbers(numbers: &[u64], total: u64, quantity: u32, max: u32) -> Result<(), TicketError> {
    if !(1..=max as usize).contains(&numbers.len()) {
        return Err(TicketError::InvalidNumbers(format!(
            "`numbers` must hold 1 to {max} numbers (the draw's `max_per_purchase`), not {}",
            numbers.len()
        )));
    }
    if numbers.len() != quantity as usize {
        return Err(TicketError::InvalidNumbers(
            "`numbers` and `quantity` disagree".into(),
        ));
    }
    if let Some(&outside) = numbers.iter().find(|n| !(1..=total).contains(*n)) {
        return Err(TicketError::InvalidNumbers(format!(
            "number {outside} is outside 1..={total}"
        )));
    }
    if numbers.windows(2).any(|w| w[0] >= w[1]) {
        return Err(TicketError::InvalidNumbers(
            "`numbers` must be distinct".into(),
        ));
    }
    Ok(())
}
