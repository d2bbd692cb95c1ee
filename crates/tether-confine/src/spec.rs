//! What a caller asks of a session's confinement ([`Confine`]), as it
//! travels on the daemon's protocol and is recorded with the session, and
//! the order of strictness that keeps a confined agent from loosening it.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A confinement mode, from the loosest to the strictest.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ModeName {
    /// No fence: the user's full rights.
    #[default]
    None,
    /// Write only in the roots (by default the session's starting
    /// directory) and the session's temp directory.
    Workspace,
    /// Write nothing but the session's temp directory.
    ReadOnly,
}

impl ModeName {
    /// Every mode, as written (one list: the CLI, the config and the MCP
    /// schema read it).
    pub const NAMES: &[&str] = &["none", "workspace", "read-only"];

    /// The mode named `name`.
    pub fn parse(name: &str) -> Option<ModeName> {
        match name {
            "none" => Some(ModeName::None),
            "workspace" => Some(ModeName::Workspace),
            "read-only" | "readonly" => Some(ModeName::ReadOnly),
            _ => None,
        }
    }

    /// The mode as written.
    pub fn name(self) -> &'static str {
        match self {
            ModeName::None => "none",
            ModeName::Workspace => "workspace",
            ModeName::ReadOnly => "read-only",
        }
    }
}

/// A session's confinement as asked, and as results report it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Confine {
    /// The mode.
    pub mode: ModeName,
    /// The writable roots of `workspace` (empty: the session's starting
    /// directory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<PathBuf>,
    /// Paths kept read-only inside the roots, besides each root's `.git`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<PathBuf>,
    /// Paths hidden besides the default deny list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<PathBuf>,
    /// The hosts the session may reach, `host:port` (`*.example.com:443`,
    /// `host:*`), through the proxy tether runs for it; empty: no network.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_net: Vec<String>,
    /// Pathname Unix sockets the session may connect to (an SSH agent's,
    /// a D-Bus bus), each by its absolute path; every other Unix socket
    /// stays out of reach. Needs Landlock ABI 9 (its refusal of the other
    /// sockets by path): a kernel without it refuses the session, even
    /// with `best_effort`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unix_sockets: Vec<PathBuf>,
    /// The Landlock ABI whose features the fence needs (default 6: the
    /// scopes of signals and abstract sockets); a kernel without them is
    /// an error, unless `best_effort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u8>,
    /// Accept less of Landlock than asked where the kernel lacks it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub best_effort: bool,
}

impl Confine {
    /// True when this asks for no fence.
    pub fn is_none(&self) -> bool {
        self.mode == ModeName::None
    }

    /// Why `self` would be looser than `floor` (a caller who may only
    /// tighten, such as a confined agent's MCP call), `None` when it is at
    /// least as strict.
    pub fn looser_than(&self, floor: &Confine) -> Option<String> {
        if floor.is_none() {
            return None;
        }
        if self.mode < floor.mode {
            return Some(format!(
                "mode {} is looser than {}",
                self.mode.name(),
                floor.mode.name()
            ));
        }
        if self.mode == ModeName::Workspace {
            let allowed = |r: &PathBuf| floor.roots.iter().any(|f| r.starts_with(f));
            if let Some(r) = self.roots.iter().find(|r| !allowed(r)) {
                return Some(format!("root {} is outside the allowed roots", r.display()));
            }
        }
        for (list, what, mine) in [
            (&floor.read_only, "read-only path", &self.read_only),
            (&floor.deny, "denied path", &self.deny),
        ] {
            if let Some(p) = list.iter().find(|p| !mine.contains(p)) {
                return Some(format!("{what} {} is dropped", p.display()));
            }
        }
        if let Some(h) = self.allow_net.iter().find(|h| !floor.allow_net.contains(h)) {
            return Some(format!("network {h} is not in the allowed list"));
        }
        let not_allowed = |p: &&PathBuf| !floor.unix_sockets.contains(p);
        if let Some(p) = self.unix_sockets.iter().find(not_allowed) {
            return Some(format!(
                "Unix socket {} is not in the allowed list",
                p.display()
            ));
        }
        None
    }

