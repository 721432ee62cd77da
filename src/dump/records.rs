//! What listing a dump tree yields besides tensors: which operator execution a file belongs to
//! ([`OpRef`], grouped by [`GroupKey`]) and the one error entry for a file that could not be read
//! ([`FileProblem`]). The scan, compare and convert documents all carry these.

use npgx_parsers::dump::path::{Layout, Location};
use serde::{Deserialize, Serialize};

/// Which operator execution a tensor belongs to, and where it sits in execution order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpRef {
    #[serde(flatten)]
    pub location: Location,
    #[serde(skip)]
    pub layout: Layout,
    pub op_name: String,
    pub op_type: Option<String>,
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub timestamp: Option<u64>,
    /// Order key for files without a timestamp (the `.pt` call counter).
    #[serde(skip)]
    pub counter: Option<u64>,
    /// File path relative to the scan root, `/`-separated.
    pub path: String,
}

/// A group: where in the tree, and which layout matched.
pub type GroupKey = (Location, Layout);

/// A file (or part of one) that could not be read, converted or compared: the one error entry of
/// the `dump-scan`, `dump-convert` and `dump-compare` documents (`dump-compare` adds the side it
/// was found in). `path` is as the document shows it (relative to the scanned tree in
/// `dump-scan`); `offset` is the byte of the file where reading failed, when one is known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileProblem {
    pub path: String,
    pub message: String,
    pub offset: Option<u64>,
}

impl FileProblem {
    /// The same problem shown under another path (a listing's absolute path instead of the
    /// walk's relative one).
    pub fn at(self, path: String) -> FileProblem {
        FileProblem { path, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_moved_to_another_path_keeps_its_message_and_offset() {
        let p = FileProblem {
            path: "0/Add.a.1.1.1".into(),
            message: "truncated block".into(),
            offset: Some(395),
        };
        assert_eq!(
            p.at("/dumps/0/Add.a.1.1.1".into()),
            FileProblem {
                path: "/dumps/0/Add.a.1.1.1".into(),
                message: "truncated block".into(),
                offset: Some(395),
            }
        );
        assert_eq!(
            serde_json::to_string(&FileProblem {
                path: "p".into(),
                message: "m".into(),
                offset: None,
            })
            .expect("serialise"),
            r#"{"path":"p","message":"m","offset":null}"#
        );
    }
}
