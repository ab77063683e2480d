//! Purchases and the tickets they hold.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::ids::{DrawId, PaymentId};

/// The longest `payer_id` and `token`.
pub const MAX_FREE_TEXT_LEN: usize = 256;

/// A purchase as asked for. Its fingerprint tells a replay from a different request
/// that reuses the payment id.
#[derive(Debug, Clone)]
pub struct PurchaseRequest {
    pub draw_id: DrawId,
    pub payment_id: PaymentId,
    pub quantity: u32,
    pub payer_id: Option<String>,
    /// Opaque to Tally and never stored: only its hash enters the fingerprint.
    pub token: Option<String>,
}

impl PurchaseRequest {
    /// SHA-256 over the fields that make two requests "the same body", hex-encoded.
    pub fn fingerprint(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(self.quantity.to_be_bytes());
        for field in [&self.payer_id, &self.token] {
            match field {
                Some(value) => {
                    hasher.update([1]);
                    hasher.update((value.len() as u64).to_be_bytes());
                    hasher.update(value.as_bytes());
                }
                None => hasher.update([0]),
            }
        }
        hex(&hasher.finalize())
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A completed purchase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purchase {
    pub draw_id: DrawId,
    pub payment_id: PaymentId,
    pub quantity: u32,
    pub payer_id: Option<String>,
    pub tickets: Vec<u64>,
    pub fingerprint: String,
    pub created_at: DateTime<Utc>,
}

/// A sold ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub draw_id: DrawId,
    pub number: u64,
    pub payment_id: PaymentId,
    pub payer_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(quantity: u32, payer: Option<&str>, token: Option<&str>) -> PurchaseRequest {
        PurchaseRequest {
            draw_id: DrawId::parse("d").unwrap(),
            payment_id: PaymentId::parse("p").unwrap(),
            quantity,
            payer_id: payer.map(str::to_owned),
            token: token.map(str::to_owned),
        }
    }

    #[test]
    fn fingerprint_is_stable_and_tells_bodies_apart() {
        let base = request(3, Some("ann"), None);
        assert_eq!(
            base.fingerprint(),
            request(3, Some("ann"), None).fingerprint()
        );
        for other in [
            request(4, Some("ann"), None),
            request(3, None, None),
            request(3, Some("ann"), Some("")),
            request(3, None, Some("ann")),
        ] {
            assert_ne!(base.fingerprint(), other.fingerprint(), "{other:?}");
        }
    }
}
