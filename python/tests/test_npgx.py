"""`import npgx` against the npgx command: every document equal to what `npgx <command> --format
json` prints, every table equal to the Parquet table the command writes, errors as exceptions.

Run by scripts/test_python.sh (which builds the module from the tree and sets NPGX_BIN and
NPGX_FIXTURES); the inputs are the bundled example, the fixtures of the independent writers
(scripts/gen_*_fixtures.py) and the shared samples.
"""

import _thread
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import npgx

REPO = Path(__file__).resolve().parents[2]
NPGX = os.environ.get("NPGX_BIN", str(REPO / "target/debug/npgx"))
FIXTURES = Path(os.environ.get("NPGX_FIXTURES", REPO / "target/fixtures"))
SAMPLES = REPO.parent / "shared/samples"
EXAMPLE = REPO / "testdata/dump-example"
CHAIN = FIXTURES / "compare/chain"


def cli(*args, ok=(0, 1, 3)):
    """What the command prints with --format json."""
    out = subprocess.run([NPGX, *map(str, args), "--format", "json"], capture_output=True)
    assert out.returncode in ok, (args, out.returncode, out.stderr.decode())
    return json.loads(out.stdout)


def cli_table(tmp_path, *args):
    """The Parquet table the command writes."""
    out = tmp_path / "table.parquet"
    done = subprocess.run([NPGX, *map(str, args), "--format", "parquet", "-o", str(out)])
    assert done.returncode in (0, 1, 3), args
    return pl.read_parquet(out)


def test_the_module_is_the_tree_version():
    version = subprocess.run([NPGX, "--version"], capture_output=True, text=True).stdout
    assert version.split()[1] == npgx.__version__


@pytest.mark.parametrize("tree", [EXAMPLE, FIXTURES / "dump/example", FIXTURES / "msprobe"])
def test_scan_document_and_table_equal_the_commands(tmp_path, tree):
    if not tree.exists():
        pytest.fail(f"{tree} is missing: run scripts/test.sh (it writes the fixtures)")
    scan = npgx.dump_scan(tree)
    assert scan.document == cli("dump-scan", tree)
    assert npgx.dump_scan(tree, all=True).document == cli("dump-scan", tree, "--all")
    table = cli_table(tmp_path, "dump-scan", tree)
    assert scan.tensors.equals(table)
    assert scan.tensors.height == scan.document["summary"]["tensors"]
    assert scan.anomalies.height == scan.document["summary"]["anomalous_tensors"]
    assert scan.anomalies["anomalous"].all()


def test_scan_options_by_the_commands_names():
    doc = npgx.dump_scan(EXAMPLE, step=1, threads=2, no_mmap=True, rank=0, world_size=1).document
    assert doc == cli("dump-scan", EXAMPLE, "--step", "1", "-j", "2", "--no-mmap")
    with pytest.raises(npgx.Error, match="unknown field `colour`"):
        npgx.dump_scan(EXAMPLE, colour=True)
    with pytest.raises(npgx.Error, match="rank and world_size"):
        npgx.dump_scan(EXAMPLE, rank=0)


def test_compare_document_and_pairs_equal_the_commands(tmp_path):
    golden, target = CHAIN / "golden", CHAIN / "target"
    result = npgx.dump_compare(golden, target)
    doc = cli("dump-compare", golden, target)
    assert result.document == doc
    assert result.pairs.equals(cli_table(tmp_path, "dump-compare", golden, target))
    assert result.pairs.height == doc["summary"]["pairs"]
    diverged = next(g for g in doc["groups"] if g["first_divergence"])
    assert result.first_divergence == diverged["first_divergence"]
    assert result.origin == diverged["origin"]
    strict = npgx.dump_compare(golden, target, cosine=0.999, max_rel=0.001, top=2,
                               dtype_threshold=["float16=0.98,0.05"])
    assert strict.document == cli("dump-compare", golden, target, "--cosine", "0.999",
                                  "--max-rel", "0.001", "--top", "2",
                                  "--dtype-threshold", "float16=0.98,0.05")


