//! `tally contract`: the integration contract as files, for `make openapi` to commit.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::outcome::say;

#[derive(Args)]
pub struct ContractArgs {
    /// Where the OpenAPI document goes.
    #[arg(long, default_value = "openapi.json")]
    openapi: PathBuf,
    /// The folder of the events' JSON Schemas, one `<event>.schema.json` each.
    #[arg(long, default_value = "docs/events")]
    events: PathBuf,
}

pub fn run(args: ContractArgs) -> Result<(), String> {
    write(&args.openapi, &tally::api::openapi_json())?;
    fs::create_dir_all(&args.events)
        .map_err(|e| format!("cannot create {}: {e}", args.events.display()))?;
    for schema in tally_domain::events::schemas() {
        write(&args.events.join(schema.file_name()), &schema.json)?;
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    say!("wrote {}", path.display())?;
    Ok(())
}
