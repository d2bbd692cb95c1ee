//! `__tether_held`, which every POSIX-family end mark calls: on a terminal
//! the engine cannot inspect itself (a remote one), the shell names the
//! processes other than itself that hold its terminal open, from the
//! host's `/proc`, in the end mark's `held=` field (`PID:T:NAME`, space
//! separated; `T` is 1 when the process can type into the session by
//! TIOCSTI: the kernel allows it and the terminal is its controlling
//! terminal, or it has `CAP_SYS_ADMIN`).
//!
//! It runs only builtins (`read`, globs, `[ -ef ]`): no fork. It lists
//! `/proc` and, for each process younger than the shell (a pid above `$$`
//! while the host's pids have not wrapped since the shell started, as
//! `/proc/loadavg`'s last pid tells at each look; every process after a
//! wrap), compares each descriptor the login user may read with the
//! terminal. A process older than the shell did not inherit the terminal
//! from a command; one that opened it by name is beyond the trust boundary
//! anyway (README). A wrap missed between two looks (a command that forks
//! the whole pid range) can only hide a holder, never invent one.
//! Measured (`tether run -s S -- true` 200 times against real sshd as a
//! user, ~85 processes, a loaded 2-core host): the shell's CPU grew by
//! 0.45 ms a command for dash and 1.3 ms for bash; a look alone costs 1–3 ms
//! with every shell as root or a user there, 8–12 ms as root after a wrap
//! (every process's descriptors). Locally the function does nothing (the
//! engine reads `/proc` itself) and the field is `-`.
//!
//! Set up once per shell: the terminal's name (`tty`, the one fork), the
//! shell's controlling terminal number (`/proc/$$/stat` field 7) and
//! whether the kernel allows TIOCSTI (`/proc/sys/dev/tty/legacy_tiocsti`
//! missing or not 0).

/// The function, looking when `look` (a remote terminal).
/// `builtin` bypasses functions (`builtin` in bash and zsh, `command` in
/// POSIX sh).
pub(super) fn held_function(look: bool, builtin: &str) -> String {
    if !look {
        return "__tether_held() { :; }\n".to_owned();
    }
    HELD.replace("BI ", &format!("{builtin} "))
}

const HELD: &str = r#"__tether_tty=$(command tty 2>/dev/null) || __tether_tty=
__tether_rp=') '
__tether_tn=
BI read -r __tether_hl 2>/dev/null </proc/$$/stat && {
  __tether_hl=${__tether_hl##*"$__tether_rp"}
  __tether_hl=${__tether_hl#* }; __tether_hl=${__tether_hl#* }; __tether_hl=${__tether_hl#* }; __tether_hl=${__tether_hl#* }
  __tether_tn=${__tether_hl%% *}
}
__tether_sti=1
BI read -r __tether_hl 2>/dev/null </proc/sys/dev/tty/legacy_tiocsti && [ "$__tether_hl" = 0 ] && __tether_sti=0
__tether_hlast=0 __tether_hw=
__tether_held() {
  __tether_h=
  [ -n "$__tether_tty" ] && [ -d /proc/$$/fd ] || return 0
  [ -n "${ZSH_VERSION-}" ] && setopt localoptions nullglob
  __tether_hb=
  BI read -r __tether_ha __tether_ha __tether_ha __tether_ha __tether_hb 2>/dev/null </proc/loadavg
  case $__tether_hb in
    ''|*[!0-9]*) __tether_hw=1 ;;
    *) [ "$__tether_hb" -lt "$__tether_hlast" ] && __tether_hw=1
       __tether_hlast=$__tether_hb ;;
  esac
  for __tether_hd in /proc/[0-9]*; do
    __tether_hq=${__tether_hd#/proc/}
    [ -z "$__tether_hw" ] && [ "$__tether_hq" -le "$$" ] && continue
    [ "$__tether_hq" = "$$" ] && continue
    __tether_hf=
    for __tether_hf in "$__tether_hd"/fd/[0-9]*; do
      [ "$__tether_hf" -ef "$__tether_tty" ] && break
      __tether_hf=
    done
    [ -n "$__tether_hf" ] || continue
    __tether_hk=0
    if [ "$__tether_sti" = 1 ]; then
      __tether_hl=
      BI read -r __tether_hl 2>/dev/null <"$__tether_hd/stat"
      __tether_hl=${__tether_hl##*"$__tether_rp"}
      __tether_hl=${__tether_hl#* }; __tether_hl=${__tether_hl#* }; __tether_hl=${__tether_hl#* }; __tether_hl=${__tether_hl#* }
      [ -n "$__tether_tn" ] && [ "${__tether_hl%% *}" = "$__tether_tn" ] && __tether_hk=1
      # Read to the end, no `break`, and on descriptor 9, never the
      # shell's stdin: once (not reproduced since) a command's `read` after
      # an end mark got this file's next line, as if the loop's redirection
      # of stdin had not been undone.
      [ "$__tether_hk" = 0 ] && while BI read -r __tether_ha __tether_hb <&9; do
        case $__tether_ha in
          CapEff:) case $__tether_hb in
              *[!0-9a-fA-F]*|'') ;;
              *) [ $(( 0x$__tether_hb >> 21 & 1 )) = 1 ] && __tether_hk=1 ;;
            esac ;;
        esac
      done 2>/dev/null 9<"$__tether_hd/status"
    fi
    __tether_hc=
    BI read -r __tether_hc 2>/dev/null <"$__tether_hd/comm"
    __tether_hs=
    while [ -n "$__tether_hc" ]; do
      __tether_ht=${__tether_hc#?}
      __tether_ha=${__tether_hc%"$__tether_ht"}
      __tether_hc=$__tether_ht
      case $__tether_ha in
        [ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+,@:=-]) ;;
        *) __tether_ha='?' ;;
      esac
      __tether_hs=$__tether_hs$__tether_ha
    done
    __tether_h="$__tether_h $__tether_hq:$__tether_hk:$__tether_hs"
  done
  __tether_h=${__tether_h# }
  return 0
}
"#;
