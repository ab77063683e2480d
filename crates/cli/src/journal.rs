//! `tally journal verify`: the operator journal, straight from the table, entry by entry
//! in number order: no number missing or repeated, each entry linked to the one before,
//! the head naming the last. The first entry that does not check out is named.

use clap::{Args, Subcommand};
use tally::limits::JOURNAL_PAGE;
use tally::store::{Store, StoreConfig};
use tally_domain::journal::Verifier;

use crate::ledger::progress_bar;
use crate::outcome::{Failure, say};

#[derive(Args)]
pub struct JournalArgs {
    #[command(subcommand)]
    command: JournalCommand,
}

#[derive(Subcommand)]
enum JournalCommand {
    /// Check every entry: consecutive numbers from 1, an intact hash chain, the head.
    Verify,
}

/// A broken journal is a finding (exit 1); a table out of reach, a reason it could not
/// run (exit 2).
pub async fn run(args: JournalArgs, config: StoreConfig) -> Result<(), Failure> {
    match args.command {
        JournalCommand::Verify => verify(config).await,
    }
}

async fn verify(config: StoreConfig) -> Result<(), Failure> {
    let store = Store::connect(&config, None).await;
    let head = store.journal_head().await.map_err(|e| e.to_string())?;
    let bar = progress_bar(head.last);
    let mut verifier = Verifier::default();
    let page = u64::from(JOURNAL_PAGE.most);
    let mut from = 1;
    while from <= head.last {
        let to = head.last.min(from + page - 1);
        let entries = store
            .journal_entries(from, to)
            .await
            .map_err(|e| e.to_string())?;
        for entry in &entries {
            verifier.check(entry).map_err(|broken| found(&broken))?;
        }
        bar.set_position(to);
        from = to + 1;
    }
    bar.finish_and_clear();
    let last = verifier.finish(&head).map_err(|broken| found(&broken))?;
    say!("journal: {last} entries, numbered 1 to {last} without a gap, chain intact")?;
    Ok(())
}

fn found(broken: &tally_domain::journal::Broken) -> Failure {
    Failure::Found(format!(
        "journal broken at entry {}: {broken}",
        broken.number()
    ))
}
