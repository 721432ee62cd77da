# TEST DOUBLE — tests only, never shipped with npgx.
#
# Registers a fake "npugraph_ex" torch.compile backend that runs on CPU, so that the npgx triage
# integration tests can drive steps 4 and 5 (and bisect variants) without an Ascend NPU. Active
# only when the environment variable NPGX_TEST_DOUBLE names a behaviour:
#   fail_without_force_eager  graph mode (force_eager off) fails at the first call with a
#                             CANN-style error report, whatever the other options; force_eager
#                             runs eagerly
#   mismatch                  graph mode returns slightly wrong numbers
#   slow                      graph mode sleeps 50 ms per call
#   options                   graph mode reads the options in force (npugraph_ex's defaults
#                             updated by the options given):
#                               NPGX_TEST_DOUBLE_FAIL_WHEN="key=value,..." fails at the first call
#                               when any condition holds (the error names the ones that hold);
#                               NPGX_TEST_DOUBLE_OFF_WHEN="key=value,..." returns numbers off by
#                               1 % when any condition holds;
#                             otherwise graph mode is exactly eager.
# NPGX_TEST_DOUBLE_REJECT="key,..." removes keys from the fake npugraph_ex.CompilerConfig: the
# backend then rejects them like npugraph_ex does (a key the CompilerConfig has no attribute for
# raises ValueError "Invalid option '<k>'. The 'CompilerConfig' object does not have attribute
# '<k>'. Supported attributes are: [...]"), and `import npugraph_ex` shows which keys exist.
# With the options dump_tensor_data=True and data_dump_dir=DIR it writes every FX node's output as
# DIR/worldsize1_global_rank0/<node>_device_0_<count>.pt, like npugraph_ex's data dump (graph mode
# then runs through the dumping interpreter); when graph mode is off ("mismatch", or an OFF_WHEN
# condition) it perturbs the first computing node's output by 1 % instead of the final outputs, so
# the difference starts there and propagates.
# Node-level faults (any mode, graph mode only; a node's kind is its target's name: "sigmoid",
# "mul", "linear", or the method name), for `triage bisect --nodes`:
#   NPGX_TEST_DOUBLE_MISCOMPILE=kind   nodes of that kind return numbers off by 1 %
#   NPGX_TEST_DOUBLE_REFUSE=kind       compiling a graph that holds that kind fails (a converter
#                                      error raised by the backend call); "a&b": fails once the
#                                      graphs compiled by the process hold both kinds (a pair)
#   NPGX_TEST_DOUBLE_REFUSE_NAMES_NODE=1  the converter error names the refused node and its
#                                      target's repr, like torchair's: "... for node s
#                                      (<built-in method sigmoid of type object at 0x7f…>):
#                                      EZ3003: ... [PID: n]" (the address and pid differ in
#                                      every process although the failure is the same)
#   NPGX_TEST_DOUBLE_REFUSE_NODES_AT_LEAST=N  compiling a graph of N or more computing nodes
#                                      fails (only a whole graph shows it)
#   NPGX_TEST_DOUBLE_MISCOMPILE_BACKWARD=kind  graph mode compiles through AOTAutograd and the
#                                      backward graph's nodes of that aten kind
#                                      ("sigmoid_backward") return numbers off by 1 %
import os
import sys

_MODE = os.environ.get("NPGX_TEST_DOUBLE")

if _MODE:
    import time
    import types

    import torch
    from torch._dynamo import register_backend

    # npugraph_ex's CompilerConfig attributes and defaults (spec triage-and-repro.md §2.2).
    _DEFAULTS = {
        "force_eager": False,
        "force_recapture": False,
        "use_graph_pool": None,
        "reuse_graph_pool_in_same_fx": True,
        "capture_limit": 64,
        "clone_input": True,
        "clone_output": False,
        "static_kernel_compile": False,
        "disable_static_kernel_compile_cache": False,
        "frozen_parameter": False,
        "remove_noop_ops": True,
        "remove_cat_ops": True,
        "inplace_pass": True,
        "input_inplace_pass": True,
        "pattern_fusion_pass": True,
        "post_grad_custom_pre_pass": None,
        "post_grad_custom_post_pass": None,
        "dump_tensor_data": False,
        "data_dump_stage": "optimized",
        "data_dump_dir": "./",
        "deadlock_check": False,
        "capture_error_mode": "global",
        "mode": "npugraph_ex",
    }
    for _k in filter(None, os.environ.get("NPGX_TEST_DOUBLE_REJECT", "").split(",")):
        _DEFAULTS.pop(_k, None)

    class CompilerConfig:
        def __init__(self):
            for k, v in _DEFAULTS.items():
                setattr(self, k, v)

    _module = types.ModuleType("npugraph_ex")
    _module.__version__ = "0.0+test-double"
    _module.CompilerConfig = CompilerConfig
    sys.modules["npugraph_ex"] = _module

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

    @register_backend(name="npugraph_ex")
    def _npugraph_ex_double(gm, example_inputs, options=None, **kwargs):
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
