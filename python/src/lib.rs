//! `npgx._npgx`: the extension module under `import npgx` (python/npgx/__init__.py wraps it).
//!
//! Every function takes the tool's arguments as the JSON object the Python side built from its
//! keyword arguments (the names of the command's options, [`npgx::tools`]) and calls the same
//! engine and the same renderer as the command, with the GIL released. The work runs on a thread
//! of its own while the calling thread waits and looks at Python's signals, so Ctrl-C in a
//! notebook cancels a long scan (the engines poll [`npgx::cancel::Cancel`]) and raises
//! `KeyboardInterrupt`. Errors become exceptions ([`to_py`]); a panic never crosses into Python
//! (it is an `npgx.Error` naming itself a bug).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use pyo3::exceptions::{PyException, PyFileNotFoundError, PyPermissionError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::{Map, Value};

pyo3::create_exception!(
    npgx,
    Error,
    PyException,
    "An npgx analysis could not run. The message is the one the npgx command prints; `path` \
     names the file where one is known, `line` the line of a JSON file that does not parse."
);

/// How often the waiting thread looks at Python's signals.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// A Python exception for `err`: `FileNotFoundError` / `PermissionError` for a path that could not
/// be read for those reasons, else `npgx.Error` with the CLI's message (`{err:#}`) and, where the
/// chain knows them, `path` and `line` (`None` otherwise).
fn to_py(py: Python<'_>, err: anyhow::Error) -> PyErr {
    let message = format!("{err:#}");
    let read = npgx::error::read_failure(&err);
    if let Some((path, Some(kind))) = read {
        let path = path.display().to_string();
        match kind {
            std::io::ErrorKind::NotFound => {
                return PyFileNotFoundError::new_err((libc::ENOENT, message, path));
            }
            std::io::ErrorKind::PermissionDenied => {
                return PyPermissionError::new_err((libc::EACCES, message, path));
            }
            _ => {}
        }
    }
    let path = read.map(|(p, _)| p.display().to_string());
    let line = err
        .chain()
        .find_map(|e| e.downcast_ref::<serde_json::Error>())
        .map(serde_json::Error::line);
    error(py, message, path, line)
}

/// An `npgx.Error` with its attributes set.
fn error(py: Python<'_>, message: String, path: Option<String>, line: Option<usize>) -> PyErr {
    let err = Error::new_err(message);
    let value = err.value(py);
    let set = value
        .setattr("path", path)
        .and_then(|()| value.setattr("line", line));
    match set {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// Runs `work` on a thread of its own with the GIL released, cancelling it through `cancel` when
/// a signal handler raises (Ctrl-C: `KeyboardInterrupt`). A panic in `work` is an `npgx.Error`.
fn run<T: Send>(
    py: Python<'_>,
    cancel: &Arc<AtomicBool>,
    work: impl FnOnce() -> anyhow::Result<T> + Send,
) -> PyResult<T> {
    let outcome = std::thread::scope(|s| {
        let (tx, rx) = mpsc::sync_channel(1);
        s.spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            let _ = tx.send(result);
        });
        let mut rx = rx;
        loop {
            // The receiver goes into the released section and comes back (it is not Sync).
            let (got, back) = py.detach(move || (rx.recv_timeout(SIGNAL_POLL), rx));
            rx = back;
            match got {
                Ok(result) => return Ok(result),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(interrupted) = py.check_signals() {
                        // The engine stops at its next file or pair; the scope waits for it.
                        cancel.store(true, Ordering::Relaxed);
                        return Err(interrupted);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Ok(Err(Box::new("the worker thread ended without a result")
                        as Box<dyn std::any::Any + Send>));
                }
            }
        }
    })?;
    match outcome {
        Ok(result) => result.map_err(|e| to_py(py, e)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            Err(error(
                py,
                format!("internal error (a bug in npgx; please report it): {what}"),
                None,
                None,
            ))
        }
    }
}

/// The keyword arguments' JSON object.
fn arguments(json: &str) -> PyResult<Map<String, Value>> {
    match serde_json::from_str(json) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Error::new_err("the arguments must be a JSON object")),
        Err(e) => Err(Error::new_err(format!("the arguments are not JSON: {e}"))),
    }
}

/// The progress sink of a call from Python: no progress shown, cancelled by the flag.
struct Quiet(npgx::cancel::Cancel);

impl npgx::tools::Progress for Quiet {
    fn advance(&self, _: u64, _: Option<u64>) {}
    fn cancel(&self) -> npgx::cancel::Cancel {
        self.0.clone()
    }
}

/// Refuses a table in a module built without the `tables` feature (a lean wheel), in the
/// module's words rather than the command's (`--format parquet`).
fn tables_built() -> PyResult<()> {
    if cfg!(feature = "tables") {
        return Ok(());
    }
    Err(Error::new_err(
        "this npgx module was built without the `tables` feature (polars, a lean wheel): it has \
         the documents, not the tables",
    ))
}

/// A finished scan: its document and its table, rendered on demand.
#[pyclass(frozen, module = "npgx._npgx")]
struct Scan {
    report: npgx::scan::ScanReport,
    all: bool,
    /// Whether every tensor was kept (the table can be written).
    table: bool,
}

