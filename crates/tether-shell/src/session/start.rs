//! Starting the shell (within one deadline), restarting it after it exits
//! or is reset (cwd and exported variables restored), and ending it.

use std::sync::Arc;
use std::time::Duration;

use tether_transport::TermSize;

use super::Session;
use crate::defaults::session_env;
use crate::error::ShellError;
use crate::launch::{Restore, launch, private_dir};
use crate::options::SessionOptions;
use crate::place::Place;
use crate::tree::TREE_MARKER;

impl Session {
    /// Starts a shell and waits until it is ready.
    pub async fn start(opts: SessionOptions) -> Result<Session, ShellError> {
        Session::start_at(opts, None).await
    }

    /// [`Session::start`], at `given` instead of the place `opts` names
    /// (the unit tests' scripted place).
    pub(super) async fn start_at(
        mut opts: SessionOptions,
        given: Option<Arc<dyn Place>>,
    ) -> Result<Session, ShellError> {
        let resume = opts.resume.take();
        if let Some(cwd) = resume.as_ref().and_then(|r| r.cwd.clone()) {
            opts.cwd = Some(cwd);
        }
        // A workspace's default root is where the session starts, kept for
        // its restarts whatever the shell's cwd is then.
        if opts.confine.mode == tether_confine::ModeName::Workspace && opts.confine.roots.is_empty()
        {
            opts.confine.roots = crate::fence::roots(&opts.confine, &opts);
        }
        let fenced = crate::fence::Fenced::new(&opts.confine);
        let private = private_dir(opts.runtime_dir.as_deref())?;
        let dir = private.path().to_path_buf();
        let opened = match given {
            Some(place) => Ok(place),
            None => crate::place::open(opts.host.as_ref(), private).await,
        };
        let place = match opened {
            Ok(p) => p,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let mut notice = crate::launch::enterable_cwd(&mut opts, place.as_ref());
        if let Some(r) = &resume {
            notice = Some(match notice {
                Some(n) => format!("{}\n{n}", r.notice),
                None => r.notice.clone(),
            });
        }
        let env = shell_env(&opts, place.as_ref());
        // One matcher per session; each command's capture takes a fresh clone.
        let redactor = match crate::secrets::Secrets::new(secrets_of(&env, &opts.secrets)) {
            Ok(r) => r,
            Err(e) => {
                place.end_tree_later();
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        if let Some(old) = resume.as_ref().and_then(|r| r.remote_dir.as_deref()) {
            place.sweep(old).await;
        }
        let restore = match resume.as_ref().and_then(|r| r.env.as_deref()) {
            Some(snapshot) => {
                let path = place.dir().join("env");
                place
                    .write_files(vec![(path.clone(), without_marker(snapshot))])
                    .await?;
                Some(Restore {
                    env: path,
                    cwd: None,
                })
            }
            None => None,
        };
        let listening = match crate::fence::listen(&opts.confine, &dir, fenced.as_deref()) {
            Ok(p) => p,
            Err(e) => {
                place.end_tree_later();
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let (terminal, shared) = match launch(&opts, place.as_ref(), &env, restore.as_ref()).await {
            Ok(t) => t,
            Err(e) => {
                place.end_tree_later();
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let echo = place.echo();
        let live = tokio::sync::watch::Sender::new(crate::live::Live::new(
            &terminal,
            &shared,
            echo,
            redactor.clone(),
            fenced.clone(),
        ));
        let own_argv = own_argv(terminal.as_ref(), &opts, place.as_ref());
        Ok(Session {
            levels: Vec::new(),
            nest_change: None,
            told_not_armed: None,
            own_argv,
            fenced,
            _listening: listening,
            spills: Arc::new(crate::spill::Spills::new(opts.spill_cap)),
            live,
            pending: Arc::new(tokio::sync::watch::Sender::new(None)),
            follow: crate::follow::FollowBook::new(),
            probes: Default::default(),
            host_holders: Vec::new(),
            hook_holders: Default::default(),
            link_lost: None,
            place,
            tree_ended: false,
            cwd: opts.cwd.clone(),
            opts,
            dir,
            terminal,
            shared,
            redactor,
            last_status: 0,
            seq: 0,
            restarted: resume.is_some(),
            keep_spills: false,
            notice,
        })
    }

    /// Kills the shell and everything it started, and starts a fresh one in
    /// the same directory with the same exported variables.
    pub async fn restart(&mut self) -> Result<(), ShellError> {
        // The session's own dialect starts again.
        self.leave_levels(0);
        self.take_exit_cwd();
        self.place.end_tree(false).await;
        let _ = self.terminal.kill(Duration::from_millis(300));
        // The old terminal's end is seen before the new shell starts: its
        // drop would otherwise end the tree again, by the marker the new
        // shell carries too (a launcher's exit, bubblewrap's, is reaped a
        // moment after its tree is gone).
        let mut exit = self.terminal.exit();
        let _ = tokio::time::timeout(Duration::from_secs(1), exit.wait_for(Option::is_some)).await;
        // A person attached may have resized the terminal since the start.
        let (rows, cols) = self.shared.lock().size();
        self.opts.size = TermSize { rows, cols };
        let env = shell_env(&self.opts, self.place.as_ref());
        let restore = Restore {
            env: self.place.dir().join("env"),
            cwd: self.cwd.clone(),
        };
        let (terminal, shared) =
            launch(&self.opts, self.place.as_ref(), &env, Some(&restore)).await?;
        self.live.send_replace(crate::live::Live::new(
            &terminal,
            &shared,
            self.place.echo(),
            self.redactor.clone(),
            self.fenced.clone(),
        ));
        self.own_argv = own_argv(terminal.as_ref(), &self.opts, self.place.as_ref());
        self.terminal = terminal;
        self.shared = shared;
        self.last_status = 0;
        self.restarted = true;
        self.host_holders.clear();
        // (Kept until a fresh shell runs: a restart that fails is tried
        // again by the next call.)
        self.link_lost = None;
        Ok(())
    }

    /// Ends the shell and, for a remote shell, waits for its process tree
    /// to end and its directory on the host to be removed (dropping only
    /// starts that). The session is
    /// then dropped by the caller.
    pub async fn shut_down(&mut self) {
        if !self.tree_ended {
            self.tree_ended = true;
            self.place.end_tree(true).await;
        }
        let _ = self.terminal.kill(Duration::from_millis(300));
    }
}

/// The argv of the shell on `terminal` as it started: a local one's as
/// `/proc` says, a host's as it was started there.
fn own_argv(
    terminal: &dyn tether_transport::Terminal,
    opts: &SessionOptions,
    place: &dyn crate::place::Place,
) -> Option<Vec<String>> {
    if place.remote_dir().is_some() {
        return Some(crate::launch::shell_argv(opts, place));
    }
    let pid = terminal.inspect().ok()?.top?.pid;
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        raw.split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// The shell's environment: the place's base (the local environment here,
/// nothing sent to a host, whose login has its own), then the defaults,
/// then the overrides.
fn shell_env(opts: &SessionOptions, place: &dyn Place) -> Vec<(String, String)> {
    session_env(place.base_env(&opts.base_env), &opts.env_overrides)
}

/// An exports snapshot without the line that sets [`TREE_MARKER`] (a
/// continued session has its own).
fn without_marker(snapshot: &[u8]) -> Vec<u8> {
    let marker = format!("{TREE_MARKER}=");
    snapshot
        .split_inclusive(|b| *b == b'\n')
        .filter(|line| !line.windows(marker.len()).any(|w| w == marker.as_bytes()))
        .flatten()
        .copied()
        .collect()
}

fn secrets_of(env: &[(String, String)], extra: &[String]) -> Vec<String> {
    let mut s: Vec<String> = env
        .iter()
        .filter(|(k, v)| {
            tether_term::redact::is_secret_name(k)
                && v.len() >= tether_term::redact::MIN_ENV_SECRET_LEN
        })
        .map(|(_, v)| v.clone())
        .chain(extra.iter().filter(|s| !s.is_empty()).cloned())
        .collect();
    s.sort();
    s.dedup();
    s
}
