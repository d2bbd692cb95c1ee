//! Starting a session's shell: its private directory, the setup files (here
//! or on the host), the terminal (a local PTY or the host's), and the wait
//! for the ready mark with one deadline.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_transport::Terminal;

use crate::dialect::SetupContext;
use crate::error::ShellError;
use crate::options::SessionOptions;
use crate::place::{Place, ShellStart};
use crate::private::PrivateDir;
use crate::pump::{self, Shared};

/// A new 0700 directory for one session, `sessions/ID` under `root`, else
/// under `$XDG_RUNTIME_DIR/tether`, else `/dev/shm/tether-UID` (memory: the
/// per-command files cost nothing there), else `/tmp/tether-UID`. The base
/// and `sessions` are created private or proven so (`private.rs`): a
/// symlink, someone else's or an open one is refused, never repaired.
pub(crate) fn private_dir(root: Option<&Path>) -> Result<PrivateDir, ShellError> {
    let base = match root {
        Some(r) => r.to_path_buf(),
        None => {
            let uid = crate::private::uid();
            match std::env::var_os("XDG_RUNTIME_DIR") {
                Some(d) => PathBuf::from(d).join("tether"),
                None if Path::new("/dev/shm").is_dir() => {
                    PathBuf::from(format!("/dev/shm/tether-{uid}"))
                }
                None => PathBuf::from(format!("/tmp/tether-{uid}")),
            }
        }
    };
    PrivateDir::root(&base)?
        .dir("sessions")?
        .new_dir(&crate::nonce::split().a)
}

/// For a local shell whose start directory cannot be entered: moves it to
/// `$HOME` (the session's, else `/`) and returns the notice saying so.
pub(crate) fn enterable_cwd(opts: &mut SessionOptions, place: &dyn Place) -> Option<String> {
    let cwd = opts.cwd.as_ref()?;
    let why = place.cannot_enter(cwd)?;
    let home = opts
        .base_env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v))
        .filter(|h| h.is_absolute() && place.cannot_enter(h).is_none())
        .unwrap_or_else(|| PathBuf::from("/"));
    let notice = format!(
        "tether: cannot enter the working directory {}: {why}; the session started in {} instead",
        cwd.display(),
        home.display()
    );
    opts.cwd = Some(home);
    Some(notice)
}

pub(crate) async fn launch(
    opts: &SessionOptions,
    place: &dyn Place,
    env: &[(String, String)],
    restore: Option<&Restore>,
) -> Result<(Arc<dyn Terminal>, Arc<Shared>), ShellError> {
    let dir = place.dir();
    let nonce = crate::nonce::split();
    let dialect = &opts.dialect;
    // A remote terminal's modes are set by the host's `stty` (echo as the
    // typed line says: a person's attach may have turned it on).
    let line_modes = shell_sets_modes(opts, place).then(|| opts.line_modes(false).stty_args(false));
    let setup = dialect.setup_script(&SetupContext {
        dir,
        nonce: &nonce,
        run_rc_files: opts.run_rc_files,
        // The snapshot may be missing (no command ended yet): the setup
        // tolerates that.
        restore_env: restore.map(|r| r.env.as_path()),
        restore_cwd: restore.and_then(|r| r.cwd.as_deref()),
        line_modes: line_modes.as_deref(),
        look_for_holders: place.shell_lists_holders(),
    });
    let setup_path = setup_path(opts, place);
    let mut files = vec![(setup_path.clone(), setup.into_bytes())];
    for (path, content) in dialect.extra_files(opts.run_rc_files, &setup_path) {
        files.push((path, content.into_bytes()));
    }
    place.write_files(files).await?;
    let (program, args) = dialect.argv(opts.run_rc_files, &setup_path);
    let wrapped = crate::fence::wrap(opts, place.host_name().is_some(), dir, program, args)?;
    let mut env = env.to_vec();
    let added = dialect.env(opts.run_rc_files, &setup_path, &env.clone());
    for (k, v) in added.into_iter().chain(wrapped.env) {
        env.retain(|(n, _)| *n != k);
        env.push((k, v));
    }
    let terminal = place
        .open_terminal(ShellStart {
            program: &wrapped.program,
            args: &wrapped.args,
            env: &env,
            cwd: opts.cwd.as_deref(),
            size: opts.size,
            output_processing: opts.output_processing,
            launcher: wrapped.launcher,
        })
        .await?;
    let output = terminal
        .take_output()
        .ok_or(tether_transport::TransportError::Closed)?;
    let shared = Shared::new(pump::initial_state(
        &nonce.joined(),
        opts.size.rows,
        opts.size.cols,
        !opts.output_processing,
    )?);
    tokio::spawn(pump::run(
        Arc::clone(&terminal),
        output,
        Arc::clone(&shared),
    ));
    if let Some(line) = dialect.load_setup(opts.run_rc_files, &setup_path) {
        terminal.write(line.into_bytes())?;
    }
    wait_ready(dialect.name(), &terminal, &shared, opts.start_timeout).await?;
    Ok((terminal, shared))
}

