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

/// Inside every writable root (and under the home directory when a root
/// holds it): what would run code for the user outside the fence later
/// (start-up files, autostart and systemd units under `.config`, `~/.ssh`'s
/// `authorized_keys`, tether's own cache, `~/.local/bin` on the PATH), kept
/// read-only. `.git` (its hooks) is kept so by the fence itself.
pub const KEPT_IN_ROOTS: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config",
    ".ssh",
    ".cache/tether",
    ".local/bin",
];

/// Where crontabs are kept, read-only when a root holds them.
pub const CRONTABS: &[&str] = &["/var/spool/cron", "/var/spool/anacron"];

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

    /// The paths kept read-only inside `roots`: [`KEPT_IN_ROOTS`] under
    /// each root, and under the home directory and [`CRONTABS`] where a
    /// root holds them; only those that exist (what does not exist cannot
    /// be bound, which is why the home itself is never a root).
    pub fn kept(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let holds = |p: &Path| roots.iter().any(|r| p.starts_with(r));
        let mut bases: Vec<PathBuf> = roots.to_vec();
        bases.extend(self.home.iter().filter(|h| holds(h)).cloned());
        let mut out: Vec<PathBuf> = bases
            .iter()
            .flat_map(|b| KEPT_IN_ROOTS.iter().map(move |k| b.join(k)))
            .chain(CRONTABS.iter().map(PathBuf::from).filter(|c| holds(c)))
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .collect();
        out.sort();
        out.dedup();
        out
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
    fn start_up_files_inside_a_root_are_kept() {
        let dir = std::env::temp_dir().join(format!("tether-kept-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let home = dir.join("home");
        let root = home.join("project");
        std::fs::create_dir_all(root.join(".config")).unwrap();
        std::fs::write(root.join(".bashrc"), "").unwrap();
        std::fs::write(home.join(".profile"), "").unwrap();
        let d = Doors {
            home: Some(home.clone()),
            ..Doors::default()
        };
        // A project root: its own start-up files, not the home's.
        assert_eq!(
            d.kept(std::slice::from_ref(&root)),
            vec![root.join(".bashrc"), root.join(".config")]
        );
        // A root above the home: the home's too.
        let kept = d.kept(std::slice::from_ref(&dir));
        assert!(kept.contains(&home.join(".profile")), "{kept:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

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
