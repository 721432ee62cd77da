//! A request to stop an engine call early: `npgx mcp` sets it when the client cancels a tool call
//! (`notifications/cancelled`), and the engines that work file by file or pair by pair (dump-scan,
//! dump-compare) look at it before each one, so a cancelled call stops reading and frees its
//! cores instead of running to its end unheard. The CLI's calls are never cancelled (Ctrl-C ends
//! the process).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Whether the call that owns it was cancelled; the default is never.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Option<Arc<AtomicBool>>);

impl Cancel {
    /// Cancelled once `flag` is set.
    pub fn of(flag: Arc<AtomicBool>) -> Cancel {
        Cancel(Some(flag))
    }

    pub fn is_set(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// `Err` when cancelled: what an engine returns instead of a partial result.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.is_set() {
            anyhow::bail!("cancelled: the call stopped before its end, nothing is reported");
        }
        Ok(())
    }
}
