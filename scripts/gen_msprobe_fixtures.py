#!/usr/bin/env python3
"""Independent writer of msprobe (mindstudio-probe) dump fixtures, with msprobe compare's own truths.

Every tree here is written by msprobe itself: its PyTorch `PrecisionDebugger` with a config json,
run on CPU with plain PyTorch, on small seeded models (Linear / ReLU / LayerNorm / softmax / log),
one training step (forward, nll loss, backward) per dumped step. Nothing is written by hand and
nothing comes from the Rust code under test:

* golden and target runs of the same model, the target differing in a known way: one API call's
  output perturbed inside the call (a faulty kernel: its inputs match, its output differs), one
  weight nudged (the kernel is right, a parameter differs), a NaN born at a known call (log of a
  negative), a fault on one rank of two that an all_reduce carries to the other;
* tasks `tensor`, `statistics`, and `statistics` with summary_mode `md5` and `xor`; levels L0, L1, mix;
* two ranks written by two processes (torch.distributed, gloo, world size 2) for two steps;
* an fp16 chain whose fp16 `Norm` statistic overflows while its Max and Min are finite;
* for every golden/target pair, the CSV written by msprobe's own compare (`msprobe compare -tp
  TARGET/dump.json -gp GOLDEN/dump.json`, run in-process through its CLI entry), kept verbatim
  as `compare_result.csv` and also as `compare_result.json` (the same rows, strings unchanged).

`OUT/MANIFEST.json` describes every tree and pair: what was injected and where, the first anomaly
and the birth call of every dump (computed here from msprobe's files with torch / json, by the
definitions in `OUT/README.md`), the first divergent call of every pair, and the path of msprobe's
compare output. The generator checks that msprobe's files agree with the injection (same calls on
both sides, the divergence where it was put) and fails otherwise.

Usage:
    gen_msprobe_fixtures.py --out DIR            all fixtures (about 1 minute on 2 cores, < 5 MB)
    gen_msprobe_fixtures.py --bench-pair DIR [--bench-mb N]
                                                 golden/ and target/ tensor-task L1 dumps of a
                                                 12-layer model, >= N MB a side (default 200),
                                                 for scripts/bench_msprobe_compare.sh

Values are deterministic (fixed seeds, one torch thread); msprobe's own names are kept, so the
`proc{pid}` directory of a single-process dump and the time stamp msprobe puts in the name of its
compare output change from run to run — MANIFEST.json gives every path.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import io
import json
import math
import os
import shutil
import socket
import sys
import time
import traceback
from pathlib import Path

MARKER = "GENERATED_BY_gen_msprobe_fixtures"
SEED = 20261125
D_IN, D_MODEL, N_CLASSES, BATCH = 8, 16, 4, 4

# ---------------------------------------------------------------------------------------------
# The runs. A run is one msprobe dump (one process, or two ranks); a pair is golden vs target.
# ---------------------------------------------------------------------------------------------

# Injections, applied in the target runs only.
KERNEL = {"kind": "kernel_noise", "api": "relu", "call_index": 1, "step": 0, "scale": 0.01,
          "call": "Torch.relu.1.forward", "io": "output", "index": 0,
          "what": "torch.relu's second call (blocks.1) returns relu(x) + 0.01 * N(0,1) noise: "
                  "its inputs match, its output differs (a faulty kernel)"}
WEIGHT = {"kind": "weight_nudge", "param": "blocks.1.fc1.weight", "scale": 0.001,
          "what": "parameter blocks.1.fc1.weight += 0.001 * N(0,1) before the step: the kernels "
                  "are right, a parameter differs",
          "seen_as": {"L1": "Functional.linear.3.forward.input.1",
                      "mix": "Module.blocks.1.fc1.Linear.forward.0.parameters.weight",
                      "L0": "Module.blocks.1.fc1.Linear.forward.0.parameters.weight"}}
NAN = {"kind": "nan_birth", "api": "softmax", "call_index": 0, "step": 0, "shift": -0.3,
       "call": "Torch.log.0.forward", "io": "output", "index": 0,
       "what": "torch.softmax's first call returns softmax(x) - 0.3 (some probabilities become "
               "negative), so torch.log's output holds NaN while its input is finite: NaN born "
               "at Torch.log.0.forward (the divergence starts at Torch.softmax.0.forward)"}
EXTRA = {"kind": "extra_call", "call": "Torch.tanh.0.forward",
         "what": "the target also calls torch.tanh(h) after embed and drops the result: one call "
                 "(Torch.tanh.0.forward) only in the target, every other value the golden one"}
BF16 = {"kind": "dtype", "dtype": "bfloat16",
        "what": "the same model, weights and inputs cast to bfloat16 (the golden runs in float32): "
                "every tensor differs by rounding, msprobe compares bf16 against fp32"}
FP16 = {"kind": "dtype", "dtype": "float16",
        "what": "the same model, weights and inputs cast to float16 (the golden runs in float32)"}
RANK_KERNEL = dict(KERNEL, rank=1,
                   what="on rank 1 only, step 0: torch.relu's second call returns relu(x) + 0.01 * "
                        "N(0,1); rank 0 receives the difference through the gradients' all_reduce "
                        "(Distributed.all_reduce), and in step 1 every weight differs on both ranks")


def run(name, task, level, *, inject=None, summary_mode=None, model="mlp", world=1, steps=1):
    return {"name": name, "task": task, "level": level, "inject": inject, "summary_mode": summary_mode,
            "model": model, "world": world, "steps": steps}


RUNS = [
    run("tensor_L1/golden", "tensor", "L1"),
    run("tensor_L1/kernel", "tensor", "L1", inject=KERNEL),
    run("tensor_L1/weight", "tensor", "L1", inject=WEIGHT),
    run("tensor_L1/nan", "tensor", "L1", inject=NAN),
    run("tensor_L1/extra_call", "tensor", "L1", inject=EXTRA),
    run("tensor_L1/bf16", "tensor", "L1", inject=BF16),
    run("tensor_L1/fp16", "tensor", "L1", inject=FP16),
    run("tensor_L0/golden", "tensor", "L0"),
    run("tensor_L0/weight", "tensor", "L0", inject=WEIGHT),
    run("tensor_L0/kernel", "tensor", "L0", inject=KERNEL),
    run("tensor_mix/golden", "tensor", "mix"),
    run("tensor_mix/kernel", "tensor", "mix", inject=KERNEL),
    run("tensor_mix/weight", "tensor", "mix", inject=WEIGHT),
    run("statistics_L1/golden", "statistics", "L1"),
    run("statistics_L1/kernel", "statistics", "L1", inject=KERNEL),
    run("statistics_L1/weight", "statistics", "L1", inject=WEIGHT),
    run("statistics_L1/nan", "statistics", "L1", inject=NAN),
    run("statistics_L0/golden", "statistics", "L0"),
    run("statistics_L0/kernel", "statistics", "L0", inject=KERNEL),
    run("statistics_mix/golden", "statistics", "mix"),
    run("statistics_mix/nan", "statistics", "mix", inject=NAN),
    run("md5_mix/golden", "statistics", "mix", summary_mode="md5"),
    run("md5_mix/kernel", "statistics", "mix", summary_mode="md5", inject=KERNEL),
    run("xor_L1/golden", "statistics", "L1", summary_mode="xor"),
    run("xor_L1/kernel", "statistics", "L1", summary_mode="xor", inject=KERNEL),
    run("ranks_tensor_L1/golden", "tensor", "L1", world=2, steps=2),
    run("ranks_tensor_L1/target", "tensor", "L1", world=2, steps=2, inject=RANK_KERNEL),
    run("ranks_statistics_mix/golden", "statistics", "mix", world=2, steps=2),
    run("ranks_statistics_mix/target", "statistics", "mix", world=2, steps=2, inject=RANK_KERNEL),
    run("fp16_norm/statistics", "statistics", "L1", model="fp16"),
    run("fp16_norm/tensor", "tensor", "L1", model="fp16"),
]

# (pair name, golden run, target run)
PAIRS = [
    ("tensor_L1_kernel", "tensor_L1/golden", "tensor_L1/kernel"),
    ("tensor_L1_weight", "tensor_L1/golden", "tensor_L1/weight"),
    ("tensor_L1_nan", "tensor_L1/golden", "tensor_L1/nan"),
    ("tensor_L1_extra_call", "tensor_L1/golden", "tensor_L1/extra_call"),
    ("tensor_L1_bf16", "tensor_L1/golden", "tensor_L1/bf16"),
    ("tensor_L1_fp16", "tensor_L1/golden", "tensor_L1/fp16"),
    ("tensor_L0_weight", "tensor_L0/golden", "tensor_L0/weight"),
    ("tensor_L0_kernel", "tensor_L0/golden", "tensor_L0/kernel"),
    ("tensor_mix_kernel", "tensor_mix/golden", "tensor_mix/kernel"),
    ("tensor_mix_weight", "tensor_mix/golden", "tensor_mix/weight"),
    ("statistics_L1_kernel", "statistics_L1/golden", "statistics_L1/kernel"),
    ("statistics_L1_weight", "statistics_L1/golden", "statistics_L1/weight"),
    ("statistics_L1_nan", "statistics_L1/golden", "statistics_L1/nan"),
    ("statistics_L0_kernel", "statistics_L0/golden", "statistics_L0/kernel"),
    ("statistics_mix_nan", "statistics_mix/golden", "statistics_mix/nan"),
    ("md5_mix_kernel", "md5_mix/golden", "md5_mix/kernel"),
    ("xor_L1_kernel", "xor_L1/golden", "xor_L1/kernel"),
    ("ranks_tensor_L1", "ranks_tensor_L1/golden", "ranks_tensor_L1/target"),
    ("ranks_statistics_mix", "ranks_statistics_mix/golden", "ranks_statistics_mix/target"),
]

# ---------------------------------------------------------------------------------------------
# One dump per forked process: PrecisionDebugger is a process-wide singleton whose hooks stay
# installed; the fault is installed before its start(), where msprobe takes the APIs to wrap.
# ---------------------------------------------------------------------------------------------

STATE = {"step": 0}


def install_fault(inject, rank):
    """Wrap torch.<api> so that one call (by index, in one step, on one rank) is perturbed.

    Installed before PrecisionDebugger.start(), where msprobe reads the APIs it wraps
    (ApiRegistry.initialize_hook), so msprobe wraps this function like the original: its hook
    sees the call's real inputs and the perturbed output. The perturbation uses
    torch._C._VariableFunctions directly, which msprobe does not hook, so the dumped call
    sequence is the golden one."""
    import torch
    if not inject or inject["kind"] not in ("kernel_noise", "nan_birth"):
        return
    if inject.get("rank", rank) != rank:
        return
    vf = torch._C._VariableFunctions
    orig = getattr(torch, inject["api"])
    counter = {}

    @functools.wraps(orig)
    def faulty(*args, **kwargs):
        out = orig(*args, **kwargs)
        k = counter.get(STATE["step"], 0)
        counter[STATE["step"]] = k + 1
        if STATE["step"] != inject["step"] or k != inject["call_index"]:
            return out
        if inject["kind"] == "kernel_noise":
            gen = torch.Generator().manual_seed(SEED + 7)
            noise = vf.randn(tuple(out.shape), generator=gen, dtype=out.dtype)
            return vf.add(out, vf.mul(noise, inject["scale"]))
        return vf.add(out, inject["shift"])

    setattr(torch, inject["api"], faulty)


def build_mlp(layers, d_model, extra_call=False):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(d_model)
            self.fc1 = nn.Linear(d_model, 2 * d_model)
            self.fc2 = nn.Linear(2 * d_model, d_model)

        def forward(self, x):
            h = torch.relu(self.fc1(self.ln(x)))
            return x + self.fc2(h)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(D_IN, d_model)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.head = nn.Linear(d_model, N_CLASSES)

        def forward(self, x):
            h = self.embed(x)
            if extra_call:
                torch.tanh(h)  # dumped, result unused: the values downstream stay the golden ones
            for b in self.blocks:
                h = b(h)
            return torch.log(torch.softmax(self.head(h), dim=-1))

    torch.manual_seed(SEED)
    return Net()


def build_fp16():
    import torch
    from torch import nn

    class Fp16Chain(nn.Module):
        """x ≈ 300 (64×64 fp16): x*8 ≈ 2400 has finite Max/Min but Norm ≈ 153 600 > 65 504;
        +1 keeps that; *40 ≈ 96 000 overflows fp16 for real; neg turns +inf into -inf."""

        def forward(self, x):
            a = torch.mul(x, 8.0)
            b = torch.add(a, 1.0)
            return torch.neg(torch.mul(b, 40.0))

    return Fp16Chain()


def write_config(spec, dump_path, cfg_path):
    task = spec["task"]
    section = {"scope": [], "list": [], "data_mode": ["all"]}
    if spec["summary_mode"]:
        section["summary_mode"] = spec["summary_mode"]
    cfg = {"task": task, "dump_path": str(dump_path), "rank": [], "step": [], "level": spec["level"],
           task: section}
    Path(cfg_path).write_text(json.dumps(cfg, indent=1) + "\n")


def train(spec, rank, world, cfg_path, layers=2, d_model=D_MODEL, batch=BATCH):
    """The dumped steps of one process (rank `rank` of `world`)."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    install_fault(spec["inject"], rank)
    from msprobe.pytorch import PrecisionDebugger

    if spec["model"] == "fp16":
        model = build_fp16()
        gen = torch.Generator().manual_seed(SEED + 3)
        x = (300.0 + 10.0 * torch.randn(64, 64, generator=gen)).to(torch.float16)
        debugger = PrecisionDebugger(config_path=str(cfg_path))
        debugger.start(model)
        model(x)
        debugger.stop()
        debugger.step()
        return

    inject = spec["inject"] or {}
    model = build_mlp(layers, d_model, extra_call=inject.get("kind") == "extra_call")
    dtype = getattr(torch, inject.get("dtype", "float32"))
    model.to(dtype)
    if inject.get("kind") == "weight_nudge":
        param = dict(model.named_parameters())[inject["param"]]
        gen = torch.Generator().manual_seed(SEED + 5)
        with torch.no_grad():
            param.add_(inject["scale"] * torch.randn(param.shape, generator=gen))
    debugger = PrecisionDebugger(config_path=str(cfg_path))
    for step in range(spec["steps"]):
        STATE["step"] = step
        gen = torch.Generator().manual_seed(SEED + 100 * step + rank)
        x = torch.randn(batch, D_IN, generator=gen).to(dtype)
        y = torch.randint(0, N_CLASSES, (batch,), generator=gen)
        debugger.start(model)
        loss = F.nll_loss(model(x), y)
        loss.backward()
        if world > 1:
            import torch.distributed as dist
            for p in model.parameters():
                dist.all_reduce(p.grad)
        debugger.stop()
        debugger.step()
        with torch.no_grad():
            for p in model.parameters():
                p.sub_(0.1 / world * p.grad)
                p.grad = None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fork(fn, log_path):
    """Run fn() in a forked child whose stdout / stderr go to log_path; returns the child's pid.

    The parent has imported torch and msprobe once; each child installs its fault, creates its
    own PrecisionDebugger (a process-wide singleton whose hooks stay installed) and exits."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        fn()
        code = 0
    except BaseException:  # noqa: BLE001 - the child reports everything, then exits
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def wait_all(pids: dict):
    """Wait for children {pid: description}; fail naming the first that failed."""
    failed = []
    for pid, what in pids.items():
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(what)
    return failed


def run_dump(spec):
    """One msprobe dump (runs in a forked child): one process, or one child per rank."""
    cfg_path = Path(spec["cfg_path"])
    write_config(spec, Path(spec["dump_path"]), cfg_path)
    if spec["world"] == 1:
        train(spec, 0, 1, cfg_path, layers=spec.get("layers", 2), d_model=spec.get("d_model", D_MODEL),
              batch=spec.get("batch", BATCH))
        return
    port = free_port()
    log = Path(spec["log"])
    pids = {fork(functools.partial(dist_rank, r, spec, cfg_path, port), log.with_suffix(f".rank{r}.log")): r
            for r in range(spec["world"])}
    failed = wait_all(pids)
    if failed:
        raise RuntimeError(f"ranks {failed} failed, see {log.with_suffix('.rank*.log')}")


def dist_rank(rank, spec, cfg_path, port):
    import torch.distributed as dist
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # not whatever the host name resolves to
    dist.init_process_group("gloo", rank=rank, world_size=spec["world"])
    try:
        train(spec, rank, spec["world"], cfg_path)
        dist.barrier()
    finally:
        dist.destroy_process_group()


def run_dumps(specs, jobs):
    """All dumps, `jobs` at a time, each in a forked child of this (torch + msprobe loaded) process."""
    import torch
    torch.set_num_threads(1)
    import msprobe.pytorch  # noqa: F401 - loaded once, before forking; hooks are installed by start()
    pending, running = list(specs), {}
    failed = []
    while pending or running:
        while pending and len(running) < jobs:
            spec = pending.pop(0)
            running[fork(functools.partial(run_dump, spec), spec["log"])] = spec
        pid, status = os.wait()
        spec = running.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(spec)
    for spec in failed:
        sys.stderr.write(Path(spec["log"]).read_text()[-4000:])
    if failed:
        sys.exit(f"gen_msprobe_fixtures.py: msprobe dump failed: {[s['name'] for s in failed]} (logs above)")

# ---------------------------------------------------------------------------------------------
# Reading msprobe's trees back (plain json / torch) to state the truths
# ---------------------------------------------------------------------------------------------


def dump_dirs(root: Path):
    """[(step, rank or None, dir)] under one run's dump_path, in step / rank order."""
    out = []
    for sd in sorted(root.glob("step*"), key=lambda p: int(p.name[4:])):
        for rd in sorted(sd.iterdir()):
            if rd.name.startswith("rank"):
                out.append((int(sd.name[4:]), int(rd.name[4:]), rd))
            elif rd.name.startswith("proc"):
                out.append((int(sd.name[4:]), None, rd))
    return out


