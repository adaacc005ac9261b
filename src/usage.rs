//! The error convention of every subcommand (README "Using the CLI"): usage and
//! configuration errors exit 2, data and I/O errors exit 1. A usage error is a typed value in
//! the `anyhow` chain, so `main` decides the exit status by type, never by the message text,
//! and context added on the way up (`with_context`) keeps it.

use std::fmt;

/// A command line (or configuration) the tool cannot work with: a bad option value, a missing
/// or conflicting option. `main` exits 2 for it.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// `message` as a usage error (exit 2).
pub fn usage(message: impl fmt::Display) -> anyhow::Error {
    UsageError(message.to_string()).into()
}

/// `bail!` for usage errors: returns `Err(usage(format!(...)))`.
macro_rules! bail_usage {
    ($($arg:tt)*) => {
        return Err($crate::usage::usage(format!($($arg)*)))
    };
}
pub(crate) use bail_usage;

/// Whether `e` is a usage or configuration error (exit 2) rather than a data or I/O error
/// (exit 1): a [`UsageError`], a bad configuration string, or a timing configuration that
/// parses but cannot be used (a timing file that cannot be read is an I/O error).
pub fn is_usage(e: &anyhow::Error) -> bool {
    use streamtrace_sim::timing::ConfigError as TimingError;
    e.chain().any(|c| {
        c.is::<UsageError>()
            || c.is::<streamtrace_model::ConfigError>()
            || c.downcast_ref::<TimingError>().is_some_and(|t| !matches!(t, TimingError::Read { .. }))
    })
}
