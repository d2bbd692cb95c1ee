//! The confinement flags of `tether run` and `tether mcp`
//! (`--confine MODE`, `--allow-write`, `--read-only`, `--deny`,
//! `--allow-net`), over tether's config (`[confine]`), into the one
//! [`Confine`] a session is created with.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use tether_confine::{Confine, ModeName};

/// The confinement flags.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ConfineArgs {
    /// Confine a session this creates: `workspace` (write only in the
    /// starting directory, or the `--allow-write` roots, and a temp
    /// directory; `.git` stays read-only), `read-only` (write only the temp
    /// directory) or `none`. Secrets (~/.ssh, ~/.aws, ~/.config/tether…)
    /// are hidden, and the network is off but for `--allow-net`. Default:
    /// the config's `[confine]`, else none.
    #[arg(long, value_name = "MODE", value_parser = ModeName::NAMES.to_vec())]
    pub confine: Option<String>,
    /// A writable root of `--confine workspace` (repeatable; default: the
    /// starting directory).
    #[arg(long = "allow-write", value_name = "DIR")]
    pub allow_write: Vec<PathBuf>,
    /// A path kept read-only inside the roots, besides `.git` (repeatable).
    #[arg(long = "read-only", value_name = "PATH")]
    pub read_only: Vec<PathBuf>,
    /// A path hidden from the session besides the default deny list
    /// (repeatable).
    #[arg(long, value_name = "PATH")]
    pub deny: Vec<PathBuf>,
    /// A host the confined session may reach, `HOST:PORT` (`*.example.com:443`,
    /// `HOST:*`), through the proxy tether runs for it (repeatable).
    #[arg(long = "allow-net", value_name = "HOST:PORT")]
    pub allow_net: Vec<String>,
}

impl ConfineArgs {
    fn details_given(&self) -> bool {
        !(self.allow_write.is_empty()
            && self.read_only.is_empty()
            && self.deny.is_empty()
            && self.allow_net.is_empty())
    }

    /// The confinement asked: the flags, over the config's `[confine]`;
    /// `None` when neither names one.
    pub fn resolve(&self, config: Option<&Confine>) -> Result<Option<Confine>> {
        let mode = match &self.confine {
            Some(name) => match ModeName::parse(name) {
                Some(m) => Some(m),
                None => bail!(
                    "--confine {name}: use one of {}",
                    ModeName::NAMES.join(", ")
                ),
            },
            None => None,
        };
        let mut c = match (mode, config) {
            (Some(mode), Some(base)) => Confine {
                mode,
                ..base.clone()
            },
            (Some(mode), None) => Confine {
                mode,
                ..Confine::default()
            },
            (None, Some(base)) => base.clone(),
            (None, None) if self.details_given() => bail!(
                "--allow-write, --read-only, --deny and --allow-net shape a confinement: add --confine workspace (or read-only)"
            ),
            (None, None) => return Ok(None),
        };
        if c.is_none() && self.details_given() {
            bail!(
                "--allow-write, --read-only, --deny and --allow-net shape a confinement, and --confine none has none"
            );
        }
        if !self.allow_write.is_empty() && c.mode != ModeName::Workspace {
            bail!("--allow-write names a root of --confine workspace");
        }
        c.roots.extend(absolute(&self.allow_write)?);
        c.read_only.extend(absolute(&self.read_only)?);
        c.deny.extend(absolute(&self.deny)?);
        for h in &self.allow_net {
            check_host_port(h)?;
        }
        c.allow_net.extend(self.allow_net.iter().cloned());
        Ok(Some(c))
    }
}

/// The config's `[confine]`, from tether's config file.
pub fn from_config() -> Result<Option<Confine>> {
    let path = tether_cluster::config::default_path();
    let config = tether_cluster::config::Config::load(&path, false)?;
    if let Some(c) = &config.confine {
        for h in &c.allow_net {
            check_host_port(h)?;
        }
    }
    Ok(config.confine)
}

/// Paths made absolute against this directory (a path given on the
/// command line is the caller's).
fn absolute(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let here = std::env::current_dir()?;
    Ok(paths
        .iter()
        .map(|p| {
            if p.is_absolute() {
                p.clone()
            } else {
                here.join(p)
            }
        })
        .map(|p| clean(&p))
        .collect())
}

/// `p` without `.` components (`..` is kept: it is resolved by the kernel).
fn clean(p: &Path) -> PathBuf {
    p.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// `HOST:PORT`, the port a number or `*`.
pub fn check_host_port(h: &str) -> Result<()> {
    match tether_confine::HostPort::parse(h) {
        Some(_) => Ok(()),
        None => bail!(
            "{h:?} is not HOST:PORT: name a host (or *.domain) and a port (or *), e.g. pypi.org:443"
        ),
    }
}

/// The confinement an agent's call asks for (`mode`, or the server's),
/// never looser than the server's `floor`.
pub fn for_agent(mode: Option<&str>, floor: &Confine) -> Result<Option<Confine>> {
    let Some(name) = mode else {
        return Ok((!floor.is_none()).then(|| floor.clone()));
    };
    let Some(mode) = ModeName::parse(name) else {
        bail!(
            "confine {name:?}: use one of {}",
            ModeName::NAMES.join(", ")
        );
    };
    let asked = Confine {
        mode,
        ..Confine::default()
    }
    .within(floor);
    let asked = Confine {
        allow_net: floor.allow_net.clone(),
        unix_sockets: floor.unix_sockets.clone(),
        ..asked
    };
    if let Some(why) = asked.looser_than(floor) {
        bail!(
            "confine {name:?} would loosen this server's confinement ({why}); only the person who started the server can change it, with tether mcp --confine or tether's config"
        );
    }
    Ok((!asked.is_none()).then_some(asked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_may_tighten_its_servers_confinement_but_never_loosen_it() {
        let floor = Confine {
            mode: ModeName::Workspace,
            roots: vec!["/w".into()],
            allow_net: vec!["pypi.org:443".into()],
            ..Confine::default()
        };
        // Nothing asked: the server's.
        assert_eq!(for_agent(None, &floor).unwrap(), Some(floor.clone()));
        let ro = for_agent(Some("read-only"), &floor).unwrap().unwrap();
        assert_eq!(ro.mode, ModeName::ReadOnly);
        assert_eq!(ro.allow_net, floor.allow_net);
        let e = for_agent(Some("none"), &floor).unwrap_err().to_string();
        assert!(e.contains("loosen"), "{e}");
        assert!(for_agent(Some("everything"), &floor).is_err());
        // A server without confinement: the agent may ask for one.
        let none = Confine::default();
        assert_eq!(for_agent(None, &none).unwrap(), None);
        let ws = for_agent(Some("workspace"), &none).unwrap().unwrap();
        assert_eq!(ws.mode, ModeName::Workspace);
    }

    #[test]
    fn detail_flags_without_a_mode_are_refused() {
        let a = ConfineArgs {
            deny: vec!["/x".into()],
            ..ConfineArgs::default()
        };
        assert!(a.resolve(None).is_err());
        let none = ConfineArgs {
            confine: Some("none".into()),
            allow_net: vec!["a:1".into()],
            ..ConfineArgs::default()
        };
        assert!(none.resolve(None).is_err());
        let bad = ConfineArgs {
            confine: Some("read-only".into()),
            allow_net: vec!["nohost".into()],
            ..ConfineArgs::default()
        };
        assert!(bad.resolve(None).is_err());
    }
}
