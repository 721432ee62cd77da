//! The rows of a bisect table that both the option search (`report::triage`) and the FX node
//! search (`report::nodes`) write: a run's result and first causal error cells, and the list of
//! failures that read as different from step 5's.

use std::fmt::Write as _;
use std::path::Path;

use crate::triage::bisect::{Difference, Verdict};
use crate::triage::compare::Closeness;

/// `p` relative to the triage tree's root, for the tables.
pub(super) fn rel<'a>(root: &'a Path, p: &'a Path) -> std::path::Display<'a> {
    p.strip_prefix(root).unwrap_or(p).display()
}

/// Below a table of bisect runs: for each run whose failure `changes`, both errors as they were
/// compared (volatile tokens replaced), so the reader sees what differs.
pub(super) fn differences_markdown<'a>(
    out: &mut String,
    root: &Path,
    runs: impl Iterator<Item = (&'a Path, Option<&'a Difference>)>,
) {
    let mut any = false;
    for (dir, d) in runs {
        let Some(d) = d else { continue };
        if !any {
            let _ = writeln!(
                out,
                "Failures read as different from step 5's, compared with addresses, process and thread ids, times and run paths replaced:\n"
            );
            any = true;
        }
        let run = if d.run.is_empty() {
            "no causal error".to_string()
        } else {
            format!("`{}`", d.run)
        };
        let _ = writeln!(
            out,
            "- `{}`: {run}\n  step 5: `{}`",
            rel(root, dir),
            d.step5
        );
    }
    if any {
        out.push('\n');
    }
}

/// The `result` and `first causal error` cells of a bisect run's row (option variant or node run).
pub(super) fn result_cells(
    verdict: Verdict,
    outputs: Option<&Closeness>,
    error: Option<&str>,
) -> (String, String) {
    let result = match outputs {
        Some(c) if !c.allclose => format!(
            "{} (max abs error {:.3e})",
            verdict.as_str(),
            c.max_abs_error
        ),
        _ => verdict.as_str().to_string(),
    };
    let error = error
        .map(|e| format!("`{}`", e.replace('|', "\\|")))
        .unwrap_or_else(|| "—".into());
    (result, error)
}
