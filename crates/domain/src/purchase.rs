//! Purchases and the tickets they hold.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use jiff::Timestamp;
use sha2::Sha256;

use super::hex;
use super::ids::{DrawId, PayerId, PaymentId};
use super::secret::DeploymentSecret;
use super::spend::Money;

pub(crate) type HmacSha256 = Hmac<Sha256>;

/// The per-draw key of purchase fingerprints. The fingerprint is stored with the purchase;
/// keyed, it reveals nothing of the body (a short `token` cannot be guessed from it) to
/// whoever reads the table. Derived from the deployment secret, which is not in the table,
/// and the draw id; never from the draw's own keys, which the table holds.
#[derive(Clone)]
pub struct FingerprintKey([u8; 32]);

impl FingerprintKey {
    pub fn derive(secret: &DeploymentSecret, draw_id: &DrawId) -> Self {
        Self(secret.derive("token-fingerprint", draw_id.as_str().as_bytes()))
    }

    /// A MAC keyed with this key, for a fingerprint.
    pub(crate) fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.0).expect("HMAC takes any key")
    }
}

impl fmt::Debug for FingerprintKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FingerprintKey(<secret>)")
    }
}

/// A payment's token: opaque to Tally and never stored, only its hash enters the
/// fingerprint. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct PaymentToken(pub String);

impl PaymentToken {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PaymentToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PaymentToken(<secret>)")
    }
}

/// How an entry came in: paid online, or free by post (a prize draw's free entry route,
/// with the same chance). Both take part in the draw alike and count toward caps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    #[default]
    Online,
    Postal,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Online => "online",
            Self::Postal => "postal",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "online" => Some(Self::Online),
            "postal" => Some(Self::Postal),
            _ => None,
        }
    }
}

/// The longest `payer_id` and `token`.
pub const MAX_FREE_TEXT_LEN: usize = 256;

/// A purchase as asked for. Its fingerprint tells a replay from a different request
/// that reuses the payment id.
#[derive(Debug, Clone)]
pub struct PurchaseRequest {
    pub draw_id: DrawId,
    pub payment_id: PaymentId,
    pub quantity: u32,
    /// The numbers the buyer chose, ascending and distinct (`quantity` of them); `None`
    /// for a lucky dip.
    pub numbers: Option<Vec<u64>>,
    pub payer_id: Option<PayerId>,
    pub token: Option<PaymentToken>,
    pub channel: Channel,
    /// The amount charged when it is not quantity × price (a bundle, a discount).
    pub amount: Option<u64>,
}

impl PurchaseRequest {
    /// HMAC-SHA-256 over the fields that make two requests "the same body", hex-encoded.
    pub fn fingerprint(&self, key: &FingerprintKey) -> String {
        let mut mac = HmacSha256::new_from_slice(&key.0).expect("HMAC takes any key");
        mac.update(&self.quantity.to_be_bytes());
        let payer = self.payer_id.as_ref().map(PayerId::as_str);
        for field in [payer, self.token.as_ref().map(PaymentToken::as_str)] {
            match field {
                Some(value) => {
                    mac.update(&[1]);
                    mac.update(&(value.len() as u64).to_be_bytes());
                    mac.update(value.as_bytes());
                }
                None => mac.update(&[0]),
            }
        }
        // After the fields a lucky dip has, so that its fingerprint stays what it was.
        if let Some(numbers) = &self.numbers {
            mac.update(b"numbers");
            for number in numbers {
                mac.update(&number.to_be_bytes());
            }
        }
        if self.channel != Channel::Online {
            mac.update(self.channel.as_str().as_bytes());
        }
        if let Some(amount) = self.amount {
            mac.update(b"amount");
            mac.update(&amount.to_be_bytes());
        }
        hex::encode(&mac.finalize().into_bytes())
    }
}

/// The longest reason of a void or a redraw.
pub const MAX_REASON_LEN: usize = 500;

/// A completed purchase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purchase {
    pub draw_id: DrawId,
    pub payment_id: PaymentId,
    pub quantity: u32,
    pub payer_id: Option<PayerId>,
    pub tickets: Vec<u64>,
    /// The buyer chose the numbers.
    pub chosen: bool,
    pub channel: Channel,
    /// What the buyer was charged, in minor units of the draw's currency: none in a draw
    /// without a price, 0 for a free entry.
    pub amount: Option<Money>,
    pub fingerprint: String,
    pub created_at: Timestamp,
    pub void: Option<Void>,
    /// A bundle whose commit is done but whose follow-up writes are not all done yet.
    pub unfinished: Option<Unfinished>,
}

