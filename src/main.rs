use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = npgx::cli::parse();
    npgx::cli::run(cli)
}
