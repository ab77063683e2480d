//! A file a command writes whole or not at all. `tally export --out` and `export-draw`
//! write beside their target under a temporary name, and rename it over the target only
//! once every row is written: a run stopped by an error (DynamoDB out of reach half way)
//! leaves the target as it was, never a partial file that looks complete. The temporary
//! file is removed when the run fails; like any file `tempfile` makes, only its owner may
//! read it.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

pub struct OutputFile {
    target: PathBuf,
    temporary: BufWriter<NamedTempFile>,
}

impl OutputFile {
    /// A temporary file in `target`'s folder, so that the rename stays on one file system.
    pub fn create(target: &Path) -> Result<Self, String> {
        let folder = match target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let temporary = tempfile::Builder::new()
            .prefix(".tally-")
            .suffix(".partial")
            .tempfile_in(folder)
            .map_err(|e| format!("{}: {e}", target.display()))?;
        Ok(Self {
            target: target.to_owned(),
            temporary: BufWriter::new(temporary),
        })
    }

    /// Puts the complete file in place of the target.
    pub fn commit(self) -> Result<(), String> {
        let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", self.target.display());
        let file = self.temporary.into_inner().map_err(|e| failed(e.error()))?;
        file.as_file().sync_all().map_err(|e| failed(&e))?;
        file.persist(&self.target).map_err(|e| failed(&e.error))?;
        Ok(())
    }
}

impl Write for OutputFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.temporary.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temporary.flush()
    }
}
