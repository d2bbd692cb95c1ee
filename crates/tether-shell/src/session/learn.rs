//! After an end mark, the session learns the secret-named values it
//! exported (the snapshot the shell writes, read as its place reads it),
//! so the command that set them gets its own result redacted with them.

use super::Session;

impl Session {
    /// After an end mark: learns the secret-named values the session has
    /// exported, and redacts the current command's output with them too.
    pub(super) async fn learn_exports(&mut self) {
        if let Some(redactor) = self.place.learn_exports(&self.redactor).await {
            self.shared.lock().learn(&redactor);
        }
    }
}
