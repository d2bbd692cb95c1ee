//! Syntax checks: unfinished input is refused before it runs
//! (`incomplete_input`), and an end mark that says the command file never
//! ran is told apart from a syntax error in it.

use super::Session;
use crate::error::ShellError;

impl Session {
    /// True when `code` is unfinished (and must not be run).
    pub(super) async fn incomplete(&mut self, code: &str) -> Result<bool, ShellError> {
        let dialect = std::sync::Arc::clone(&self.opts.dialect);
        if dialect.obviously_complete(code) {
            return Ok(false);
        }
        if dialect.is_incomplete(code, "", None) {
            return Ok(true);
        }
        let first = self.check_syntax(code).await?;
        let probe = match dialect.incomplete_probe() {
            Some(more) if !first.is_empty() => {
                Some(self.check_syntax(&format!("{code}{more}")).await?)
            }
            _ => None,
        };
        Ok(dialect.is_incomplete(code, &first, probe.as_deref()))
    }

    /// True when the dialect's syntax checker refuses `code`: a command
    /// whose first line does not parse ends without its file having set
    /// the flag that it ran, yet the shell did read it.
    pub(super) async fn syntax_error(&mut self, code: &str) -> Result<bool, ShellError> {
        Ok(!self.check_syntax(code).await?.trim().is_empty())
    }

    /// The error for an end mark that says the command file never started
    /// (the shell got a line it did not run as typed): the command did not
    /// run, whatever `$?` says.
    pub(super) fn not_delivered(&mut self) -> ShellError {
        self.shared.lock().command_over();
        let (output, _) = self.take_output();
        ShellError::NotDelivered {
            dialect: self.opts.dialect.name(),
            output: crate::text::clip_chars(&output, 2000),
        }
    }

    /// The dialect's syntax checker's messages for `code` (empty if none).
    pub(super) async fn check_syntax(&mut self, code: &str) -> Result<String, ShellError> {
        let dialect = std::sync::Arc::clone(&self.opts.dialect);
        let local_file = self.next_path("check", dialect.name());
        let shell_file = self.next_shell_path("check", dialect.name());
        let place = std::sync::Arc::clone(&self.place);
        place
            .check_syntax(crate::place::SyntaxCheck {
                code,
                dialect: dialect.as_ref(),
                local_file,
                shell_file,
            })
            .await
    }
}
