//! Holds: numbers kept for one buyer while they pay, until a deadline. A hold is decided
//! by its deadline against the writer's clock, inside the conditional writes; nothing
//! waits for a timer or for DynamoDB's TTL. Pure logic: no I/O.

use hmac::Mac;
use jiff::{SignedDuration, Timestamp};

use super::hex;
use super::ids::{DrawId, HoldId, PayerId, PaymentId};
use super::purchase::FingerprintKey;
use super::schedule::Schedule;

/// A hold as asked for: a lucky dip of `quantity` or the `numbers` the buyer chose.
#[derive(Debug, Clone)]
pub struct HoldRequest {
    pub draw_id: DrawId,
    pub hold_id: HoldId,
    pub quantity: u32,
    /// Ascending and distinct (`quantity` of them); `None` for a lucky dip.
    pub numbers: Option<Vec<u64>>,
    /// Who holds them: every hold names its payer, whose live holds the draw caps.
    pub payer_id: PayerId,
}

impl HoldRequest {
    /// What tells a repeat of this hold from another body under the same id.
    pub fn fingerprint(&self, key: &FingerprintKey) -> String {
        let mut mac = key.mac();
        mac.update(b"hold");
        mac.update(&self.quantity.to_be_bytes());
        let payer = self.payer_id.as_str();
        mac.update(&(payer.len() as u64).to_be_bytes());
        mac.update(payer.as_bytes());
        if let Some(numbers) = &self.numbers {
            mac.update(b"numbers");
            for number in numbers {
                mac.update(&number.to_be_bytes());
            }
        }
        hex::encode(&mac.finalize().into_bytes())
    }
}

/// The payment that converts a hold: what tells a repeat from another body under the
/// same payment id.
pub fn conversion_fingerprint(
    key: &FingerprintKey,
    hold_id: &HoldId,
    token: Option<&str>,
) -> String {
    let mut mac = key.mac();
    mac.update(b"convert");
    mac.update(hold_id.as_str().as_bytes());
    if let Some(token) = token {
        mac.update(&[1]);
        mac.update(token.as_bytes());
    }
    hex::encode(&mac.finalize().into_bytes())
}

/// How a hold ended, as stored; a hold whose deadline passed is over whatever it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldEnd {
    /// Not ended by a call: it lives until its deadline.
    Open,
    Released,
    Converted(PaymentId),
}

/// What a hold is at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum HoldStatus {
    Held,
    Expired,
    Released,
    Converted,
}

/// A hold on record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub draw_id: DrawId,
    pub hold_id: HoldId,
    pub payer_id: PayerId,
    /// Ascending when chosen, in the order picked for a lucky dip.
    pub tickets: Vec<u64>,
    pub chosen: bool,
    pub fingerprint: String,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    pub end: HoldEnd,
}

impl Hold {
    pub fn status_at(&self, now: Timestamp) -> HoldStatus {
        match self.end {
            HoldEnd::Converted(_) => HoldStatus::Converted,
            HoldEnd::Released => HoldStatus::Released,
            HoldEnd::Open if now < self.expires_at => HoldStatus::Held,
            HoldEnd::Open => HoldStatus::Expired,
        }
    }

    /// The status at `now` once the close has reached the hold's numbers: a hold that
    /// still lived ended with the sale, as its payment answers `hold_expired`.
    pub fn status_after_close(&self, now: Timestamp) -> HoldStatus {
        match self.status_at(now) {
            HoldStatus::Held => HoldStatus::Expired,
            ended => ended,
        }
    }

    /// The deadline of a hold made at `now`: `hold_seconds` later, never past the close.
    pub fn deadline(now: Timestamp, hold_seconds: u32, schedule: &Schedule) -> Timestamp {
        let end = now + SignedDuration::from_secs(i64::from(hold_seconds));
        schedule.closes_at().map_or(end, |closes| end.min(closes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold(end: HoldEnd) -> Hold {
        Hold {
            draw_id: DrawId::parse("d").unwrap(),
            hold_id: HoldId::parse("h").unwrap(),
            payer_id: PayerId::parse("p").unwrap(),
            tickets: vec![3],
            chosen: true,
            fingerprint: String::new(),
            created_at: crate::time::from_epoch_millis(0).unwrap(),
            expires_at: crate::time::from_epoch_millis(1_000).unwrap(),
            end,
        }
    }

    #[test]
    fn a_hold_lives_until_its_deadline_unless_a_call_ended_it() {
        let at = |ms| crate::time::from_epoch_millis(ms).unwrap();
        assert_eq!(hold(HoldEnd::Open).status_at(at(999)), HoldStatus::Held);
        assert_eq!(
            hold(HoldEnd::Open).status_at(at(1_000)),
            HoldStatus::Expired
        );
        assert_eq!(
            hold(HoldEnd::Released).status_at(at(0)),
            HoldStatus::Released
        );
        let paid = HoldEnd::Converted(PaymentId::parse("p").unwrap());
        assert_eq!(hold(paid).status_at(at(5_000)), HoldStatus::Converted);
    }

    #[test]
    fn a_live_hold_reads_expired_once_the_close_reached_it_and_an_ended_one_as_it_ended() {
        let at = |ms| crate::time::from_epoch_millis(ms).unwrap();
        assert_eq!(
            hold(HoldEnd::Open).status_after_close(at(0)),
            HoldStatus::Expired
        );
        assert_eq!(
            hold(HoldEnd::Released).status_after_close(at(0)),
            HoldStatus::Released
        );
        let paid = HoldEnd::Converted(PaymentId::parse("p").unwrap());
        assert_eq!(hold(paid).status_after_close(at(0)), HoldStatus::Converted);
    }

    #[test]
    fn a_hold_never_outlives_the_sale() {
        let now = crate::time::from_epoch_millis(1_767_225_600_000).unwrap();
        let closes = now + SignedDuration::from_secs(60);
        let schedule = Schedule::new(None, Some(closes)).unwrap();
        assert_eq!(Hold::deadline(now, 600, &schedule), closes);
        assert_eq!(
            Hold::deadline(now, 30, &schedule),
            now + SignedDuration::from_secs(30)
        );
    }
}