def test_the_other_documents_equal_the_commands(tmp_path):
    plog = SAMPLES / "logs/01-plog-raw-aivec-gatherv3-assert-2025.log"
    pasted = SAMPLES / "triage/03-dynamo-observed-exception-wrapped-engine-dead.txt"
    acl = SAMPLES / "real/acl-json/hicann-ge__testDump1.json"
    assert npgx.plog(plog) == cli("plog", plog)
    assert npgx.aicore([plog]) == cli("aicore", plog)
    assert npgx.triage_classify(path=pasted) == cli("triage", "classify", pasted)
    from_text = npgx.triage_classify(text=pasted.read_text())
    assert from_text["items"][0]["route"] == npgx.triage_classify(path=pasted)["items"][0]["route"]
    # Pasted text has no file: a remedy's commands keep the placeholder, never `<text>`.
    pasted_plog = npgx.triage_classify(text=plog.read_text())
    checks = [c for r in pasted_plog["items"][0]["remedy"] for c in r.get("check", [])]
    assert checks and all("<text>" not in c for c in checks), checks
    assert any("<LOG_FILE>" in c for c in checks), checks
    assert npgx.dump_config_check(acl, no_fs_check=True) == cli(
        "dump-config", "check", acl, "--no-fs-check", ok=(0, 1))
    assert npgx.schema("npgx.dump-scan") == json.loads(
        subprocess.run([NPGX, "schema", "npgx.dump-scan"], capture_output=True).stdout)
    names = {s["name"] for s in npgx.schema()["schemas"]}
    assert "npgx.dump-scan" in names
    with pytest.raises(TypeError):
        npgx.triage_classify()


def test_first_anomaly_reads_only_the_step_it_is_asked_for(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLE, tree)
    newest = npgx.first_anomaly(tree)
    assert newest["step"] == 1 and newest["op_name"] == "model/layer0/Cast"
    assert npgx.first_anomaly(tree, step=0)["op_name"] == "model/layer0/attn/RealDiv"
    # A broken file of step 0 is not read when step 1 is asked for.
    step0 = next(tree.rglob("RealDiv.*"))
    step0.write_bytes(b"\x00" * 7)
    assert npgx.dump_scan(tree, step=1).document["complete"] is True
    assert npgx.first_anomaly(tree)["op_name"] == "model/layer0/Cast"
    assert npgx.dump_scan(tree, step=0).document["complete"] is False
    # No tensor of the step: no clean answer without evidence.
    with pytest.raises(npgx.Error, match="not one tensor could be checked in step 7"):
        npgx.first_anomaly(tree, step=7)
    clean = tmp_path / "clean"
    shutil.copytree(EXAMPLE, clean)
    for f in clean.rglob("*"):
        if f.is_file() and not f.name.startswith("MatMul."):
            f.unlink()
    assert npgx.first_anomaly(clean, step=1) is None


def test_two_threads_scan_at_once_and_the_gil_is_released():
    trees = [EXAMPLE, FIXTURES / "dump/example", EXAMPLE, FIXTURES / "msprobe"]
    alone = [npgx.dump_scan(t).document for t in trees]
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            together = list(pool.map(lambda t: npgx.dump_scan(t).document, trees * 3))
    finally:
        stop.set()
        ticker.join()
    assert together == alone * 3
    assert len(ticks) > 1


def test_a_tree_changed_while_it_is_scanned(tmp_path):
    source = FIXTURES / "truncation"
    if not source.exists():
        pytest.fail(f"{source} is missing: run scripts/test.sh (it writes the fixtures)")
    for seed in range(3):
        tree = tmp_path / f"tree{seed}"
        shutil.copytree(source, tree)
        staging = tmp_path / f"staging{seed}"
        staging.mkdir()
        mutate = subprocess.Popen(
            [sys.executable, str(REPO / "scripts/mutate_tree.py"), str(tree), "--staging",
             str(staging), "--seed", str(seed), "--delay-ms", "5", "--gap-ms", "2"],
            stdout=subprocess.DEVNULL)
        try:
            doc = npgx.dump_scan(tree, threads=2).document
        finally:
            mutate.kill()
            mutate.wait()
        # Whatever changed is a listed problem or read as it was; the scan is a result.
        assert doc["schema"] == "npgx.dump-scan"
        assert doc["complete"] == (not doc["errors"])
        assert doc["summary"]["tensors"] >= 0