async fn wait_ready(
    dialect: &'static str,
    terminal: &Arc<dyn Terminal>,
    shared: &Arc<Shared>,
    timeout: Duration,
) -> Result<(), ShellError> {
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut exit = terminal.exit();
    loop {
        let changed = shared.changed();
        let (ready, eof) = {
            let st = shared.lock();
            (st.ready(), st.eof())
        };
        if ready {
            return Ok(());
        }
        // End of stream means every holder of the terminal is gone.
        let exited = exit.borrow().is_some() || eof;
        if exited || tokio::time::Instant::now() >= deadline {
            if exited {
                drain(shared).await;
            }
            let raw = shared.lock().raw_since(0).bytes;
            let _ = terminal.kill(Duration::from_millis(200));
            return Err(ShellError::StartFailed {
                dialect,
                waited_ms: started.elapsed().as_millis() as u64,
                exited,
                output: crate::text::project_all(&raw, 4000),
            });
        }
        tokio::select! {
            _ = changed => {}
            _ = exit.changed() => {}
            _ = tokio::time::sleep_until(deadline) => {}
        }
    }
}

/// After the shell exits, waits briefly for its last output to reach the
/// pump (the exit can be seen before the bytes written just before it).
pub(crate) async fn drain(shared: &Shared) {
    let deadline = Instant::now() + Duration::from_millis(300);
    while !shared.lock().eof() && Instant::now() < deadline {
        let changed = shared.changed();
        let _ = tokio::time::timeout(Duration::from_millis(20), changed).await;
    }
}

/// What a restarted shell restores.
pub(crate) struct Restore {
    /// The exported-variables snapshot.
    pub(crate) env: PathBuf,
    /// The directory to return to.
    pub(crate) cwd: Option<PathBuf>,
}

/// Where the session's shell reads its setup.
fn setup_path(opts: &SessionOptions, place: &dyn Place) -> PathBuf {
    place.dir().join(format!("setup.{}", opts.dialect.name()))
}

/// The argv the session's shell starts with, as the host's `/proc` shows
/// it: what tells it (reading in a builtin) from a shell that replaced it
/// (`exec bash`) where its terminal is not inspected here.
pub(crate) fn shell_argv(opts: &SessionOptions, place: &dyn Place) -> Vec<String> {
    let (program, args) = opts
        .dialect
        .argv(opts.run_rc_files, &setup_path(opts, place));
    std::iter::once(program).chain(args).collect()
}

/// True when the shell sets its terminal's line modes itself, before each
/// end mark: where the engine cannot (a remote terminal), and for a shell
/// whose line reader would undo the engine's setting.
pub(crate) fn shell_sets_modes(opts: &SessionOptions, place: &dyn Place) -> bool {
    place.shell_sets_modes() || opts.dialect.line_reader_keeps_modes()
}
