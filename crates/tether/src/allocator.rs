//! How the C allocator keeps memory it has freed.
//!
//! glibc gives the top of a heap back to the kernel as soon as 128 KiB of
//! it is free. Bulk data through SSH (a forward, a copy, a command's output)
//! frees up to a channel's queue of 32 KiB packets at once, so the heap is
//! given back and taken again many times a second: each new page costs a
//! page fault and a clearing. Keeping up to 8 MiB freed at the top of each
//! heap cut the client CPU of a 1 GiB `-L` transfer by about a tenth
//! (docs/BENCHMARKS.md, port forwarding). Memory use by a quiet process is
//! unchanged; a busy one keeps at most that much more.

/// Freed bytes a heap keeps before its top is given back.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const KEEP_FREED: libc::c_int = 8 << 20;

/// Sets the trim threshold.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn keep_freed_memory() {
    // SAFETY: mallopt only sets a parameter of glibc's allocator; it is
    // called before any thread of ours starts, and any value is valid for
    // M_TRIM_THRESHOLD. Its result (1 when set) needs no handling: if it is
    // refused, the default policy stays, which is correct, only slower.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP_FREED);
    }
}

/// Elsewhere the allocator's own policy stands.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_freed_memory() {}
