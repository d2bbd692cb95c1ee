//! The `tether` binary: a thin command line over the library crates.

use anyhow::Result;
use clap::Parser;

mod cli;
mod term_cmd;

fn main() -> Result<()> {
    let cli = cli::Cli::parse();
    match cli.command {
        cli::Command::Term(args) => term_cmd::run(args),
    }
}
