//! The `npgx.dump-scan` document as it is read back (by the HTML report): one type per object
//! of docs/dump-scan.md, field for field what `report::dump_scan::json` writes from the scan's
//! records ([`super::records`]).
//!
//! The writer streams the records themselves (a million anomalies are never one JSON tree), and
//! some records cannot be read back as they are: an operator's layout and call counter are not
//! written, a group's magnitudes are written as f32 but must be read as the f64 a JSON reader
//! sees (the page draws them, and `npgx report saved.json` must draw the same plot as
//! `--html`), and the Opdebug and statistics texts are `&'static str`. So the read side has its
//! own types here, next to the records, and `tests::a_scan_reads_back_field_for_field` reads
//! real scans into them and writes them out again: a field the writer adds, drops or renames
//! fails that test instead of blanking the page.
//!
//! Fields added within a schema version are optional here (`#[serde(default)]`), so a document
//! of an older npgx of the same version still reads: `magnitudes`, `collectives` and `notes`
//! (version 1), `addresses`, `complete` and `next` (version 2), an anomaly's `fx`. Unknown fields are ignored.

use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::path::{Layout, Location};
use serde::Deserialize;

use super::address::Addresses;
use super::records::{Kind, Source};
use super::scan_report::Summary;
use crate::dump::records::FileProblem;

/// The fields of the `npgx.dump-scan` document (inside the envelope of docs/json.md).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ScanDocument {
    /// Whether every file found could be read. `None` in documents from before the field.
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub complete: Option<bool>,
    pub root: String,
    pub summary: Summary,
    pub groups: Vec<ScanGroup>,
    pub anomalies: Vec<ScanAnomaly>,
    pub opdebug: Vec<ScanOpdebug>,
    #[serde(default)]
    pub notes: Vec<ScanNote>,
    pub errors: Vec<FileProblem>,
    /// The command that plans the next dump (`null` when nothing was anomalous).
    pub next: Option<String>,
    /// The command that writes the repro of the anomaly's FX node (`null` when none was traced
    /// to one; absent in documents from before the field).
    #[serde(default)]
    pub next_repro: Option<String>,
    /// Every tensor (`--all`).
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub tensors: Option<Vec<ScanTensor>>,
}

/// One checked tensor (`tensors[]`; the tensor fields of an anomaly).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ScanTensor {
    /// The fields of its [`Location`] (written flattened, read one by one: serde's `flatten`
    /// buffers every object and made the worst case of docs/performance.md 28 % slower).
    pub world_size: Option<u32>,
    pub rank: Option<u32>,
    pub time: Option<String>,
    pub device: Option<u32>,
    pub model: Option<String>,
    pub model_id: Option<u64>,
    pub step: Option<u64>,
    pub op_name: String,
    pub op_type: Option<String>,
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub timestamp: Option<u64>,
    /// File path relative to the scan root, `/`-separated.
    pub path: String,
    pub io: Io,
    pub index: usize,
    pub dtype: String,
    pub format: Option<String>,
    pub shape: Vec<u64>,
    pub elements: u64,
    pub nan: u64,
    pub pos_inf: u64,
    pub neg_inf: u64,
    pub overflow: Option<u64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub source: Source,
    pub slot: Option<String>,
}

/// An anomalous tensor (`anomalies[]`, a group's `first_anomaly` and `first_born`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ScanAnomaly {
    pub group: usize,
    pub order: usize,
    pub kind: Kind,
    pub kinds: Vec<Kind>,
    #[serde(flatten)]
    pub tensor: ScanTensor,
    pub stack: Option<String>,
    /// `None` in documents from before the field (and when no graph text was read).
    #[serde(default)]
    pub fx: Option<crate::source_map::FxOrigin>,
}

/// One group of files (`groups[]`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ScanGroup {
    /// The fields of its [`Location`] (see [`ScanTensor`]).
    pub world_size: Option<u32>,
    pub rank: Option<u32>,
    pub time: Option<String>,
    pub device: Option<u32>,
    pub model: Option<String>,
    pub model_id: Option<u64>,
    pub step: Option<u64>,
    pub layout: Layout,
    pub rank_source: Option<String>,
    pub files: u64,
    pub tensors: u64,
    pub bytes: u64,
    pub anomalous_tensors: u64,
    pub first_anomaly: Option<ScanAnomaly>,
    pub first_born: Option<ScanAnomaly>,
    /// The largest finite magnitude per operator execution; `None` in documents from before
    /// the field.
    #[serde(default)]
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub magnitudes: Option<Vec<Option<f64>>>,
    #[serde(default)]
    pub collectives: Vec<usize>,
    /// `None` in documents before version 2.
    #[serde(default)]
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub addresses: Option<Addresses>,
}

