//! `tether ping`: can each host be reached and logged into, as bssh's
//! `ping` tells it: a line per host as it answers (the time to connect and
//! authenticate, or why not), and the exit code 0 when every host let us
//! in, 1 when some did, 255 when none did. Nothing is run on the hosts.

use anyhow::Result;
use serde_json::json;
use tether_cluster::exec::{self, PingProgress, PingResult};

use crate::cli::{PingArgs, PingOutput};
use crate::exec_output::printable;
use crate::fleet_cmd::{self, Fleet, Interrupts};

/// The exit code of a ping: 0 all reached, 1 some, 255 none.
fn exit_code(results: &[PingResult]) -> i32 {
    let reached = results.iter().filter(|r| r.succeeded()).count();
    match reached {
        n if n == results.len() => 0,
        0 => 255,
        _ => 1,
    }
}

/// One host's line.
fn line(r: &PingResult) -> String {
    match &r.error {
        None => format!("{}: ok ({} ms)\n", printable(&r.host), r.connect_ms),
        Some(e) => format!(
            "{}: failed after {} ms: {}\n",
            printable(&r.host),
            r.connect_ms,
            printable(&e.to_string())
        ),
    }
}

pub fn run(args: PingArgs) -> Result<i32> {
    let fleet = Fleet::select(&args.fleet, args.cluster.as_deref(), args.hosts.as_deref())?;
    let resolve = fleet.resolver(&args.fleet, &args.ssh)?;
    let fanout = fleet.fanout(&args.fleet);
    let runtime = fleet_cmd::runtime()?;
    let (ctrl_c, stop) = Interrupts::listen(&runtime);
    let text = args.output == PingOutput::Text;
    let mut closed = false;
    let results = runtime.block_on(exec::ping(fleet.hosts, resolve, fanout, Some(stop), |p| {
        if let (PingProgress::Done(r), true, false) = (p, text, closed) {
            let mut out = std::io::stdout().lock();
            if std::io::Write::write_all(&mut out, line(r).as_bytes())
                .and_then(|()| std::io::Write::flush(&mut out))
                .is_err()
            {
                closed = true;
                ctrl_c.output_closed();
            }
        }
    }));
    if closed {
        return Ok(fleet_cmd::OUTPUT_CLOSED);
    }
    if !text {
        let mut out = std::io::stdout().lock();
        for r in &results {
            let v = json!({
                "host": r.host,
                "ok": r.succeeded(),
                "connect_ms": r.connect_ms,
                "error": r.error.as_ref().map(ToString::to_string),
                "error_kind": r.error.as_ref().map(|e| e.kind().as_str()),
                "host_failure": r.error.as_ref().and_then(|e| e.failure()).map(|f| f.as_str()),
            });
            std::io::Write::write_all(&mut out, format!("{v}\n").as_bytes())?;
        }
    }
    let reached = results.iter().filter(|r| r.succeeded()).count();
    eprintln!("tether ping: {reached} of {} hosts reached", results.len());
    Ok(exit_code(&results))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_is_bssh_s() {
        let ok = PingResult::default();
        let bad = PingResult {
            error: Some(exec::HostError::Resolve("no".into())),
            ..PingResult::default()
        };
        assert_eq!(exit_code(&[ok.clone(), ok.clone()]), 0);
        assert_eq!(exit_code(&[ok, bad.clone()]), 1);
        assert_eq!(exit_code(&[bad.clone(), bad]), 255);
    }
}
