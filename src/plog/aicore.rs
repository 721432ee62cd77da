//! `npgx aicore`: every AI Core / AI Vector / FFTS+ / AI CPU device error in plogs, device logs
//! or captured console output, one record per failure, each field with the line that states it.

use std::borrow::Cow;
use std::path::PathBuf;

use npgx_parsers::aicore::evidence::classify;
use npgx_parsers::aicore::{line_message, AicoreAssembler, AicoreError};
use serde::{Deserialize, Serialize};

use super::reader::for_each_line;
use super::{LogInput, Warning};

/// One device error and the file its evidence lines are in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileAicoreError {
    pub file: PathBuf,
    #[serde(flatten)]
    pub error: AicoreError,
}

/// Version of the `npgx.aicore` document of an [`AicoreScan`].
pub const SCHEMA_VERSION: u32 = 1;

/// The fields of the `npgx.aicore` document (inside the envelope of docs/json.md): what
/// `--format json` writes and what the HTML report reads back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AicoreDocument<'a> {
    pub errors: Cow<'a, [FileAicoreError]>,
}

/// The result of `npgx aicore`.
#[derive(Debug, Clone, Serialize)]
pub struct AicoreScan {
    pub errors: Vec<FileAicoreError>,
    pub files: Vec<PathBuf>,
    pub warnings: Vec<Warning>,
}

impl AicoreScan {
    /// The scan's `npgx.aicore` document.
    pub fn document(&self) -> AicoreDocument<'_> {
        AicoreDocument {
            errors: Cow::Borrowed(&self.errors),
        }
    }
}

/// Words that every line carrying device-error evidence contains (case-insensitive check on
/// ASCII lower-case bytes); lines without any are skipped cheaply.
const HINTS: &[&[u8]] = &[
    b"fail",
    b"error",
    b"exception",
    b"retcode",
    b"aic_info",
    b"tilingkey",
    b"errcode",
    b"result",
    b"dump",
    b"coreid(",
    b"core list",
    b"extend info",
    b"core_id",
    b"pc_start",
    b"para_base",
    b"core_list",
    b"rtcode",
];

fn may_carry_evidence(line: &[u8], lower: &mut Vec<u8>) -> bool {
    lower.clear();
    lower.extend(line.iter().map(u8::to_ascii_lowercase));
    HINTS
        .iter()
        .any(|h| memchr::memmem::find(lower, h).is_some())
}

/// Phrases that only device-error lines contain.
fn looks_like_evidence(msg: &str) -> bool {
    let lower = msg.to_ascii_lowercase();
    [
        "fault kernel_name",
        "the error from device",
        "an error occurs on the device",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

/// Scans every input; unreadable files become warnings. Errors are grouped per file (evidence
/// never spans files) and returned in input order, then line order.
pub fn scan_aicore(inputs: &[LogInput], mut warnings: Vec<Warning>) -> AicoreScan {
    let mut errors = Vec::new();
    let mut files = Vec::new();
    for input in inputs {
        let mut asm = AicoreAssembler::default();
        let mut unparsed = 0usize;
        let mut scratch = Vec::new();
        let res = for_each_line(&input.path, |no, line| {
            if may_carry_evidence(line, &mut scratch) {
                let (pid, msg) = line_message(line);
                if looks_like_evidence(&msg) && classify(&msg).is_none() {
                    unparsed += 1;
                    if unparsed <= 20 {
                        warnings.push(Warning {
                            file: input.path.clone(),
                            line: Some(no),
                            message: "looks like a device-error line but could not be parsed"
                                .into(),
                        });
                    }
                }
                asm.push(no, pid, &msg);
            }
        });
        if let Err(e) = res {
            warnings.push(Warning::io(&input.path, &format!("cannot read: {e}")));
            continue;
        }
        files.push(input.path.clone());
        errors.extend(asm.finish().into_iter().map(|error| FileAicoreError {
            file: input.path.clone(),
            error,
        }));
    }
    AicoreScan {
        errors,
        files,
        warnings,
    }
}
