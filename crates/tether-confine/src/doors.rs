//! What a fence hides by default: the deny list of a user's secrets, and
//! the doors out of the fence (sockets that would run something outside
//! it for the program). One list; the caller adds its own (tether's
//! daemon directory, the config's entries).

use std::path::{Path, PathBuf};

/// Under the home directory: secrets a confined program must not read.
pub const DENIED_IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".netrc",
    ".config/tether",
    ".config/gh",
    ".git-credentials",
];

/// Sockets outside any home that would act for the program outside the
/// fence (the Docker daemon runs containers as root).
pub const DOORS: &[&str] = &["/var/run/docker.sock", "/run/docker.sock"];

/// Where a user's secrets and doors are, as this process's environment
/// says.
#[derive(Clone, Debug, Default)]
pub struct Doors {
    /// The home directory.
    pub home: Option<PathBuf>,
    /// `$XDG_RUNTIME_DIR` (the user's sockets: the SSH agent's, D-Bus,
    /// tether's own where it is there).
    pub runtime_dir: Option<PathBuf>,
    /// `$SSH_AUTH_SOCK`.
    pub agent: Option<PathBuf>,
}

impl Doors {
    /// From this process's environment.
    pub fn from_env() -> Doors {
        let var = |k: &str| {
            std::env::var_os(k)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        Doors {
            home: var("HOME"),
            runtime_dir: var("XDG_RUNTIME_DIR"),
            agent: var("SSH_AUTH_SOCK"),
        }
    }

    /// Every path to hide: the deny list under the home directory, the
    /// runtime directory, the agent's socket and the system's doors.
    pub fn hidden(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        if let Some(home) = &self.home {
            out.extend(DENIED_IN_HOME.iter().map(|d| home.join(d)));
        }
        out.extend(self.runtime_dir.iter().cloned());
        out.extend(self.agent.iter().cloned());
        out.extend(DOORS.iter().map(PathBuf::from));
        out.retain(|p| p != Path::new("/"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secrets_and_the_doors_of_a_user() {
        let d = Doors {
            home: Some("/home/u".into()),
            runtime_dir: Some("/run/user/1000".into()),
            agent: Some("/tmp/ssh-x/agent.1".into()),
        };
        let hidden = d.hidden();
        for p in [
            "/home/u/.ssh",
            "/home/u/.aws",
            "/home/u/.config/tether",
            "/run/user/1000",
            "/tmp/ssh-x/agent.1",
            "/var/run/docker.sock",
        ] {
            assert!(hidden.contains(&PathBuf::from(p)), "{p}: {hidden:?}");
        }
        // Nothing known: only the system's doors.
        assert_eq!(Doors::default().hidden().len(), DOORS.len());
    }
}
