//! After an end mark, the session learns the secret-named values it
//! exported (the snapshot the shell writes), so the command that set them
//! gets its own result redacted with them.

use super::Session;

impl Session {
    /// After an end mark: learns the secret-named values the session has
    /// exported, and redacts the current command's output with them too
    /// (the command that set them gets its result redacted).
    pub(super) async fn learn_exports(&mut self) {
        let path = self.shell_dir.join("env");
        // A host's file costs a round trip: read only after a command that
        // could have changed a secret.
        if !self.place.reads_are_cheap() && !self.redactor.take_read_remote() {
            return;
        }
        let learned = match self.local_files.as_mut() {
            Some(files) => files.read_env().and_then(|s| self.redactor.learn(s)),
            None => {
                let snapshot = self.place.read_file(&path).await;
                let Some(snapshot) = snapshot else { return };
                self.redactor.learn(&snapshot)
            }
        };
        if let Some(redactor) = learned {
            self.shared.lock().learn(&redactor);
        }
    }
}