#[pymethods]
impl Scan {
    /// The document `npgx dump-scan --format json` prints, as JSON text.
    fn document(&self, py: Python<'_>) -> PyResult<String> {
        let cancel = Arc::new(AtomicBool::new(false));
        run(py, &cancel, || {
            Ok(serde_json::to_string(&npgx::report::dump_scan::value(
                &self.report,
                self.all,
            )?)?)
        })
    }

    /// The shard `npgx dump-scan --format parquet` writes (every tensor), as Parquet bytes.
    fn tensors_parquet<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        tables_built()?;
        if !self.table {
            return Err(Error::new_err("this scan kept no table of every tensor"));
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let bytes = run(py, &cancel, || {
            let mut out = Vec::new();
            npgx::report::dump_scan::parquet(&self.report, &mut out)?;
            Ok(out)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }
}

/// A finished comparison: its document and its table of pairs.
#[pyclass(frozen, module = "npgx._npgx")]
struct Compare {
    report: npgx::compare::CompareReport,
}

#[pymethods]
impl Compare {
    /// The document `npgx dump-compare --format json` prints, as JSON text.
    fn document(&self, py: Python<'_>) -> PyResult<String> {
        let cancel = Arc::new(AtomicBool::new(false));
        run(py, &cancel, || {
            Ok(serde_json::to_string(&npgx::report::dump_compare::value(
                &self.report,
            )?)?)
        })
    }

    /// The table `npgx dump-compare --format parquet` writes (one row per pair), as Parquet bytes.
    fn pairs_parquet<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        tables_built()?;
        let cancel = Arc::new(AtomicBool::new(false));
        let bytes = run(py, &cancel, || {
            let mut out = Vec::new();
            npgx::report::dump_compare::parquet(&self.report, &mut out)?;
            Ok(out)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }
}

/// `npgx dump-scan`: the scan the arguments (the `dump_scan` tool's) ask for; with `table`, every
/// tensor is kept for the table (the shard's rows), as `--format parquet` does.
#[pyfunction]
#[pyo3(signature = (args, table = true))]
fn dump_scan(py: Python<'_>, args: &str, table: bool) -> PyResult<Scan> {
    let args = arguments(args)?;
    let flag = Arc::new(AtomicBool::new(false));
    let cancel = npgx::cancel::Cancel::of(Arc::clone(&flag));
    let (report, all) = run(py, &flag, move || {
        let mut call = npgx::tools::scan_call(args, cancel.clone())?;
        // The table has every tensor, as the shard does; the document still follows `all`.
        call.options.keep_all |= table;
        let report = npgx::tools::run_scan(&call, &Quiet(cancel))?;
        Ok((report, call.all))
    })?;
    Ok(Scan { report, all, table })
}

/// `npgx dump-compare`: the comparison the arguments (the `dump_compare` tool's) ask for.
#[pyfunction]
fn dump_compare(py: Python<'_>, args: &str) -> PyResult<Compare> {
    let args = arguments(args)?;
    let flag = Arc::new(AtomicBool::new(false));
    let cancel = npgx::cancel::Cancel::of(Arc::clone(&flag));
    let report = run(py, &flag, move || {
        let call = npgx::tools::compare_call(args, cancel.clone())?;
        npgx::tools::run_compare(&call, &Quiet(cancel))
    })?;
    Ok(Compare { report })
}

/// Any other tool by its name (`plog`, `aicore`, `triage_classify`, …): its document as JSON text.
#[pyfunction]
fn call(py: Python<'_>, tool: &str, args: &str) -> PyResult<String> {
    let args = arguments(args)?;
    let Some(def) = npgx::tools::all().into_iter().find(|t| t.name == tool) else {
        return Err(Error::new_err(format!("npgx has no tool named {tool:?}")));
    };
    let flag = Arc::new(AtomicBool::new(false));
    let cancel = npgx::cancel::Cancel::of(Arc::clone(&flag));
    run(py, &flag, move || {
        Ok(serde_json::to_string(&(def.call)(args, &Quiet(cancel))?)?)
    })
}

/// The steps the paths under `path` name, ascending (no file is read).
#[pyfunction]
fn steps(py: Python<'_>, path: PathBuf) -> PyResult<Vec<u64>> {
    let cancel = Arc::new(AtomicBool::new(false));
    run(py, &cancel, move || npgx::scan::steps(&path))
}

/// Panics inside the guarded call, for the test that no panic crosses into Python.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    let cancel = Arc::new(AtomicBool::new(false));
    run(py, &cancel, || -> anyhow::Result<()> {
        panic!("a panic raised on purpose by npgx._npgx._panic_for_test")
    })
}

#[pymodule]
fn _npgx(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("TABLES", cfg!(feature = "tables"))?;
    m.add_class::<Scan>()?;
    m.add_class::<Compare>()?;
    m.add_function(wrap_pyfunction!(dump_scan, m)?)?;
    m.add_function(wrap_pyfunction!(dump_compare, m)?)?;
    m.add_function(wrap_pyfunction!(call, m)?)?;
    m.add_function(wrap_pyfunction!(steps, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