def load_dump(d: Path):
    return json.loads((d / "dump.json").read_text())  # Python's json reads NaN / Infinity


def is_tensor(leaf):
    return isinstance(leaf, dict) and leaf.get("type") == "torch.Tensor"


def tensors_of(call_name, entry):
    """[(role, slot, leaf)] of one dump.json entry; role is input / parameter / output /
    parameter_grad, slot the name msprobe compare gives the row after the call name."""
    out = []

    def walk(role, prefix, node):
        if node is None:
            return
        if isinstance(node, dict) and "type" in node:
            if is_tensor(node):
                out.append((role, prefix, node))
            return
        if isinstance(node, list):
            for i, x in enumerate(node):
                walk(role, f"{prefix}.{i}", x)
        elif isinstance(node, dict):
            for k, x in node.items():
                walk(role, f"{prefix}.{k}", x)

    if ".parameters_grad" in call_name:
        for pname, lst in entry.items():
            for leaf in lst or []:
                if is_tensor(leaf):
                    out.append(("parameter_grad", pname, leaf))
        return out
    for key, role, prefix in (("input_args", "input", "input"), ("input_kwargs", "input", "input"),
                              ("input", "input", "input"), ("parameters", "parameter", "parameters"),
                              ("output", "output", "output")):
        if key in entry:
            walk(role, prefix, entry[key])
    return out


