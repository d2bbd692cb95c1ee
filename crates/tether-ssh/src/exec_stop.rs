//! Stopping a command on an exec channel by a means the host honours, and
//! saying only what the host confirmed.
//!
//! A channel `signal` request is not enough: OpenSSH refuses it for a root
//! login ("session signalling requires privilege separation"), Dropbear and
//! older servers ignore it, and closing a channel without a PTY kills
//! nothing. So the command is sent TERM on its channel *and* a second
//! channel on the same connection ends the process tree of the
//! connection's session: every descendant of its `$PPID` (the server's
//! session process) other than itself, TERM then KILL. The command is
//! ended only when the host says so: the kill reports that nothing is
//! left, or, when the kill could not run, the command's channel reports an
//! exit status or closes. A kill that saw processes survive is not
//! overruled by a closed channel.
//!
//! The kill ends every process of the connection's session: a connection
//! whose commands may be stopped must carry only that command (`tether
//! exec` and `tether ssh` open one connection per host).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use russh::{ChannelMsg, ChannelReadHalf, ChannelWriteHalf, client::Msg};

use crate::connect::Connection;
use crate::exec::Event;

/// What is known of a command tether asked to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Halted {
    /// The host confirmed its end: the channel reported an exit status or
    /// closed, and the kill did not see processes survive.
    Confirmed,
    /// Asked to stop; the host confirmed nothing (a lost connection, a host
    /// without `ps`, a kill that left processes): it may still run.
    Unconfirmed,
}

/// The longest the stop waits for the host's confirmation.
const GRACE: Duration = Duration::from_secs(6);

/// How long after a kill that found nothing, with the command's channel
/// still silent, the kill looks again.
const AGAIN: Duration = Duration::from_millis(250);

