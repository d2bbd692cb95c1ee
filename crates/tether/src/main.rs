//! The `tether` binary: a thin command line over the library crates.

use anyhow::Result;
use clap::Parser;

mod cli;
mod mcp;
mod run_cmd;
mod term_cmd;

fn main() -> Result<()> {
    let cli = cli::Cli::parse();
    match cli.command {
        cli::Command::Run(args) => {
            let code = run_cmd::run(args)?;
            std::process::exit(code);
        }
        cli::Command::Term(args) => term_cmd::run(args),
        cli::Command::Mcp(args) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(mcp::serve(tether_shell::SessionOptions {
                run_rc_files: !args.norc,
                ..tether_shell::SessionOptions::default()
            }))
        }
    }
}