LOW_PRECISION = {"torch.float16", "torch.bfloat16"}


def finite(v):
    return v is None or isinstance(v, bool) or (isinstance(v, (int, float)) and math.isfinite(v))


def leaf_state(leaf, data_dir, task):
    """'anomaly', 'stat_note' (a statistic overflowed by itself) or 'clean'."""
    if task == "tensor":
        import torch
        t = torch.load(data_dir / leaf["data_name"], map_location="cpu")
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            return "anomaly"
    stats = [leaf.get(k) for k in ("Max", "Min", "Mean", "Norm")]
    if all(finite(v) for v in stats):
        return "clean"
    if task != "tensor" and not (finite(stats[0]) and finite(stats[1]) and leaf["dtype"] in LOW_PRECISION):
        return "anomaly"
    return "stat_note" if finite(stats[0]) and finite(stats[1]) else "anomaly"


def scan_truth(d: Path, task):
    """First anomaly, birth call and statistics notes of one dump, in dump.json order."""
    data = load_dump(d)["data"]
    data_dir = d / "dump_tensor_data"
    first = birth = None
    notes, anomalous_calls = [], []
    for call, entry in data.items():
        bad_in, bad_out = [], []
        for role, slot, leaf in tensors_of(call, entry):
            state = leaf_state(leaf, data_dir, task)
            ref = {"call": call, "io": role, "slot": slot, "dtype": leaf["dtype"]}
            if state == "stat_note":
                notes.append(dict(ref, stats={k: leaf.get(k) for k in ("Max", "Min", "Mean", "Norm")}))
            elif state == "anomaly":
                (bad_in if role in ("input", "parameter") else bad_out).append(slot)
                if first is None:
                    first = ref
        if bad_in or bad_out:
            anomalous_calls.append(call)
        if birth is None and bad_out and not bad_in and ".parameters_grad" not in call:
            birth = {"call": call, "anomalous_outputs": bad_out}
    for n in notes:  # JSON has no inf / nan: write them as msprobe's tokens, as strings
        n["stats"] = {k: (v if finite(v) else str(v).replace("inf", "Infinity").replace("nan", "NaN"))
                      for k, v in n["stats"].items()}
    return {"first_anomaly": first, "birth": birth, "anomalous_calls": len(anomalous_calls),
            "stat_notes": notes}


