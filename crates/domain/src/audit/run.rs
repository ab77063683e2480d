//! One audit, entry by entry: counts, gaps and the hash chain folded as the entries come,
//! so that nothing but a few numbers and the last hash is kept between them.

use super::{AuditReport, Break, ChainCheck, CounterState, CreditedInvoice, Entry, Gap, GapCause};
use crate::chain::{GENESIS, Hash, from_hex, move_link, order_link, to_hex};

/// Where an audit stands after some entries: enough to go on with the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditState {
    /// The counter the next entry should start at.
    pub expected: u64,
    pub orders: u64,
    pub voided: u64,
    pub links: u64,
    /// The stored hash of the last entry (the genesis before the first).
    pub previous: Hash,
    /// The counter of the first broken link, once found.
    pub broken_at: Option<u64>,
}

impl AuditState {
    /// As text, for a cursor: numbers in hexadecimal, then the hash, `.`-separated.
    pub fn encode(&self) -> String {
        let broken = self.broken_at.map_or(String::new(), |c| format!("{c:x}"));
        format!(
            "{:x}.{:x}.{:x}.{:x}.{}.{broken}",
            self.expected,
            self.orders,
            self.voided,
            self.links,
            to_hex(&self.previous)
        )
    }

    pub fn decode(text: &str) -> Option<Self> {
        let parts: Vec<&str> = text.split('.').collect();
        let [expected, orders, voided, links, previous, broken] = parts.as_slice() else {
            return None;
        };
        let number = |s: &str| {
            (!s.is_empty() && s.len() <= 16)
                .then(|| u64::from_str_radix(s, 16).ok())
                .flatten()
        };
        Some(Self {
            expected: number(expected)?,
            orders: number(orders)?,
            voided: number(voided)?,
            links: number(links)?,
            previous: from_hex(previous)?,
            broken_at: match *broken {
                "" => None,
                counter => Some(number(counter)?),
            },
        })
    }
}

/// An audit under way.
#[derive(Debug, Clone)]
pub struct AuditRun {
    gapless: bool,
    first: u64,
    state: AuditState,
    first_break: Option<Break>,
    gaps: Vec<Gap>,
    credited: Vec<CreditedInvoice>,
}

impl AuditRun {
    /// An audit from the period's first counter.
    pub fn start(gapless: bool, first: u64) -> Self {
        Self::resume(
            gapless,
            first,
            AuditState {
                expected: first,
                orders: 0,
                voided: 0,
                links: 0,
                previous: GENESIS,
                broken_at: None,
            },
        )
    }

    /// An audit that goes on from `state`; gaps and credit notes are reported from here.
    pub fn resume(gapless: bool, first: u64, state: AuditState) -> Self {
        let first_break = state.broken_at.map(|counter| Break::Entry {
            counter,
            order_number: None,
            source: None,
        });
        Self {
            gapless,
            first,
            state,
            first_break,
            gaps: Vec::new(),
            credited: Vec::new(),
        }
    }

    /// The counter the next entry should start at: numbers below it are accounted for.
    pub fn expected(&self) -> u64 {
        self.state.expected
    }

    /// What the report so far lists: its gaps, its credited invoices and their notes.
    pub fn listed(&self) -> usize {
        let notes: usize = self.credited.iter().map(|c| c.credit_notes.len()).sum();
        self.gaps.len() + self.credited.len() + notes
    }

    fn undeclared(&self) -> GapCause {
        if self.gapless {
            GapCause::Missing
        } else {
            GapCause::ReservedUnused
        }
    }