    /// `self`, with what `floor` keeps that it left out: the floor's read-only
    /// paths, denied paths and roots (when it names none).
    pub fn within(mut self, floor: &Confine) -> Confine {
        if self.mode == ModeName::Workspace && self.roots.is_empty() {
            self.roots = floor.roots.clone();
        }
        for p in &floor.read_only {
            if !self.read_only.contains(p) {
                self.read_only.push(p.clone());
            }
        }
        for p in &floor.deny {
            if !self.deny.contains(p) {
                self.deny.push(p.clone());
            }
        }
        self
    }
}

/// A confined session's confinement, as every result and listing says it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Confinement {
    /// The mode: `workspace` or `read-only`.
    pub mode: ModeName,
    /// The writable roots (`workspace`), besides the session's temp
    /// directory.
    pub roots: Vec<PathBuf>,
    /// The network: `off`, or `allowlist` (through tether's proxy).
    pub network: String,
    /// The hosts the allowlist lets it reach (`host:port`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_net: Vec<String>,
    /// The Unix sockets it may connect to, by path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unix_sockets: Vec<PathBuf>,
    /// What the fence refused since the last result, where tether can know
    /// it (the proxy's refusals: `connect example.com:443`). A refused
    /// write or direct connection is the program's own error instead.
    #[serde(default)]
    pub denied: Vec<String>,
    /// What the kernel enforced for the session's shell, as the fence
    /// found it when the shell started (`null` until a shell reported).
    #[serde(default)]
    pub enforced: Option<crate::Enforced>,
}

impl Confine {
    /// The confinement as a result reports it (`None` for no fence), with
    /// `denied` since the last result and what the kernel enforced.
    pub fn report(
        &self,
        denied: Vec<String>,
        enforced: Option<crate::Enforced>,
    ) -> Option<Confinement> {
        (!self.is_none()).then(|| Confinement {
            mode: self.mode,
            roots: if self.mode == ModeName::Workspace {
                self.roots.clone()
            } else {
                Vec::new()
            },
            network: if self.allow_net.is_empty() {
                "off".to_owned()
            } else {
                "allowlist".to_owned()
            },
            allow_net: self.allow_net.clone(),
            unix_sockets: self.unix_sockets.clone(),
            denied,
            enforced,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(m: ModeName) -> Confine {
        Confine {
            mode: m,
            ..Confine::default()
        }
    }

    #[test]
    fn modes_are_ordered_from_loose_to_strict_and_parse_as_written() {
        for name in ModeName::NAMES {
            assert_eq!(ModeName::parse(name).map(ModeName::name), Some(*name));
        }
        assert!(ModeName::None < ModeName::Workspace);
        assert!(ModeName::Workspace < ModeName::ReadOnly);
        assert_eq!(ModeName::parse("full"), None);
    }

    #[test]
    fn a_caller_under_a_floor_may_tighten_but_never_loosen() {
        let floor = Confine {
            mode: ModeName::Workspace,
            roots: vec!["/w".into()],
            deny: vec!["/secret".into()],
            allow_net: vec!["pypi.org:443".into()],
            ..Confine::default()
        };
        assert!(mode(ModeName::None).looser_than(&floor).is_some());
        let ro = mode(ModeName::ReadOnly).within(&floor);
        assert_eq!(ro.looser_than(&floor), None);
        let outside = Confine {
            roots: vec!["/elsewhere".into()],
            ..mode(ModeName::Workspace)
        }
        .within(&floor);
        assert!(outside.looser_than(&floor).unwrap().contains("/elsewhere"));
        let inside = Confine {
            roots: vec!["/w/sub".into()],
            ..mode(ModeName::Workspace)
        }
        .within(&floor);
        assert_eq!(inside.looser_than(&floor), None);
        let net = Confine {
            allow_net: vec!["evil.example:443".into()],
            ..mode(ModeName::ReadOnly)
        }
        .within(&floor);
        assert!(net.looser_than(&floor).unwrap().contains("evil.example"));
        let agent = Confine {
            unix_sockets: vec!["/run/agent.sock".into()],
            ..mode(ModeName::ReadOnly)
        }
        .within(&floor);
        assert!(agent.looser_than(&floor).unwrap().contains("agent.sock"));
        // No floor: anything goes.
        assert_eq!(mode(ModeName::None).looser_than(&Confine::default()), None);
    }
}