def leaf_key(leaf, data_dir, task):
    if task == "tensor":
        import torch
        t = torch.load(data_dir / leaf["data_name"], map_location="cpu")
        return ("tensor", t)
    if "md5" in leaf:
        return ("md5", leaf["md5"])
    return ("stats", json.dumps([leaf.get(k) for k in ("Max", "Min", "Mean", "Norm")]))


def same(a, b):
    if a[0] == "tensor":
        import torch
        x, y = a[1], b[1]
        return x.dtype == y.dtype and x.shape == y.shape and bool(torch.equal(x.nan_to_num(), y.nan_to_num())) \
            and bool((x.isnan() == y.isnan()).all())
    return a == b


def divergence_truth(gd: Path, td: Path, task):
    """Where golden and target part, in dump.json order (see README: first_divergent, origin)."""
    g, t = load_dump(gd)["data"], load_dump(td)["data"]
    only_golden, only_target = [c for c in g if c not in t], [c for c in t if c not in g]
    gdir, tdir = gd / "dump_tensor_data", td / "dump_tensor_data"
    first = origin = None
    differing_calls = 0
    earlier_outputs = []  # (call, golden key) of every output seen so far, for produced_by
    for call in (c for c in g if c in t):
        gl, tl = tensors_of(call, g[call]), tensors_of(call, t[call])
        if [(r, s) for r, s, _ in gl] != [(r, s) for r, s, _ in tl]:
            raise SystemExit(f"gen_msprobe_fixtures.py: {call} has other tensors in {td}")
        keys = [(r, s, leaf_key(a, gdir, task), leaf_key(b, tdir, task)) for (r, s, a), (_, _, b) in zip(gl, tl)]
        diff = [(r, s, ga) for r, s, ga, ta in keys if not same(ga, ta)]
        if diff:
            differing_calls += 1
            inputs = [{"slot": s, "produced_by": next((c for c, k in earlier_outputs if same(k, ga)), None)}
                      for r, s, ga in diff if r == "input"]
            params = [s for r, s, _ in diff if r == "parameter"]
            if params:
                evidence = "a parameter differs"
            elif not inputs:
                evidence = "inputs match, output differs"
            elif all(i["produced_by"] is None for i in inputs):
                evidence = "an input no dumped call produced differs"
            else:
                evidence = "an input differs"
            rec = {"call": call, "differing": [f"{call}.{s}" for _, s, _ in diff], "evidence": evidence,
                   "differing_inputs": inputs, "differing_parameters": params}
            if first is None:
                first = rec
            if origin is None and ".forward" in call and evidence in ("a parameter differs",
                                                                     "inputs match, output differs"):
                origin = rec
        earlier_outputs += [(call, ga) for r, s, ga, _ in keys if r == "output"]
    return {"first_divergent": first, "origin": origin, "differing_calls": differing_calls,
            "calls_only_in_golden": only_golden, "calls_only_in_target": only_target}


