use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = npgx::cli::Cli::parse();
    npgx::cli::run(cli)
}