    /// Takes the next entry, in counter order.
    pub fn feed(&mut self, entry: &Entry) {
        let from = entry.counter();
        if from > self.state.expected {
            self.gaps.push(Gap {
                from: self.state.expected,
                to: from - 1,
                cause: self.undeclared(),
                declared: None,
            });
        }
        let (link, stored, order) = match entry {
            Entry::Order(order) => {
                // Counts come back from a cursor a client holds: they saturate, never wrap.
                self.state.orders = self.state.orders.saturating_add(1);
                self.state.voided = self
                    .state
                    .voided
                    .saturating_add(u64::from(order.void.is_some()));
                self.state.expected = self.state.expected.max(order.counter + 1);
                if !order.credit_notes.is_empty() {
                    self.credited.push(CreditedInvoice {
                        order_number: order.order_number.clone(),
                        source: order.source.clone(),
                        credit_notes: order.credit_notes.clone(),
                    });
                }
                (
                    order_link(&self.state.previous, order),
                    order.hash.as_deref(),
                    Some((order.order_number.clone(), order.source.clone())),
                )
            }
            Entry::Move(moved) => {
                self.gaps.push(Gap {
                    from: moved.from,
                    to: moved.to,
                    cause: GapCause::DeclaredMove,
                    declared: Some(moved.clone()),
                });
                self.state.expected = self.state.expected.max(moved.to + 1);
                (
                    move_link(&self.state.previous, moved),
                    moved.hash.as_deref(),
                    None,
                )
            }
        };
        if !self.gapless {
            return;
        }
        self.state.links = self.state.links.saturating_add(1);
        let stored = stored.and_then(from_hex);
        if stored != Some(link) && self.first_break.is_none() {
            self.state.broken_at = Some(from);
            let (order_number, source) = order.unzip();
            self.first_break = Some(Break::Entry {
                counter: from,
                order_number,
                source,
            });
        }
        // Go on from what is stored, so that one changed entry breaks one link.
        self.state.previous = stored.unwrap_or(link);
    }

    /// Stops here: the report of the entries taken so far (counts from the start), and
    /// where to go on.
    pub fn pause(self, counter: &CounterState) -> (AuditReport, AuditState) {
        let state = self.state.clone();
        (self.report(counter), state)
    }

    /// The whole period is taken: the numbers up to the counter's last are accounted for,
    /// and the chain must end at the counter's head.
    pub fn finish(mut self, counter: &CounterState) -> AuditReport {
        if let Some(last) = counter.last
            && last >= self.state.expected
        {
            self.gaps.push(Gap {
                from: self.state.expected,
                to: last,
                cause: self.undeclared(),
                declared: None,
            });
        }
        let recomputed = to_hex(&self.state.previous);
        let head_holds = match &counter.head {
            Some(head) => *head == recomputed,
            None => self.state.links == 0,
        };
        if self.gapless && !head_holds && self.first_break.is_none() {
            self.first_break = Some(Break::Head);
        }
        self.report(counter)
    }

    fn report(self, counter: &CounterState) -> AuditReport {
        let chain = self.gapless.then(|| ChainCheck {
            recomputed_head: to_hex(&self.state.previous),
            stored_head: counter.head.clone(),
            links: self.state.links,
            first_break: self.first_break,
        });
        AuditReport {
            first_counter: self.first,
            last_counter: counter.last,
            orders: self.state.orders,
            voided: self.state.voided,
            gaps: self.gaps,
            chain,
            credited: self.credited,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_a_forged_cursor_saturate() {
        let forged = AuditState {
            expected: 1,
            orders: u64::MAX,
            voided: u64::MAX,
            links: u64::MAX,
            previous: GENESIS,
            broken_at: None,
        };
        let mut run = AuditRun::resume(true, 1, forged);
        let order = crate::order::Order {
            order_number: "A1".into(),
            series: crate::ids::SeriesId::parse("A").unwrap(),
            source: crate::ids::SourceId::parse("s").unwrap(),
            external_ref: crate::ids::ExternalRef::parse("r").unwrap(),
            data: crate::order::OrderData::empty(),
            fingerprint: String::new(),
            period: "all".into(),
            counter: 1,
            created_at: jiff::Timestamp::now(),
            hash: None,
            void: None,
            corrects: None,
            credit_notes: Vec::new(),
        };
        run.feed(&Entry::Order(Box::new(order)));
        let report = run.finish(&CounterState::default());
        assert_eq!(report.orders, u64::MAX);
    }

    #[test]
    fn a_state_goes_through_its_text_and_bad_text_is_refused() {
        let state = AuditState {
            expected: 1_001,
            orders: 990,
            voided: 3,
            links: 995,
            previous: [7; 32],
            broken_at: Some(17),
        };
        assert_eq!(AuditState::decode(&state.encode()), Some(state.clone()));
        let intact = AuditState {
            broken_at: None,
            ..state
        };
        assert_eq!(AuditState::decode(&intact.encode()), Some(intact));
        for bad in ["", "1.2.3", "x.0.0.0.00.", "1.1.1.1.zz.", "1.1.1.1.1.1.1"] {
            assert_eq!(AuditState::decode(bad), None, "{bad}");
        }
    }
}