/// What a purchase larger than one transaction (a bundle) still has to write after the
/// transaction that decided it: ticket items that did not fit its commit, or void marks
/// that did not fit its void. The deciding transaction holds every condition; the writes
/// after it cannot fail on another buyer, and a repeat (or the close) finishes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfinished {
    Tickets,
    /// Marks of a void before the draw's freeze, or after it (`late`).
    Void {
        late: bool,
    },
}

/// Whether a purchase (and each of its tickets) stands, or was voided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum PurchaseStatus {
    Active,
    Void,
}

impl PurchaseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Void => "void",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "active" => Some(Self::Active),
            "void" => Some(Self::Void),
            _ => None,
        }
    }
}

impl Purchase {
    pub fn status(&self) -> PurchaseStatus {
        match self.void {
            Some(_) => PurchaseStatus::Void,
            None => PurchaseStatus::Active,
        }
    }
}

/// Why and when a purchase and its tickets were voided (a refund, a chargeback).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Void {
    pub reason: String,
    pub at: Timestamp,
    /// Whether the draw's eligible list was frozen when the void committed, as the void's
    /// transaction checked: its tickets then stay in the list and may still be drawn, as
    /// flagged winners. `None` for a void stored without it.
    pub after_freeze: Option<bool>,
}

/// A sold ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub draw_id: DrawId,
    pub number: u64,
    pub payment_id: PaymentId,
    pub payer_id: Option<PayerId>,
    pub voided: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(quantity: u32, payer: Option<&str>, token: Option<&str>) -> PurchaseRequest {
        PurchaseRequest {
            draw_id: DrawId::parse("d").unwrap(),
            payment_id: PaymentId::parse("p").unwrap(),
            quantity,
            numbers: None,
            payer_id: payer.map(|p| PayerId::parse(p).unwrap()),
            token: token.map(|t| PaymentToken(t.to_owned())),
            channel: Channel::Online,
            amount: None,
        }
    }

    fn key(byte: u8) -> FingerprintKey {
        FingerprintKey::derive(
            &DeploymentSecret::new(&[byte; 32]).unwrap(),
            &DrawId::parse("d").unwrap(),
        )
    }

    #[test]
    fn fingerprint_is_stable_and_tells_bodies_apart() {
        let base = request(3, Some("ann"), None);
        assert_eq!(
            base.fingerprint(&key(1)),
            request(3, Some("ann"), None).fingerprint(&key(1))
        );
        for other in [
            request(4, Some("ann"), None),
            request(3, None, None),
            request(3, Some("ann"), Some("")),
            request(3, None, Some("ann")),
            PurchaseRequest {
                numbers: Some(vec![1, 2, 3]),
                ..request(3, Some("ann"), None)
            },
            PurchaseRequest {
                channel: Channel::Postal,
                ..request(3, Some("ann"), None)
            },
            PurchaseRequest {
                amount: Some(500),
                ..request(3, Some("ann"), None)
            },
        ] {
            assert_ne!(
                base.fingerprint(&key(1)),
                other.fingerprint(&key(1)),
                "{other:?}"
            );
        }
    }

    #[test]
    fn fingerprints_depend_on_the_deployment_secret_and_the_draw() {
        let request = request(1, None, Some("1234"));
        assert_ne!(request.fingerprint(&key(1)), request.fingerprint(&key(2)));
        let secret = DeploymentSecret::new(&[1; 32]).unwrap();
        let other_draw = FingerprintKey::derive(&secret, &DrawId::parse("e").unwrap());
        assert_ne!(
            request.fingerprint(&key(1)),
            request.fingerprint(&other_draw)
        );
        assert_eq!(format!("{:?}", key(1)), "FingerprintKey(<secret>)");
    }

    #[test]
    fn a_requests_debug_never_shows_its_token() {
        let shown = format!("{:?}", request(2, Some("ann"), Some("TOKENTOKEN")));
        assert!(!shown.contains("TOKENTOKEN"), "{shown}");
        assert!(shown.contains("PaymentToken(<secret>)"), "{shown}");
    }
}
