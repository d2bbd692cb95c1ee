//! `__tether_held`, which every POSIX-family end mark calls: on a terminal
//! the engine cannot inspect itself (a remote one), the shell names the
//! processes other than itself that hold its terminal open, from the
//! host's `/proc`, in the end mark's `held=` field (`PID:T:NAME`, space
//! separated; `T` is 1 when the process can type into the session by
//! TIOCSTI: the kernel allows it and the terminal is its controlling
//! terminal, or it has `CAP_SYS_ADMIN`).
//!
//! It runs only builtins (a glob of `/proc/*/fd/*`, `[ -ef ]`, `read`):
//! no fork. What it costs is a `stat` of every descriptor the login user
//! may read (every process's for root), measured on a host of 86
//! processes at about 0.5 ms per end mark for a user (dash/busybox 0.4,
//! bash 0.8) and 4 ms for root (bash). Locally the function does nothing
//! (the engine reads `/proc` itself) and the field is `-`.
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
BI read -r __tether_l 2>/dev/null </proc/$$/stat && {
  __tether_l=${__tether_l##*"$__tether_rp"}
  __tether_l=${__tether_l#* }; __tether_l=${__tether_l#* }; __tether_l=${__tether_l#* }; __tether_l=${__tether_l#* }
  __tether_tn=${__tether_l%% *}
}
__tether_sti=1
BI read -r __tether_l 2>/dev/null </proc/sys/dev/tty/legacy_tiocsti && [ "$__tether_l" = 0 ] && __tether_sti=0
__tether_held() {
  __tether_h=
  [ -n "$__tether_tty" ] && [ -d /proc/$$/fd ] || return 0
  __tether_hp=
  for __tether_f in /proc/[0-9]*/fd/[0-9]*; do
    __tether_p=${__tether_f#/proc/}
    __tether_p=${__tether_p%%/*}
    case " $$ $__tether_hp " in *" $__tether_p "*) continue ;; esac
    [ "$__tether_f" -ef "$__tether_tty" ] || continue
    __tether_hp="$__tether_hp $__tether_p"
    __tether_k=0
    if [ "$__tether_sti" = 1 ]; then
      __tether_l=
      BI read -r __tether_l 2>/dev/null <"/proc/$__tether_p/stat"
      __tether_l=${__tether_l##*"$__tether_rp"}
      __tether_l=${__tether_l#* }; __tether_l=${__tether_l#* }; __tether_l=${__tether_l#* }; __tether_l=${__tether_l#* }
      [ -n "$__tether_tn" ] && [ "${__tether_l%% *}" = "$__tether_tn" ] && __tether_k=1
      [ "$__tether_k" = 0 ] && while BI read -r __tether_a __tether_b; do
        case $__tether_a in
          CapEff:) case $__tether_b in
              *[!0-9a-fA-F]*|'') ;;
              *) [ $(( 0x$__tether_b >> 21 & 1 )) = 1 ] && __tether_k=1 ;;
            esac
            break ;;
        esac
      done 2>/dev/null <"/proc/$__tether_p/status"
    fi
    __tether_c=
    BI read -r __tether_c 2>/dev/null <"/proc/$__tether_p/comm"
    __tether_s=
    while [ -n "$__tether_c" ]; do
      __tether_t=${__tether_c#?}
      __tether_a=${__tether_c%"$__tether_t"}
      __tether_c=$__tether_t
      case $__tether_a in
        [ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+,@:=-]) ;;
        *) __tether_a='?' ;;
      esac
      __tether_s=$__tether_s$__tether_a
    done
    __tether_h="$__tether_h $__tether_p:$__tether_k:$__tether_s"
  done
  __tether_h=${__tether_h# }
  return 0
}
"#;
