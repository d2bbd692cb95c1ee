//! The shell code of the dialect contract, per syntax: POSIX-family
//! (bash, zsh, dash, busybox) and fish. Each field says the same thing in
//! its dialect's words; the expected results are the same.

/// The snippets a contract test types, in one dialect's syntax.
pub struct Lang {
    /// A command that exits 3 without ending the shell.
    pub exit_3: &'static str,
    /// A command that exits 42 without ending the shell.
    pub exit_42: &'static str,
    /// Prints the last command's status.
    pub echo_status: &'static str,
    /// A pipeline whose stages exit 1, 0 and 3.
    pub pipeline: &'static str,
    /// Enters /tmp, exports `TETHER_T=persisted`, defines `f` printing
    /// `fn-` and its first argument.
    pub define_state: &'static str,
    /// Prints `line with 'single' and "double" and $HOME` (literally),
    /// then `ünïcødé ✓ a  b`, over several lines.
    pub hard_text: &'static str,
    /// Sets `x` to the text `{}` and prints its length.
    pub long_text: &'static str,
    /// Kills the last background job.
    pub kill_last_job: &'static str,
    /// Prompts `Name: `, reads `x` from the terminal, prints `got $x`.
    pub read_prompted: &'static str,
    /// Whether what is typed to a program is echoed (fish turns the
    /// terminal's echo on for its programs, and its `read` shows the
    /// line): then the output holds the typed line too.
    pub read_echoes: bool,
    /// Kills the shell itself with the signal named.
    pub kill_shell: &'static str,
    /// Unfinished input, which must not run.
    pub incomplete: &'static [&'static str],
    /// Exports `TETHER_SECRET_TOKEN=s3cr3t-value-123`, prints `fine`.
    pub export_secret: &'static str,
}

/// bash, zsh, dash and busybox sh.
pub const POSIX: Lang = Lang {
    exit_3: "(exit 3)",
    exit_42: "(exit 42)",
    echo_status: "echo $?",
    pipeline: "false | true | (exit 3)",
    define_state: "cd /tmp && export TETHER_T=persisted && f() { echo fn-$1; }",
    hard_text: "cat <<'EOF'\nline with 'single' and \"double\" and $HOME\nEOF\necho \"ünïcødé ✓\" 'a  b'",
    long_text: "x='{}'; echo ${#x}",
    kill_last_job: "kill $!",
    read_prompted: "printf 'Name: '; read x; echo \"got $x\"",
    read_echoes: false,
    kill_shell: "kill -SIG $$",
    incomplete: &[
        "echo 'unterminated",
        "if true; then echo x",
        "cat <<EOF\nno end",
        "echo continued \\",
        "f() {",
    ],
    export_secret: "TETHER_SECRET_TOKEN=s3cr3t-value-123; export TETHER_SECRET_TOKEN; echo fine",
};

/// fish 3.
pub const FISH: Lang = Lang {
    exit_3: "sh -c 'exit 3'",
    exit_42: "begin; sh -c 'exit 42'; end",
    echo_status: "echo $status",
    pipeline: "false | true | sh -c 'exit 3'",
    define_state: "cd /tmp && set -gx TETHER_T persisted && function f; echo fn-$argv[1]; end",
    hard_text: "printf '%s\\n' \\\n  \"line with 'single' and \\\"double\\\" and \\$HOME\"\necho \"ünïcødé ✓\" 'a  b'",
    long_text: "set x '{}'; string length -- $x",
    kill_last_job: "kill $last_pid",
    read_prompted: "read -P 'Name: ' x; echo \"got $x\"",
    read_echoes: true,
    kill_shell: "kill -SIG $fish_pid",
    incomplete: &[
        "echo 'unterminated",
        "if true; echo x",
        "echo \"open",
        "echo continued \\",
        "function f",
        "begin",
        "echo (count",
        "echo a |",
    ],
    export_secret: "set -gx TETHER_SECRET_TOKEN s3cr3t-value-123; echo fine",
};
