//! Finding a kernel's `.o` / `.json` (and `.cce`) in `kernel_meta/` or an asys `ops/` folder.
//!
//! Names follow `plog-and-errors.md` §5: a device symbol `«binFileName»__kernel0` (TBE), an
//! AscendC name `«binFileName»_«tilingKey»`, either possibly with `_mix_aic` / `_mix_aiv`. The
//! file base name is the name without those suffixes; the tiling key is tried last, because TBE
//! file names end in `_1` too (`te_transdata_…_1.json`), so an exact file always wins.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use npgx_parsers::ge_graph::kernel_stem;
use serde_json::Value;

use super::case::KernelFacts;

/// Kernel JSON files larger than this are not read (real ones are kilobytes).
const MAX_JSON_LEN: u64 = 16 << 20;
/// How deep below a search root files are looked for.
const MAX_DEPTH: usize = 5;

/// `«base»_«digits»` → (`base`, tiling key).
pub fn split_tiling_key(name: &str) -> Option<(&str, u64)> {
    let (base, key) = name.rsplit_once('_')?;
    if base.is_empty() || key.is_empty() || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((base, key.parse().ok()?))
}

/// Kernel files by base name, with the roots they were found under.
#[derive(Debug, Default)]
pub struct KernelIndex {
    json: BTreeMap<String, PathBuf>,
    bin: BTreeMap<String, PathBuf>,
    cce: BTreeMap<String, PathBuf>,
    pub searched: Vec<PathBuf>,
}

impl KernelIndex {
    /// Indexes every `.json`, `.o` and `.cce` under the given roots (missing roots are skipped;
    /// symbolic links are not followed). The first file of a base name wins.
    pub fn build(roots: &[PathBuf]) -> KernelIndex {
        let mut idx = KernelIndex::default();
        for root in roots {
            if root.is_dir() {
                idx.searched.push(root.clone());
                idx.index_dir(root);
            }
        }
        idx
    }

    fn index_dir(&mut self, root: &Path) {
        for path in super::files_under(root, MAX_DEPTH) {
            let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
                continue;
            };
            let (map, stem) = if let Some(s) = name.strip_suffix(".json") {
                if s.ends_with("_loc") || s.ends_with("_compute") {
                    continue;
                }
                (&mut self.json, s)
            } else if let Some(s) = name.strip_suffix(".o") {
                (&mut self.bin, s)
            } else if let Some(s) = name.strip_suffix(".cce") {
                (&mut self.cce, s)
            } else {
                continue;
            };
            map.entry(stem.to_string()).or_insert(path);
        }
    }

    fn has(&self, stem: &str) -> bool {
        self.json.contains_key(stem) || self.bin.contains_key(stem)
    }

    /// Looks up the first name (in order) whose files exist. Returns the facts (with `None`
    /// paths when nothing was found) and problems worth telling the user.
    pub fn lookup(
        &self,
        names: &[&str],
        tiling_key_hint: Option<u64>,
    ) -> (KernelFacts, Vec<String>) {
        let searched = self
            .searched
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let mut found: Option<(&str, String, Option<u64>)> = None;
        'names: for &name in names {
            let stem = kernel_stem(name);
            if self.has(stem) {
                found = Some((name, stem.to_string(), tiling_key_hint));
                break 'names;
            }
            if let Some((base, key)) = split_tiling_key(stem) {
                if self.has(base) {
                    found = Some((name, base.to_string(), Some(key)));
                    break 'names;
                }
            }
        }
        let Some((name, base, tiling_key)) = found else {
            let first = names.first().copied().unwrap_or_default();
            let facts = KernelFacts {
                kernel_name: first.to_string(),
                tiling_key: tiling_key_hint,
                searched,
                ..KernelFacts::default()
            };
            return (facts, Vec::new());
        };
        let mut problems = Vec::new();
        let mut facts = KernelFacts {
            kernel_name: name.to_string(),
            bin_file_name: Some(base.clone()),
            tiling_key,
            json_path: self.json.get(&base).map(|p| p.display().to_string()),
            cce_path: self.cce.get(&base).map(|p| p.display().to_string()),
            searched,
            ..KernelFacts::default()
        };
        if let Some(json) = self.json.get(&base) {
            match read_kernel_json(json) {
                Ok(v) => {
                    facts.block_dim = v.get("blockDim").and_then(Value::as_i64);
                    facts.kernel_symbol = v
                        .get("kernelName")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    facts.core_type = v
                        .get("coreType")
                        .or_else(|| v.get("core_type"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    facts.magic = v.get("magic").and_then(Value::as_str).map(str::to_string);
                    // AscendC kernel JSONs list one entry per tiling key: `«bin»_«key»`.
                    if let (Some(list), Some(key)) =
                        (v.get("kernelList").and_then(Value::as_array), tiling_key)
                    {
                        let entry = format!("{base}_{key}");
                        let listed = list.iter().any(|k| {
                            k.get("kernelName").and_then(Value::as_str) == Some(entry.as_str())
                        });
                        if !listed {
                            problems.push(format!(
                                "{}: kernelList has no entry {entry:?}: the tiling key {key} was not compiled into this binary",
                                json.display()
                            ));
                        }
                    }
                    if let Some(b) = v.get("binFileName").and_then(Value::as_str) {
                        if b != base {
                            problems.push(format!(
                                "{}: binFileName is {b:?}, not the file's base name {base:?}",
                                json.display()
                            ));
                        }
                    }
                }
                Err(e) => problems.push(e),
            }
        } else {
            problems.push(format!(
                "kernel JSON {base}.json not found (the .o needs it beside it)"
            ));
        }
        match self.bin.get(&base) {
            Some(bin) => match check_elf(bin) {
                Ok(()) => facts.bin_path = Some(bin.display().to_string()),
                Err(e) => problems.push(e),
            },
            None => problems.push(format!("kernel binary {base}.o not found")),
        }
        (facts, problems)
    }
}

fn read_kernel_json(path: &Path) -> Result<Value, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if len > MAX_JSON_LEN {
        return Err(format!(
            "{}: {len} bytes, too large for a kernel JSON",
            path.display()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: not valid JSON ({e})", path.display()))
}

/// A kernel `.o` must be an ELF file; collections hold 1-byte placeholders.
fn check_elf(path: &Path) -> Result<(), String> {
    use std::io::Read;
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if n == 4 && head == *b"\x7fELF" {
        Ok(())
    } else {
        Err(format!(
            "{}: not an ELF object (a placeholder?), kernel binary unusable",
            path.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiling_keys() {
        assert_eq!(
            split_tiling_key("GatherV3_h_high_performance_10330"),
            Some(("GatherV3_h_high_performance", 10330))
        );
        assert_eq!(split_tiling_key("plain"), None);
        assert_eq!(split_tiling_key("_5"), None);
    }
}