# ---------------------------------------------------------------------------------------------
# msprobe compare, in-process through its CLI entry point
# ---------------------------------------------------------------------------------------------


def msprobe_compare(target_json: Path, golden_json: Path, out_dir: Path, log):
    import msprobe
    # what the `msprobe` console script does first (msprobe/msprobe.py): its msaccucmp modules
    # import each other by bare name
    accucmp = os.path.join(os.path.dirname(msprobe.__file__), "msaccucmp")
    if accucmp not in sys.path:
        sys.path.append(accucmp)
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):  # it greets on import
        from msprobe.core.compare.compare_cli import compare_cli
        from msprobe.core.compare.utils import _compare_parser
    argv = ["compare", "-tp", str(target_json), "-gp", str(golden_json), "-o", str(out_dir)]
    parser = argparse.ArgumentParser(prog="msprobe")
    sub = parser.add_subparsers()
    _compare_parser(sub.add_parser("compare"))
    args = parser.parse_args(argv)
    tmp = out_dir / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    args.output_path = str(tmp)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        compare_cli(args, argv[1:])
    log.write(f"== msprobe {' '.join(argv)}\n")
    log.write(buf.getvalue())
    made = sorted(tmp.glob("compare_result_*.csv"))
    if len(made) != 1:
        raise SystemExit(f"gen_msprobe_fixtures.py: msprobe compare of {target_json} wrote {made}")
    csv_path = out_dir / "compare_result.csv"
    made[0].replace(csv_path)
    tmp.rmdir()
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    (out_dir / "compare_result.json").write_text(json.dumps(
        {"msprobe_version": msprobe_version(), "msprobe_file_name": made[0].name,
         "command": "msprobe " + " ".join(argv), "rows": rows}, indent=1) + "\n")
    return csv_path, rows

