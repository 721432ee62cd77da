use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `npgx dump-scan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Dump directory (or a single dump file) to scan.
    pub path: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("dump-scan of {} is being built", args.path.display())
}
