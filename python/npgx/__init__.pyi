"""Type stubs of `import npgx` (docs/python.md)."""

import os
from typing import Any, Iterable, Optional, Union

PathLike = Union[str, os.PathLike[str]]
Paths = Union[PathLike, Iterable[PathLike]]

__version__: str

class Error(Exception):
    """An npgx analysis could not run: the message the command prints."""

    path: Optional[str]
    line: Optional[int]

class ScanResult:
    @property
    def document(self) -> dict[str, Any]: ...
    @property
    def tensors(self) -> Any:
        """polars.DataFrame: one row per tensor (the dump-scan shard)."""
    @property
    def anomalies(self) -> Any:
        """polars.DataFrame: the anomalous rows of `tensors`."""

class CompareResult:
    @property
    def document(self) -> dict[str, Any]: ...
    @property
    def pairs(self) -> Any:
        """polars.DataFrame: one row per matched tensor with every metric."""
    @property
    def first_divergence(self) -> Optional[dict[str, Any]]: ...
    @property
    def origin(self) -> Optional[dict[str, Any]]: ...

def dump_scan(
    path: PathLike,
    *,
    all: bool = ...,
    threads: Optional[int] = ...,
    graphs: Iterable[PathLike] = ...,
    step: Optional[int] = ...,
    rank: Optional[int] = ...,
    world_size: Optional[int] = ...,
    mmap: bool = ...,
    no_mmap: bool = ...,
) -> ScanResult: ...
def dump_compare(
    golden: PathLike,
    target: PathLike,
    *,
    cosine: Optional[float] = ...,
    max_rel: Optional[float] = ...,
    dtype_threshold: Iterable[str] = ...,
    top: Optional[int] = ...,
    graph: Optional[PathLike] = ...,
    graphs: Iterable[PathLike] = ...,
    mapping: Optional[PathLike] = ...,
    group: Iterable[str] = ...,
    threads: Optional[int] = ...,
    mmap: bool = ...,
    no_mmap: bool = ...,
) -> CompareResult: ...
def first_anomaly(
    dump_dir: PathLike,
    step: Optional[int] = ...,
    *,
    threads: Optional[int] = ...,
    graphs: Iterable[PathLike] = ...,
    rank: Optional[int] = ...,
    world_size: Optional[int] = ...,
    mmap: bool = ...,
    no_mmap: bool = ...,
) -> Optional[dict[str, Any]]: ...
def triage_classify(text: Optional[str] = ..., path: Optional[PathLike] = ...) -> dict[str, Any]: ...
def triage_analyze(root: PathLike) -> dict[str, Any]: ...
def plog(path: Paths) -> dict[str, Any]: ...
def aicore(path: Paths) -> dict[str, Any]: ...
def dump_config_check(
    path: PathLike, graph: Optional[Paths] = ..., no_fs_check: bool = ...
) -> dict[str, Any]: ...
def schema(name: Optional[str] = ...) -> dict[str, Any]: ...
