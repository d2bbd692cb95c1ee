//! The seccomp filter of a confined session (issue 36): what Landlock and
//! the mount namespace cannot close. Landlock does not control `connect()`
//! on a pathname Unix socket, and a socket outside the session's hidden
//! directories (a tmux server's under `/tmp/tmux-UID/`, another tether
//! daemon's, a D-Bus bus) would run a command outside the fence. Seccomp
//! cannot read the path a program connects to, so the filter refuses the
//! socket itself: `socket(AF_UNIX, …)` and `socket(AF_VSOCK, …)` fail with
//! `EACCES`. `socketpair(AF_UNIX)` stays allowed (a pair connected only to
//! itself reaches no one). `io_uring_setup` fails with `ENOSYS` (its
//! socket operation would bypass the filter; programs fall back to plain
//! calls), and so does every call of a foreign ABI (32-bit, x32), whose
//! numbers the filter does not check.
//!
//! With `unix_sockets` in the config, `socket(AF_UNIX)` passes: then
//! Landlock (ABI 9, `LANDLOCK_ACCESS_FS_RESOLVE_UNIX`) refuses a connect
//! to every pathname socket but those named, and scopes abstract ones
//! (`confine-exec` refuses the key on a kernel without it).
//!
//! `confine-exec` installs it after Landlock (so `no_new_privs` is set)
//! and after it started the network forwarder, which alone needs a Unix
//! socket: the proxy's, in the session's own directory.
//!
//! This file is one of the exceptions to the workspace's `unsafe` denial
//! (ARCHITECTURE.md): one `seccomp(2)` call with a filter built here.

/// The native ABI's `AUDIT_ARCH_*` value (`linux/audit.h`).
#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;

/// x32's syscall numbers have this bit set (x86_64 only; harmless
/// elsewhere, where no number is that large).
const X32_BIT: u32 = 0x4000_0000;

// Classic BPF, as seccomp reads it (`linux/filter.h`, `linux/seccomp.h`).
const LD_W_ABS: u16 = 0x20;
const JEQ: u16 = 0x15;
const JGE: u16 = 0x35;
const RET: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
/// The low 32 bits of the first argument (little-endian).
const ARG0: u32 = 16;

fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter's program (each jump counts the instructions it skips);
/// with `allow_unix`, `socket(AF_UNIX)` passes (Landlock then refuses
/// every pathname socket but those allowed).
fn program(allow_unix: bool) -> Vec<libc::sock_filter> {
    let socket = libc::SYS_socket as u32;
    let uring = libc::SYS_io_uring_setup as u32;
    let eacces = RET_ERRNO | libc::EACCES as u32;
    let enosys = RET_ERRNO | libc::ENOSYS as u32;
    vec![
        /* 0 */ op(LD_W_ABS, 0, 0, ARCH_AT),
        /* 1 */ op(JEQ, 1, 0, ARCH),
        /* 2 */ op(RET, 0, 0, enosys),
        /* 3 */ op(LD_W_ABS, 0, 0, NR),
        /* 4 */ op(JGE, 8, 0, X32_BIT), // -> 13
        /* 5 */ op(JEQ, 2, 0, socket), // -> 8
        /* 6 */ op(JEQ, 6, 0, uring), // -> 13
        /* 7 */ op(RET, 0, 0, RET_ALLOW),
        /* 8 */ op(LD_W_ABS, 0, 0, ARG0),
        /* 9 */ op(JEQ, 2, 0, libc::AF_VSOCK as u32), // -> 12
        /* 10 */
        op(JEQ, if allow_unix { 0 } else { 1 }, 0, libc::AF_UNIX as u32), // -> 11 or 12
        /* 11 */ op(RET, 0, 0, RET_ALLOW),
        /* 12 */ op(RET, 0, 0, eacces),
        /* 13 */ op(RET, 0, 0, enosys),
    ]
}

/// Installs the filter on every thread of this process (and so on all it
/// execs and forks from now on). `no_new_privs` must be set already.
/// `allow_unix` only when Landlock refuses pathname Unix sockets by path.
#[allow(unsafe_code)]
pub fn close_sockets(allow_unix: bool) -> std::io::Result<()> {
    let filter = program(allow_unix);
    let prog = libc::sock_fprog {
        len: filter.len() as libc::c_ushort,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: `prog` points at `filter`, which lives until the call
    // returns (the kernel copies the program); the call takes no other
    // pointer. A failure is returned, never ignored: nothing is run
    // without the filter.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_TSYNC,
            &prog as *const libc::sock_fprog,
        )
    };
    match rc {
        0 => Ok(()),
        -1 => Err(std::io::Error::last_os_error()),
        tid => Err(std::io::Error::other(format!(
            "thread {tid} could not take the seccomp filter"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program_on_a_return() {
        for allow_unix in [false, true] {
            let p = program(allow_unix);
            for (i, f) in p.iter().enumerate() {
                if f.code == JEQ || f.code == JGE {
                    for j in [f.jt, f.jf] {
                        let to = i + 1 + usize::from(j);
                        assert!(to < p.len(), "{i} jumps past the end");
                    }
                }
            }
            assert_eq!(p.last().map(|f| f.code), Some(RET));
            // vsock is refused (EACCES) either way; Unix only without
            // Landlock's refusal by path.
            assert_eq!(p[9].jt as usize + 10, 12);
            assert_eq!(p[12].k, RET_ERRNO | libc::EACCES as u32);
            let unix_to = 11 + usize::from(p[10].jt);
            assert_eq!(p[unix_to].k == RET_ALLOW, allow_unix);
        }
    }
}
