//! The command-line grammar.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Persistent terminal sessions, local and over SSH, for people and programs.
#[derive(Debug, Parser)]
#[command(name = "tether", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command in a fresh persistent-shell session and print its
    /// output; exits with the command's exit code.
    Run(RunArgs),
    /// Serve persistent shell sessions to an agent over MCP (stdio).
    Mcp(McpArgs),
    /// Run a terminal byte stream (a recording, or stdin) through the
    /// terminal-protocol core.
    Term(TermArgs),
}

/// Arguments of `tether term`.
#[derive(Debug, Args)]
pub struct TermArgs {
    /// What to produce.
    #[arg(value_enum)]
    pub mode: TermMode,
    /// The byte stream to read; stdin when absent.
    pub file: Option<PathBuf>,
}

/// Outputs of `tether term`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum TermMode {
    /// The text a program would read (controls applied, sequences removed).
    Project,
    /// The stream with leaked terminal replies removed, byte for byte.
    Filter,
    /// The terminal modes left on at the end, and the bytes that undo them.
    Modes,
    /// Every sequence the scanner found, one per line.
    Scan,
}

/// Arguments of `tether run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The command text (any shell code; several lines are fine).
    pub command: String,
    /// The shell dialect.
    #[arg(long, value_enum, default_value_t = Shell::Bash)]
    pub shell: Shell,
    /// Skip the user's start-up files (`.bashrc` ...).
    #[arg(long)]
    pub norc: bool,
    /// Seconds before the command is interrupted.
    #[arg(long, default_value_t = 120.0)]
    pub timeout: f64,
    /// Characters of output to print at most (head and tail are kept).
    #[arg(long, default_value_t = 16_000)]
    pub output_limit: usize,
}

/// Shell dialects.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Shell {
    /// GNU bash.
    Bash,
    /// zsh.
    Zsh,
    /// The system POSIX sh.
    Sh,
    /// dash.
    Dash,
    /// busybox sh.
    Busybox,
    /// PowerShell 7.
    Pwsh,
}

/// Arguments of `tether mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Start sessions without the user's start-up files.
    #[arg(long)]
    pub norc: bool,
}
