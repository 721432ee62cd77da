# TEST DOUBLE — tests only, never shipped with npgx.
#
# This file (run at every Python start with this folder on PYTHONPATH) installs the fake
# `npugraph_ex` module only, without importing torch; the backend itself is
# npgx_test_double_backend.py, which torch loads through the entry point of
# npgx_test_double-0.0.0.dist-info (group torch_dynamo_backends) the first time a script asks
# torch.compile for "npugraph_ex" — so processes that never compile (eager steps, probes) do not
# pay for importing torch._dynamo.
#
# Provides a fake "npugraph_ex" torch.compile backend that runs on CPU, so that the npgx triage
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
    import types

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
    _module.DEFAULTS = _DEFAULTS
    sys.modules["npugraph_ex"] = _module
