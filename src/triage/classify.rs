//! `npgx triage classify`: first causal error plus route for any captured output, without a
//! step tree (so without the step-based pre-classification).

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use super::evidence::{first_causal_error, CausalError};
use super::route::{route_error, route_prose, Route, Routing};

/// The classification of one captured log.
#[derive(Debug, Clone, Serialize)]
pub struct Classification {
    pub file: PathBuf,
    pub route: Route,
    pub sub_skill: Option<&'static str>,
    pub rule: String,
    /// The keyword or phrase that fired.
    pub matched: Option<String>,
    /// The first causal error, when the log has one.
    pub first_causal_error: Option<CausalError>,
    /// For reports without an error (rules 3 and 4): the line that carries the symptom.
    pub evidence_line: Option<usize>,
    pub evidence_text: Option<String>,
    pub notes: Vec<String>,
}

impl Classification {
    /// The 1-based line quoted as evidence (the causal error's, or the symptom's).
    pub fn line(&self) -> Option<usize> {
        self.first_causal_error
            .as_ref()
            .map(|e| e.line)
            .or(self.evidence_line)
    }
}

/// Routes a first causal error found in `file` by the keyword rules.
pub fn classify_causal(file: &Path, err: CausalError) -> Classification {
    let Routing {
        route,
        rule,
        matched,
        notes,
    } = route_error(&err);
    Classification {
        file: file.to_path_buf(),
        route,
        sub_skill: route.sub_skill(),
        rule,
        matched,
        evidence_line: None,
        evidence_text: None,
        first_causal_error: Some(err),
        notes,
    }
}

/// Classifies log text (lossy UTF-8 already applied by the caller).
pub fn classify_text(file: &Path, text: &str) -> Classification {
    if let Some(err) = first_causal_error(text) {
        return classify_causal(file, err);
    }
    match route_prose(text) {
        Some((routing, line, evidence)) => Classification {
            file: file.to_path_buf(),
            route: routing.route,
            sub_skill: routing.route.sub_skill(),
            rule: routing.rule,
            matched: routing.matched,
            first_causal_error: None,
            evidence_line: Some(line),
            evidence_text: Some(evidence),
            notes: vec!["no error stack: routed by the report's wording (rules 3–4)".into()],
        },
        None => Classification {
            file: file.to_path_buf(),
            route: Route::Undetermined,
            sub_skill: None,
            rule: "none".into(),
            matched: None,
            first_causal_error: None,
            evidence_line: None,
            evidence_text: None,
            notes: vec!["no error, no accuracy or performance wording: nothing to route".into()],
        },
    }
}

/// Reads and classifies one file.
pub fn classify_file(path: &Path) -> anyhow::Result<Classification> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(classify_text(path, &String::from_utf8_lossy(&bytes)))
}