/// Ends every descendant of the session process (`$PPID`) but this shell
/// and its own children: TERM, about a second for them to go, then KILL.
/// Both go to processes stopped first (STOP, then TERM and CONT, or KILL):
/// `kill` signals one process after another, and a shell whose child died
/// first would otherwise run its next command (`sleep 3; touch f`:
/// `touch`) before its own signal came. A stopped process runs nothing
/// more (a wait that returns, a fork that was under way: the stop comes
/// first), and KILL ends it stopped.
/// Prints `gone` and exits 0 when none is left; else names them, exits 1.
/// POSIX sh (read on stdin: the login shell may be csh or fish), `ps -e
/// -o pid= -o ppid=` and awk (zombies skipped where `ps` shows states).
const END_TREE: &str = r#"s=$PPID; me=$$
kids() { { ps -e -o pid= -o ppid= -o stat= 2>/dev/null || ps -e -o pid= -o ppid=; } | awk -v s="$s" -v me="$me" '
{ if ($3 ~ /^Z/) next; p[$1] = $2 }
END { for (c in p) { x = c; n = 0; while ((x in p) && n < 256) { if (x == me) break; if (p[x] == s) { printf "%s ", c; break }; x = p[x]; n++ } } }'; }
nap() { sleep 0.1 2>/dev/null || sleep 1; }
for sig in TERM KILL; do
  i=0
  while [ $i -lt 10 ]; do
    t=$(kids)
    if [ -z "$t" ]; then echo gone; exit 0; fi
    if [ $sig = TERM ]; then
      kill -STOP $t 2>/dev/null; kill -TERM $t 2>/dev/null; kill -CONT $t 2>/dev/null
    else
      kill -STOP $t 2>/dev/null; kill -KILL $t 2>/dev/null
    fi
    nap; i=$((i+1))
  done
done
t=$(kids)
if [ -z "$t" ]; then echo gone; exit 0; fi
echo "left $t"; exit 1
"#;

impl Connection {
    /// Stops the command on `read`/`write` (see the module's doc), passing
    /// on what it still prints, and says whether the host confirmed its
    /// end, with the exit code the channel reported meanwhile (the command
    /// ended by itself, before the stop reached it or despite it; `None`
    /// when it reported a signal or nothing). The channel is closed after.
    pub(crate) async fn halt<F: Future<Output = ()>>(
        &self,
        read: &mut ChannelReadHalf,
        write: &ChannelWriteHalf<Msg>,
        on_event: &mut impl FnMut(Event) -> F,
    ) -> (Halted, Option<u32>) {
        let _ = write.signal(russh::Sig::TERM).await;
        // Set once the command's channel has said how it ended (or went).
        let watched = AtomicBool::new(false);
        let watch = async {
            let mut code = None;
            let ended = loop {
                match read.wait().await {
                    Some(ChannelMsg::Data { data }) => on_event(Event::Stdout(data.to_vec())).await,
                    Some(ChannelMsg::ExtendedData { data, ext: 1 }) => {
                        on_event(Event::Stderr(data.to_vec())).await
                    }
                    Some(ChannelMsg::ExitStatus { exit_status }) => {
                        code = Some(exit_status);
                        break true;
                    }
                    Some(ChannelMsg::ExitSignal { .. } | ChannelMsg::Close) => break true,
                    Some(_) => {}
                    // The channel or the connection went without a word.
                    None => break false,
                }
            };
            watched.store(true, Ordering::Release);
            (ended, code)
        };
        // The kill again while the channel has not said the command ended:
        // under load the server may start the command's process after a
        // kill looked (a kill that found nothing then proves nothing).
        let kills = async {
            loop {
                let kill = self.end_session_tree().await;
                if kill != Kill::Gone || watched.load(Ordering::Acquire) {
                    return kill;
                }
                tokio::time::sleep(AGAIN).await;
                if watched.load(Ordering::Acquire) {
                    return kill;
                }
            }
        };
        let both = async { tokio::join!(watch, kills) };
        let ((ended, code), kill) = tokio::time::timeout(GRACE, both)
            .await
            .unwrap_or(((false, None), Kill::NoAnswer));
        let _ = write.close().await;
        // Ended only when the channel said so (its exit status, or its
        // close): a kill that found nothing is not enough alone. Processes
        // the kill saw survive outweigh a closed channel (a child that
        // closed its output may live on).
        let halted = match (kill, ended) {
            (Kill::Gone | Kill::NoAnswer, true) => Halted::Confirmed,
            (Kill::Left, _) | (_, false) => Halted::Unconfirmed,
        };
        (halted, code)
    }

    /// Runs [`END_TREE`] on a channel of its own: the login shell, whatever
    /// it speaks, replaced by `/bin/sh` (same process, so `$PPID` is still
    /// the session process), which reads the script on its stdin.
    async fn end_session_tree(&self) -> Kill {
        let Ok(channel) = self.session_channel(&[]).await else {
            return Kill::NoAnswer;
        };
        if channel.exec(true, "exec /bin/sh -s").await.is_err() {
            return Kill::NoAnswer;
        }
        let (mut read, write) = channel.split();
        if write.data(END_TREE.as_bytes()).await.is_err() || write.eof().await.is_err() {
            return Kill::NoAnswer;
        }
        let mut out = Vec::new();
        let mut code = None;
        while let Some(msg) = read.wait().await {
            match msg {
                ChannelMsg::Data { data } => out.extend_from_slice(&data),
                ChannelMsg::ExitStatus { exit_status } => code = Some(exit_status),
                ChannelMsg::Close => break,
                _ => {}
            }
        }
        match code {
            Some(0) if out.windows(4).any(|w| w == b"gone") => Kill::Gone,
            Some(1) if out.windows(5).any(|w| w == b"left ") => Kill::Left,
            _ => Kill::NoAnswer,
        }
    }
}

/// What the kill of the session's tree reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kill {
    /// Nothing is left.
    Gone,
    /// Processes outlived TERM and KILL.
    Left,
    /// It could not run or did not say (no second channel, no `ps`, a
    /// shell it does not speak, the connection gone).
    NoAnswer,
}