# ---------------------------------------------------------------------------------------------
# Orchestration
# ---------------------------------------------------------------------------------------------


def msprobe_version():
    from importlib.metadata import version
    return version("mindstudio-probe")


def describe_run(out: Path, spec):
    root = out / spec["name"]
    dumps = []
    for step, rank, d in dump_dirs(root):
        data = load_dump(d)
        files = sorted(p.name for p in (d / "dump_tensor_data").glob("*")) if (d / "dump_tensor_data").exists() else []
        dumps.append(dict({"step": step, "rank": rank, "dir": str(d.relative_to(out)),
                           "calls": len(data["data"]), "first_call": next(iter(data["data"])),
                           "tensor_files": len(files),
                           "header": {k: v for k, v in data.items() if k != "data"}},
                          **scan_truth(d, spec["task"])))
    return {"name": spec["name"], "path": spec["name"], "task": spec["task"], "level": spec["level"],
            "summary_mode": spec["summary_mode"] or ("statistics" if spec["task"] == "statistics" else None),
            "framework": "pytorch", "model": spec["model"], "world_size": spec["world"],
            "ranks": sorted({x["rank"] for x in dumps if x["rank"] is not None}),
            "steps": sorted({x["step"] for x in dumps}), "forward_and_backward": spec["model"] == "mlp",
            "injected": spec["inject"], "config": json.loads((out / spec["name"] / "config.json").read_text()),
            "dumps": dumps}


def check_expectations(runs, pairs):
    """msprobe's files must show what was injected, where it was injected."""
    def fail(msg):
        raise SystemExit(f"gen_msprobe_fixtures.py: {msg}")

    for r in runs.values():
        inj = r["injected"]
        for d in r["dumps"]:
            if inj and inj["kind"] == "nan_birth" and r["level"] != "L0":
                if not d["birth"] or d["birth"]["call"] != inj["call"]:
                    fail(f"{r['name']}: NaN birth expected at {inj['call']}, found {d['birth']}")
            if r["model"] == "fp16":
                if not d["stat_notes"] or d["first_anomaly"]["call"] != "Torch.mul.1.forward":
                    fail(f"{r['name']}: fp16 norm notes / overflow at Torch.mul.1.forward not seen: {d}")
            if r["model"] == "mlp" and (not inj or inj["kind"] != "nan_birth") and d["first_anomaly"]:
                fail(f"{r['name']}: unexpected anomaly {d['first_anomaly']}")
    for p in pairs:
        inj = runs[p["target"]]["injected"]
        for d in p["dumps"]:
            extra = inj["kind"] == "extra_call"
            if (d["calls_only_in_target"] != ([inj["call"]] if extra else [])) or d["calls_only_in_golden"]:
                fail(f"{p['name']}: calls differ unexpectedly: {d['calls_only_in_golden']} / {d['calls_only_in_target']}")
            if extra and d["first_divergent"] is not None:
                fail(f"{p['name']}: an unused extra call changed values: {d['first_divergent']}")
            o = d["origin"]
            if inj["kind"] == "kernel_noise" and d["rank"] in (None, 1) and d["step"] == 0:
                want = inj["call"] if p["level"] != "L0" else "Module.blocks.1.Block.forward.0"
                if not o or o["call"] != want or o["evidence"] != "inputs match, output differs":
                    fail(f"{p['name']}: origin expected at {want}, found {o}")
            if inj["kind"] == "kernel_noise" and d["rank"] == 0 and d["step"] == 0:
                if not o or not o["call"].startswith("Distributed.all_reduce."):
                    fail(f"{p['name']}: rank 0 should diverge first at an all_reduce, found {o}")
            if inj["kind"] == "weight_nudge":
                f = d["first_divergent"]
                if f["differing"][0] != inj["seen_as"][p["level"]] and \
                        (p["level"] == "L1" or o["differing"][0] != inj["seen_as"][p["level"]]):
                    fail(f"{p['name']}: {inj['seen_as'][p['level']]} expected to differ first, found {f}")


