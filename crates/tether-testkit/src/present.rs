//! What a real-shell test needs from the machine, each said with a printed
//! `SKIPPED` reason when missing: a program on PATH, root, a local user.

/// Whether `program` is on PATH; prints why a test skips when not.
pub fn installed(program: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()));
    if !found {
        eprintln!("SKIPPED: {program} is not installed (scripts/test installs it as root)");
    }
    found
}

/// Whether the tests run as root; prints why a test skips when not.
pub fn root() -> bool {
    let me = nix::unistd::getuid().is_root();
    if !me {
        eprintln!("SKIPPED: not root (sudo -i and su - need root without a password)");
    }
    me
}

/// Whether the local user `name` exists; prints why a test skips when not.
pub fn user_exists(name: &str) -> bool {
    let there = nix::unistd::User::from_name(name).ok().flatten().is_some();
    if !there {
        eprintln!("SKIPPED: no user {name} (scripts/test creates it as root)");
    }
    there
}