def test_errors_are_exceptions(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        npgx.dump_scan(tmp_path / "missing")
    assert e.value.filename == str(tmp_path / "missing")
    with pytest.raises(FileNotFoundError):
        npgx.dump_compare(EXAMPLE, tmp_path / "missing")
    # The paths of options too (found by a fresh user: they were npgx.Error).
    for option in ("mapping", "graph"):
        with pytest.raises(FileNotFoundError) as e:
            npgx.dump_compare(EXAMPLE, EXAMPLE, **{option: tmp_path / "missing.csv"})
        assert e.value.filename == str(tmp_path / "missing.csv")
    # A graph text that cannot be read is a row, of neither run, as on the command line.
    doc = npgx.dump_compare(CHAIN / "golden", CHAIN / "target", graphs=[tmp_path / "none"]).document
    assert [e["side"] for e in doc["errors"]] == ["graphs"] and doc["complete"] is False
    # An error of the analysis: the command's message, as `npgx: error: …` prints it.
    not_a_tree = tmp_path / "file.txt"
    not_a_tree.write_text("not a triage tree\n")
    with pytest.raises(npgx.Error) as e:
        npgx.triage_analyze(not_a_tree)
    stderr = subprocess.run([NPGX, "triage", "analyze", str(not_a_tree)], capture_output=True,
                            text=True).stderr
    assert stderr.strip() == f"npgx: error: {e.value}"
    assert e.value.path is None and e.value.line is None
    # A bad file inside a tree stays a row of the result.
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLE, tree)
    next(tree.rglob("Add.*")).write_bytes(b"\x01\x02")
    doc = npgx.dump_scan(tree).document
    assert doc["complete"] is False and len(doc["errors"]) == 1


def test_a_panic_is_an_npgx_error():
    with pytest.raises(npgx.Error, match="internal error .*a panic raised on purpose"):
        npgx._npgx._panic_for_test()
    # And the module still works.
    assert npgx.dump_scan(EXAMPLE).document["summary"]["tensors"] == 14


@pytest.mark.skipif(os.geteuid() != 0 or not os.environ.get("NPGX_TEST_USER"),
                    reason="needs root and NPGX_TEST_USER (scripts/test.sh as root sets it)")
def test_an_unreadable_file_is_a_permission_error(tmp_path):
    user = os.environ["NPGX_TEST_USER"]
    secret = tmp_path / "secret.log"
    secret.write_text("[ERROR] GE(1,python):2025-01-01-00:00:00.000.000 x\n")
    secret.chmod(0)
    tmp_path.chmod(0o755)
    code = ("import npgx, sys\n"
            "try:\n    npgx.triage_classify(path=sys.argv[1])\n"
            "except PermissionError as e:\n    print('PermissionError', e.filename)\n")
    out = subprocess.run(["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups",
                          sys.executable, "-c", code, str(secret)],
                         capture_output=True, text=True, env=dict(os.environ))
    assert out.stdout.strip() == f"PermissionError {secret}", out.stderr


def test_ctrl_c_cancels_a_long_scan(tmp_path):
    # 200 dumps of 1 MiB: a scan long enough to interrupt (0.6 s on one thread with the test
    # build), and the engine looks at its cancel between files.
    tree = tmp_path / "many"
    tree.mkdir()
    values = np.arange(1 << 18, dtype=np.float32)
    for f in range(200):
        np.save(tree / f"t{f}.npy", values)
    # Ctrl-C raises KeyboardInterrupt in the Python a user types into; a Python started with
    # SIGINT ignored (a background job of a non-interactive shell: `cmd &` in a script) keeps it
    # ignored, and interrupt_main() then does nothing. The test gives itself the interactive
    # handler.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = None
    try:
        started = time.monotonic()
        npgx.dump_scan(tree, threads=1)
        whole = time.monotonic() - started
        if whole < 0.3:
            pytest.skip(f"the whole scan takes {whole:.2f} s here: too short to interrupt midway")
        # Interrupted a tenth of the way in, the call returns when the engine has stopped (it
        # looks every 50 ms): well before the end of the scan.
        timer = threading.Timer(whole / 10, _thread.interrupt_main)
        started = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            npgx.dump_scan(tree, threads=1)
        assert time.monotonic() - started < whole / 2, whole
    finally:
        if timer is not None:
            timer.cancel()
            timer.join()
        signal.signal(signal.SIGINT, previous)


def test_without_polars_the_document_works_and_the_tables_say_what_to_install(monkeypatch):
    scan = npgx.dump_scan(EXAMPLE)
    monkeypatch.setitem(sys.modules, "polars", None)
    assert scan.document["summary"]["tensors"] == 14
    with pytest.raises(ImportError, match="pip install polars"):
        scan.tensors