README = """# msprobe fixtures (written by msprobe itself)

Made by `scripts/gen_msprobe_fixtures.py` with mindstudio-probe {version} (PyPI) and torch
{torch} on CPU. Every dump tree below is msprobe's own output (`PrecisionDebugger(config_path=...)`,
`start(model)` / `stop()` / `step()` around one training step: forward, `F.nll_loss`,
`backward()`); every `compare/*/compare_result.csv` is msprobe compare's own output
(`msprobe compare -tp TARGET/dump.json -gp GOLDEN/dump.json -o DIR`, target = msprobe's "NPU"
side, golden = its "Bench" side), `compare_result.json` the same rows. `MANIFEST.json` holds the
truths; `logs/` msprobe's console output.

Model (`mlp`): `embed` Linear(8→16), two blocks (`ln` LayerNorm, `fc1` Linear(16→32),
`torch.relu`, `fc2` Linear(32→16), residual `+`), `head` Linear(16→4), `torch.softmax`,
`torch.log`; batch 4, seed {seed}, one torch thread. Each tree keeps msprobe's `config.json`.

| tree | task | level | how it was made |
|---|---|---|---|
{rows}

Injections (target runs only; see `injected` in MANIFEST.json): a fault is a wrapper installed
on `torch.<api>` before msprobe is imported, so msprobe hooks it like the real function and
dumps the call's true inputs and the faulty output; the fault itself uses
`torch._C._VariableFunctions`, which msprobe does not hook, so both runs dump the same calls.

Definitions used for the truths in MANIFEST.json (all in dump.json order, per rank and step):
* a tensor is anomalous when it holds NaN or ±inf (tensor task: read from its `.pt`; statistics
  task: a non-finite Max, Min, Mean or Norm) — except a **statistics note**: Max and Min finite
  while Mean or Norm is not, for an fp16/bf16 tensor (msprobe computes the statistics in the
  tensor's dtype, so the fp16 Norm of a finite tensor can overflow). In a tensor task a non-finite
  statistic of a finite tensor is a note too;
* `first_anomaly`: the first anomalous tensor; `birth`: the first call (parameters_grad entries
  excluded) with an anomalous output and no anomalous input (inputs = input_args, input_kwargs,
  parameters; backward: input). The `nan` runs are L1 and mix only: the NaN is born in
  `torch.log`, which is no module, and stays out of the backward pass (log's gradient at a
  negative input is finite), so an L0 dump would show nothing;
* pairs: `first_divergent` is the first call with any tensor not bit-equal between golden and
  target (NaN equal to NaN; statistics task: the four statistics, md5: the CRC), with its
  `evidence`: "a parameter differs" (a Module's `parameters` entry), "inputs match, output
  differs", "an input no dumped call produced differs" (an input equal to no earlier output of
  the golden dump: a weight passed to an API at L1, or data between two L0 modules), or "an input
  differs" (`differing_inputs[].produced_by` names the earlier call). `origin` is the first
  forward call whose evidence is "a parameter differs" or "inputs match, output differs" (null
  when none: at L1 a nudged weight is an input of `Functional.linear`).
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="output directory")
    ap.add_argument("--bench-pair", type=Path, help="write the benchmark pair into this directory")
    ap.add_argument("--bench-mb", type=float, default=200.0, help="minimum MB of each side (bench pair)")
    ap.add_argument("--jobs", type=int, default=2, help="dumps run at once (default 2)")
    args = ap.parse_args(argv)
    if args.bench_pair:
        return bench_pair(args.bench_pair, args.bench_mb)
    if not args.out:
        ap.error("--out is required")
    out = args.out.resolve()
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists():
        sys.exit(f"gen_msprobe_fixtures.py: refusing to replace {out}: not empty and has no {MARKER}")
    if out.exists():
        shutil.rmtree(out)
    (out / "logs").mkdir(parents=True)
    (out / MARKER).write_text("")
    t0 = time.time()

    specs = []
    for spec in sorted(RUNS, key=lambda x: -x["world"]):  # the two-process runs first
        root = out / spec["name"]
        root.mkdir(parents=True)
        specs.append(dict(spec, dump_path=str(root), cfg_path=str(root / "config.json"),
                          log=str(out / "logs" / (spec["name"].replace("/", "__") + ".log"))))
    run_dumps(specs, max(1, args.jobs))

    runs = {spec["name"]: describe_run(out, spec) for spec in RUNS}
    pairs = []
    with open(out / "logs" / "compare.log", "w") as log:
        for name, golden, target in PAIRS:
            g, t = runs[golden], runs[target]
            rec = {"name": name, "golden": golden, "target": target, "task": g["task"], "level": g["level"],
                   "summary_mode": g["summary_mode"], "injected": t["injected"], "dumps": []}
            for gd, td in zip(g["dumps"], t["dumps"]):
                assert (gd["step"], gd["rank"]) == (td["step"], td["rank"]), (gd, td)
                where = f"step{gd['step']}" + (f"_rank{gd['rank']}" if gd["rank"] is not None else "")
                cdir = out / "compare" / name / where
                csv_path, rows = msprobe_compare(out / td["dir"] / "dump.json", out / gd["dir"] / "dump.json",
                                                 cdir, log)
                rec["dumps"].append(dict(
                    {"step": gd["step"], "rank": gd["rank"], "golden_dir": gd["dir"], "target_dir": td["dir"],
                     "compare_csv": str(csv_path.relative_to(out)),
                     "compare_json": str((cdir / "compare_result.json").relative_to(out)),
                     "compare_rows": len(rows)},
                    **divergence_truth(out / gd["dir"], out / td["dir"], g["task"])))
            pairs.append(rec)
    check_expectations(runs, pairs)

    import torch
    manifest = {
        "generator": "scripts/gen_msprobe_fixtures.py",
        "msprobe_version": msprobe_version(), "torch_version": torch.__version__,
        "notes": {
            "fp16_norm": "msprobe 26.2.0 computes Max/Min/Mean/Norm in the tensor's dtype (torch.max, "
                         "torch.min, torch.mean, torch.norm; config precision 'low', the default), so "
                         "fp16_norm/* shows Norm = Infinity with finite Max and Min",
            "paths": "single-process dumps are msprobe's step{N}/proc{pid}/ (pid changes per run); "
                     "two-process dumps are step{N}/rank{R}/",
        },
        "runs": list(runs.values()), "pairs": pairs,
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    rows = []
    for spec in RUNS:
        inj = spec["inject"]
        how = inj["what"] if inj else "golden"
        if spec["model"] == "fp16":
            how = ("fp16 chain torch.mul(x, 8) → torch.add(·, 1) → torch.mul(·, 40) → torch.neg on x ≈ 300 "
                   "(64×64): the Norm of the first two outputs overflows fp16 (notes), the third output "
                   "overflows for real (+inf), torch.neg makes it -inf")
        extra = f", {spec['world']} ranks (gloo), {spec['steps']} steps" if spec["world"] > 1 else ""
        mode = f" ({spec['summary_mode']})" if spec["summary_mode"] else ""
        rows.append(f"| `{spec['name']}` | {spec['task']}{mode} | {spec['level']} | {how}{extra} |")
    (out / "README.md").write_text(README.format(version=msprobe_version(), torch=torch.__version__,
                                                 seed=SEED, rows="\n".join(rows)))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"msprobe fixtures: {len(RUNS)} runs, {len(PAIRS)} pairs, {size / 1e6:.1f} MB, "
          f"{time.time() - t0:.0f} s, mindstudio-probe {msprobe_version()}")
    return 0


def bench_pair(out: Path, min_mb: float) -> int:
    """golden/ and target/: the same 12-layer model (d 256), tensor task, L1, one training step;
    the target's torch.relu call 5 (blocks.5) perturbed. The batch is chosen so that each side
    holds >= min_mb MB (one L1 step writes about 32 batch x d fp32 tensors per layer plus the
    weights twice); a side found smaller is written again with a larger batch."""
    out = out.resolve()
    layers, d_model = 12, 256
    weights = layers * 2 * (4 * d_model * d_model) * 4
    batch = max(8, math.ceil((min_mb * 1e6 - weights) / (layers * 32 * d_model * 4)))
    inject = dict(KERNEL, call_index=5, call="Torch.relu.5.forward")
    for _ in range(4):
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        specs = [{"name": side, "task": "tensor", "level": "L1", "inject": inj, "summary_mode": None,
                  "model": "mlp", "world": 1, "steps": 1, "layers": layers, "d_model": d_model,
                  "batch": batch, "dump_path": str(out / side), "cfg_path": str(out / f"{side}.config.json"),
                  "log": str(out / f"{side}.log")}
                 for side, inj in (("golden", None), ("target", inject))]
        run_dumps(specs, 2)
        sizes = {side: sum(p.stat().st_size for p in (out / side).rglob("*") if p.is_file())
                 for side in ("golden", "target")}
        if min(sizes.values()) >= min_mb * 1e6:
            break
        batch = math.ceil(batch * min_mb * 1e6 / min(sizes.values()) * 1.05)
    (out / "BENCH_PAIR.json").write_text(json.dumps(
        {"layers": layers, "d_model": d_model, "batch": batch, "bytes": sizes,
         "files": {side: sum(1 for _ in (out / side).rglob("*.pt")) for side in sizes},
         "dump_json": {side: str(next((out / side).glob("step0/*/dump.json"))) for side in sizes},
         "injected": inject, "msprobe_version": msprobe_version()}, indent=1) + "\n")
    print(f"bench pair: batch {batch}, golden {sizes['golden'] / 1e6:.0f} MB, "
          f"target {sizes['target'] / 1e6:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
