# TEST DOUBLE — tests only, never shipped with npgx: the backend half of sitecustomize.py (whose
# header documents every behaviour), loaded by torch through the `torch_dynamo_backends` entry
# point of npgx_test_double-0.0.0.dist-info when a script compiles with backend="npugraph_ex".
import os
import sys
import time

import torch

_MODE = os.environ.get("NPGX_TEST_DOUBLE")
if not _MODE:
    from torch._dynamo.exc import InvalidBackend

    # Inactive: as if npugraph_ex were not installed.
    raise InvalidBackend(name="npugraph_ex")

from npugraph_ex import DEFAULTS as _DEFAULTS, CompilerConfig  # noqa: E402 (the fake module)


def _conditions(var, cfg):
    held = []
    for cond in filter(None, os.environ.get(var, "").split(",")):
        key, _, value = cond.partition("=")
        if str(getattr(cfg, key, None)) == value:
            held.append(cond)
    return held

_COMPUTING = ("call_module", "call_function", "call_method")

def _kind(n):
    return str(n.target) if n.op == "call_method" else getattr(n.target, "__name__", str(n.target))

_compiled_kinds = set()

def _refuse(gm):
    nodes = [n for n in gm.graph.nodes if n.op in _COMPUTING]
    kinds = {_kind(n) for n in nodes}
    _compiled_kinds.update(kinds)
    refuse = os.environ.get("NPGX_TEST_DOUBLE_REFUSE")
    if refuse:
        wanted = refuse.split("&")
        held = kinds if len(wanted) == 1 else _compiled_kinds
        if all(w in held for w in wanted):
            message = "npugraph_ex converter failed (test double): cannot lower " + " with ".join(wanted)
            node = next((n for n in nodes if _kind(n) in wanted), None)
            if os.environ.get("NPGX_TEST_DOUBLE_REFUSE_NAMES_NODE") and node is not None:
                message += " for node %s (%r): EZ3003: no supported kernel for [%s] [PID: %d]" % (
                    node.name,
                    node.target,
                    node.name,
                    os.getpid(),
                )
            raise RuntimeError(message)
    at_least = os.environ.get("NPGX_TEST_DOUBLE_REFUSE_NODES_AT_LEAST")
    if at_least and len(nodes) >= int(at_least):
        raise RuntimeError(
            "npugraph_ex capture failed (test double): graph of %s nodes exceeds the stream limit" % at_least
        )

def _dumping(gm, dump_dir, perturb, kind=None):
    root = os.path.join(dump_dir, "worldsize1_global_rank0") if dump_dir else None
    if root:
        os.makedirs(root, exist_ok=True)
    counts = {}

    class Dumper(torch.fx.Interpreter):
        perturbed = False

        def run_node(self, n):
            out = super().run_node(n)
            if kind is not None and n.op in _COMPUTING and _kind(n) == kind:
                if isinstance(out, torch.Tensor) and out.is_floating_point():
                    out = out * (1 + 1e-2)
            if perturb and not Dumper.perturbed and n.op in _COMPUTING:
                if isinstance(out, torch.Tensor) and out.is_floating_point():
                    out = out * (1 + 1e-2)
                    Dumper.perturbed = True
            if root and isinstance(out, torch.Tensor):
                k = counts.get(n.name, 0)
                counts[n.name] = k + 1
                torch.save(out.detach().clone(), os.path.join(root, f"{n.name}_device_0_{k}.pt"))
            return out

    def run(*args):
        Dumper.perturbed = False
        return Dumper(gm).run(*args)

    return run

def _aot(gm, example_inputs, backward_kind):
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    def fw(g, _):
        return make_boxed_func(g.forward)

    def bw(g, _):
        def off(n):
            return n.op == "call_function" and str(n.target).split(".")[1:2] == [backward_kind]

        if not any(off(n) for n in g.graph.nodes):
            return make_boxed_func(g.forward)

        class Off(torch.fx.Interpreter):
            def run_node(self, n):
                out = super().run_node(n)
                return out * (1 + 1e-2) if off(n) else out

        return make_boxed_func(lambda *args: Off(g).run(*args))

    return aot_autograd(fw_compiler=fw, bw_compiler=bw)(gm, example_inputs)

def _off(out):
    if isinstance(out, torch.Tensor):
        return out * (1 + 1e-2)
    if isinstance(out, (list, tuple)):
        return type(out)(_off(o) for o in out)
    return out

def npugraph_ex(gm, example_inputs, options=None, **kwargs):
    cfg = CompilerConfig()
    for key, value in dict(options or {}).items():
        if not hasattr(cfg, key):
            raise ValueError(
                f"Invalid option '{key}'. The 'CompilerConfig' object does not have "
                f"attribute '{key}'. Supported attributes are: {sorted(_DEFAULTS)}"
            )
        setattr(cfg, key, value)
    dump_dir = cfg.data_dump_dir if cfg.dump_tensor_data else None
    if cfg.force_eager:
        return _dumping(gm, dump_dir, False) if dump_dir else gm.forward
    _refuse(gm)
    backward_kind = os.environ.get("NPGX_TEST_DOUBLE_MISCOMPILE_BACKWARD")
    if backward_kind:
        return _aot(gm, example_inputs, backward_kind)
    kind = os.environ.get("NPGX_TEST_DOUBLE_MISCOMPILE")
    if kind and any(n.op in _COMPUTING and _kind(n) == kind for n in gm.graph.nodes):
        return _dumping(gm, dump_dir, False, kind)
    failing = _conditions("NPGX_TEST_DOUBLE_FAIL_WHEN", cfg) if _MODE == "options" else []
    off = _MODE == "mismatch" or (_MODE == "options" and _conditions("NPGX_TEST_DOUBLE_OFF_WHEN", cfg))
    if dump_dir and not failing and _MODE != "fail_without_force_eager":
        return _dumping(gm, dump_dir, bool(off))

    def graph_mode(*args):
        if _MODE == "fail_without_force_eager":
            sys.stderr.write(
                "[ERROR] 2026-01-01-00:00:00 (PID:1, Device:0, RankID:-1) ERR01100 OPS call acl api failed\n"
                "EZ9999: Inner Error!\n"
                "        The error from device(chipId:0, dieId:0), serial number is 7, event wait timeout occurred during task execution.[FUNC:ProcessStarsWaitTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1105]\n"
                "        TraceBack (most recent call last):\n"
                "        rtStreamSynchronize execute failed, reason=[event wait timeout][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]\n"
            )
            sys.stderr.flush()
            raise RuntimeError(
                "NPU function error: call aclnnAdd failed, error code is 507011"
            )
        if failing:
            raise RuntimeError(
                "aclgraph capture failed (test double): " + ", ".join(failing)
            )
        out = gm.forward(*args)
        if _MODE == "mismatch":
            out = [o + 1e-2 if isinstance(o, torch.Tensor) else o for o in out] if isinstance(out, (list, tuple)) else out + 1e-2
        elif off:
            out = _off(out)
        if _MODE == "slow":
            time.sleep(0.05)
        return out

    return graph_mode
