"""npgx in Python: the analyses of the npgx command, in-process.

The functions call the same engines as the commands, with the command's options as keyword
arguments (``--max-rel`` is ``max_rel=``, a repeatable option takes a list), and return the
document ``npgx <command> --format json`` prints, as a dict; the scan and the comparison also
give their tables as polars DataFrames, equal to the Parquet tables the command writes.
The GIL is released while they work; Ctrl-C stops a scan or a comparison at its next file.

    >>> import npgx
    >>> scan = npgx.dump_scan("/home/dump", graphs=["./graphs"])
    >>> scan.document["summary"]["anomalous_tensors"]
    >>> scan.anomalies.select("op_name", "kind", "user_file", "user_line")

Errors are exceptions: ``FileNotFoundError`` and ``PermissionError`` for paths, :class:`Error`
otherwise (with the command's message). A file inside a tree that cannot be read is not an
exception: it is listed in the document's ``errors``, and ``complete`` is false, as in the CLI.
docs/python.md has the whole story.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Iterable, Optional, Union

from . import _npgx
from ._npgx import Error

__all__ = [
    "Error",
    "ScanResult",
    "CompareResult",
    "dump_scan",
    "dump_compare",
    "first_anomaly",
    "triage_classify",
    "triage_analyze",
    "plog",
    "aicore",
    "dump_config_check",
    "schema",
]

__version__: str = _npgx.__version__

PathLike = Union[str, "os.PathLike[str]"]


def _polars() -> Any:
    try:
        import polars
    except ImportError as e:
        raise ImportError(
            "npgx's tables are polars DataFrames: pip install polars "
            "(.document works without it)"
        ) from e
    return polars


def _frame(parquet: Any) -> Any:
    """The table of `parquet()` (a native method giving Parquet bytes), polars checked first."""
    pl = _polars()
    return pl.read_parquet(io.BytesIO(parquet()))


def _path(p: PathLike) -> str:
    """The path as text, after checking it can be looked at (FileNotFoundError and
    PermissionError come from here, with the path)."""
    path = os.fspath(p)
    os.stat(path)
    return path


def _args(options: dict) -> str:
    return json.dumps(options, default=os.fspath)


def _paths(p: Union[PathLike, Iterable[PathLike]]) -> list:
    if isinstance(p, (str, os.PathLike)):
        return [_path(p)]
    return [_path(x) for x in p]


class ScanResult:
    """What ``npgx.dump_scan`` found."""

    def __init__(self, native: Any) -> None:
        self._native = native
        self._document: Optional[dict] = None
        self._tensors: Any = None

    @property
    def document(self) -> dict:
        """The document ``npgx dump-scan --format json`` prints (``all=True``: with every
        tensor)."""
        if self._document is None:
            self._document = json.loads(self._native.document())
        return self._document

    @property
    def tensors(self) -> Any:
        """One row per tensor: the shard ``npgx dump-scan --format parquet`` writes."""
        if self._tensors is None:
            self._tensors = _frame(self._native.tensors_parquet)
        return self._tensors

    @property
    def anomalies(self) -> Any:
        """The rows of :attr:`tensors` that hold a NaN, an Inf or an overflow."""
        pl = _polars()
        return self.tensors.filter(pl.col("anomalous"))

    def __repr__(self) -> str:
        s = self.document["summary"]
        return (
            f"<npgx.ScanResult {self.document['root']!r}: {s['tensors']} tensors, "
            f"{s['anomalous_tensors']} anomalous, {s['errors']} errors>"
        )


class CompareResult:
    """What ``npgx.dump_compare`` found."""

    def __init__(self, native: Any) -> None:
        self._native = native
        self._document: Optional[dict] = None
        self._pairs: Any = None

    @property
    def document(self) -> dict:
        """The document ``npgx dump-compare --format json`` prints."""
        if self._document is None:
            self._document = json.loads(self._native.document())
        return self._document

    @property
    def pairs(self) -> Any:
        """One row per matched tensor with every metric: the table ``npgx dump-compare
        --format parquet`` writes."""
        if self._pairs is None:
            self._pairs = _frame(self._native.pairs_parquet)
        return self._pairs

    def _diverged(self) -> Optional[dict]:
        for group in self.document["groups"]:
            if group.get("first_divergence"):
                return group
        return None

    @property
    def first_divergence(self) -> Optional[dict]:
        """The first failing pair in execution order of the first run pair (group) that
        diverged, or None when every pair passed."""
        group = self._diverged()
        return group["first_divergence"] if group else None

    @property
    def origin(self) -> Optional[dict]:
        """The operator that started that divergence (the same group's ``origin``), or None."""
        group = self._diverged()
        return group.get("origin") if group else None

    def __repr__(self) -> str:
        s = self.document["summary"]
        return f"<npgx.CompareResult: {s['pairs']} pairs, {s['failed']} failed>"


def dump_scan(path: PathLike, **options: Any) -> ScanResult:
    """Scan a dump tree (or one dump file) for NaN, Inf and overflow: ``npgx dump-scan``.

    Options, by the command's names: ``all``, ``threads``, ``graphs`` (list of paths),
    ``step``, ``rank`` and ``world_size``, ``mmap``, ``no_mmap``.
    """
    return ScanResult(_npgx.dump_scan(_args({"path": _path(path), **options})))


def dump_compare(golden: PathLike, target: PathLike, **options: Any) -> CompareResult:
    """Compare two dump runs tensor by tensor: ``npgx dump-compare``.

    Options: ``cosine``, ``max_rel``, ``dtype_threshold`` (list of ``"float16=0.98,0.05"``),
    ``top``, ``graph``, ``graphs``, ``mapping``, ``group`` (list of ``"GOLDEN_DIR=TARGET_DIR"``),
    ``threads``, ``mmap``, ``no_mmap``.
    """
    args = {"golden": _path(golden), "target": _path(target), **options}
    return CompareResult(_npgx.dump_compare(_args(args)))


def first_anomaly(dump_dir: PathLike, step: Optional[int] = None, **options: Any) -> Optional[dict]:
    """The first anomalous tensor of one step of a dump tree, or None when that step is clean.

    For a training loop: it reads only that step's files (those whose path names the step; a
    statistics file of many steps is read whole). ``step=None`` takes the newest step the
    paths name (the whole tree when they name none). The record is the group's
    ``first_anomaly`` of the dump-scan document (op name, kind, counts, path, source line).
    Raises :class:`Error` when not one tensor of that step could be checked: a clean answer
    needs evidence.
    """
    root = _path(dump_dir)
    if step is None:
        steps = _npgx.steps(root)
        step = steps[-1] if steps else None
    if step is not None:
        options["step"] = step
    # The document only: no table of every tensor is kept.
    doc = ScanResult(_npgx.dump_scan(_args({"path": root, **options}), False)).document
    for group in doc["groups"]:
        if group.get("first_anomaly"):
            return group["first_anomaly"]
    if doc["summary"]["tensors"] == 0:
        where = f"step {step} of {root}" if step is not None else root
        raise Error(f"not one tensor could be checked in {where}")
    return None


def _call(tool: str, args: dict) -> dict:
    return json.loads(_npgx.call(tool, _args(args)))


def triage_classify(text: Optional[str] = None, path: Optional[PathLike] = None) -> dict:
    """The first causal error, phase and route of captured output: ``npgx triage classify``.
    Give exactly one of ``text`` (pasted output) and ``path`` (a file holding it)."""
    if (text is None) == (path is None):
        raise TypeError("give exactly one of text and path")
    if text is not None:
        return _call("triage_classify", {"text": text})
    return _call("triage_classify", {"file": _path(path)})


def triage_analyze(root: PathLike) -> dict:
    """Analyse a triage tree (``npgx triage run``'s): ``npgx triage analyze``."""
    return _call("triage_analyze", {"dir": _path(root)})


def plog(path: Union[PathLike, Iterable[PathLike]]) -> dict:
    """Summarise plogs, device logs and console captures (files or folders): ``npgx plog``."""
    return _call("plog", {"paths": _paths(path)})


def aicore(path: Union[PathLike, Iterable[PathLike]]) -> dict:
    """Every AI Core / AI CPU device error in logs (files or folders): ``npgx aicore``."""
    return _call("aicore", {"paths": _paths(path)})


def dump_config_check(
    path: PathLike,
    graph: Union[PathLike, Iterable[PathLike], None] = None,
    no_fs_check: bool = False,
) -> dict:
    """Check a dump_config.json or acl.json with CANN's rules: ``npgx dump-config check``."""
    args: dict = {"file": _path(path), "no_fs_check": no_fs_check}
    if graph is not None:
        args["graph"] = _paths(graph)
    return _call("dump_config_check", args)


def schema(name: Optional[str] = None) -> dict:
    """The JSON Schema of the npgx document ``name`` (``"npgx.dump-scan"``), or the list of
    every schema: ``npgx schema``."""
    return _call("schema", {} if name is None else {"name": name})