impl ScanGroup {
    /// Where the group lies.
    pub fn location(&self) -> Location {
        Location {
            world_size: self.world_size,
            rank: self.rank,
            time: self.time.clone(),
            device: self.device,
            model: self.model.clone(),
            model_id: self.model_id,
            step: self.step,
        }
    }
}

/// A decoded Opdebug overflow payload (`opdebug[]`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ScanOpdebug {
    pub path: String,
    pub layout: String,
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub units: Vec<ScanOverflowUnit>,
    pub paired_dump: Option<String>,
}

/// One unit's overflow record of an Opdebug payload.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ScanOverflowUnit {
    pub unit: String,
    pub model_id: u64,
    pub stream_id: u64,
    pub task_id: u64,
    pub task_type: u64,
    pub context_id: Option<u64>,
    pub thread_id: Option<u64>,
    pub status: u64,
}

/// A statistic that overflowed by itself (`notes[]`, msprobe dumps).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ScanNote {
    pub group: usize,
    pub order: usize,
    pub op_name: String,
    pub io: Io,
    pub index: usize,
    pub slot: Option<String>,
    pub dtype: String,
    pub shape: Vec<u64>,
    pub statistics: Vec<String>,
    pub max: Option<f64>,
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub norm: Option<f64>,
    pub path: String,
    pub stack: Option<String>,
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde::Deserialize as _;

    use super::ScanDocument;
    use crate::scan::{scan, ScanOptions};

    /// A generated dump tree (`scripts/gen_dump_fixtures.py`, run by scripts/test.sh).
    fn fixture(rel: &str) -> PathBuf {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/fixtures/dump")
            .join(rel);
        assert!(
            p.exists(),
            "missing fixture {} — run scripts/test.sh, which generates the fixtures",
            p.display()
        );
        p
    }

    /// What `dump-scan --format json [--all]` prints for `root`.
    fn written(root: &Path, all: bool) -> serde_json::Value {
        let opts = ScanOptions {
            threads: Some(1),
            keep_all: all,
            ..Default::default()
        };
        let report = scan(root, &opts, &|_| {}).unwrap();
        let mut out = Vec::new();
        crate::report::dump_scan::json(&mut out, &report, all).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    #[ignore = "needs target/fixtures (scripts/test.sh writes them and runs it with --include-ignored)"]
    fn a_scan_reads_back_field_for_field() {
        // Anomalies with a birth and device addresses, msprobe notes and stacks, Opdebug
        // payloads, unreadable files, every tensor.
        for (rel, all) in [
            ("torchair/root", true),
            ("addr_overwrite/root", false),
            ("msprobe/root", true),
            ("opdebug/root", false),
            ("exception/root", false),
            ("bad/root", false),
            // The FX origins (gen_source_map_fixtures.py: graph texts beside the tree).
            ("../source_map/py_layers/dump", false),
        ] {
            let root = fixture(rel);
            let mut doc = written(&root, all);
            let read = ScanDocument::deserialize(&doc)
                .unwrap_or_else(|e| panic!("{rel}: does not read: {e}"));
            let back = serde_json::to_value(&read).unwrap();
            let m = doc.as_object_mut().unwrap();
            m.remove("schema");
            m.remove("schema_version");
            assert_eq!(back, doc, "{rel}: the read type lost or added a field");
        }
    }

    #[test]
    #[ignore = "needs target/fixtures (scripts/test.sh writes them and runs it with --include-ignored)"]
    fn unknown_fields_are_ignored_and_a_missing_one_is_named() {
        let mut doc = written(&fixture("addr_overwrite/root"), false);
        doc["groups"][0]["from_a_newer_npgx"] = serde_json::json!(1);
        assert!(ScanDocument::deserialize(&doc).is_ok());
        doc["groups"][0].as_object_mut().unwrap().remove("layout");
        let e = ScanDocument::deserialize(&doc).unwrap_err();
        assert!(e.to_string().contains("missing field `layout`"), "{e}");
    }
}
