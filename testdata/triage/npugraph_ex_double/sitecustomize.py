# TEST DOUBLE — tests only, never shipped with npgx.
#
# Registers a fake "npugraph_ex" torch.compile backend that runs on CPU, so that the npgx triage
# integration tests can drive steps 4 and 5 without an Ascend NPU. Active only when the
# environment variable NPGX_TEST_DOUBLE names a behaviour:
#   fail_without_force_eager  graph mode (force_eager off) fails at the first call with a
#                             CANN-style error report, force_eager runs eagerly
#   mismatch                  graph mode returns slightly wrong numbers
#   slow                      graph mode sleeps 50 ms per call
# With the options dump_tensor_data=True and data_dump_dir=DIR it writes every FX node's output as
# DIR/worldsize1_global_rank0/<node>_device_0_<count>.pt, like npugraph_ex's data dump; in
# "mismatch" mode graph mode then perturbs the first computing node's output by 1 % instead of
# the final outputs, so the difference starts there and propagates.
import os
import sys

_MODE = os.environ.get("NPGX_TEST_DOUBLE")

if _MODE:
    import time

    import torch
    from torch._dynamo import register_backend

    _KNOWN_OPTIONS = {
        "force_eager",
        "static_kernel_compile",
        "inplace_pass",
        "dump_tensor_data",
        "data_dump_dir",
    }

    def _dumping(gm, dump_dir, perturb):
        root = os.path.join(dump_dir, "worldsize1_global_rank0")
        os.makedirs(root, exist_ok=True)
        counts = {}

        class Dumper(torch.fx.Interpreter):
            perturbed = False

            def run_node(self, n):
                out = super().run_node(n)
                if perturb and not Dumper.perturbed and n.op in ("call_module", "call_function", "call_method"):
                    if isinstance(out, torch.Tensor) and out.is_floating_point():
                        out = out * (1 + 1e-2)
                        Dumper.perturbed = True
                if isinstance(out, torch.Tensor):
                    k = counts.get(n.name, 0)
                    counts[n.name] = k + 1
                    torch.save(out.detach().clone(), os.path.join(root, f"{n.name}_device_0_{k}.pt"))
                return out

        def run(*args):
            Dumper.perturbed = False
            return Dumper(gm).run(*args)

        return run

    @register_backend(name="npugraph_ex")
    def _npugraph_ex_double(gm, example_inputs, options=None, **kwargs):
        options = dict(options or {})
        for key in options:
            if key not in _KNOWN_OPTIONS:
                raise ValueError(
                    f"Invalid option '{key}'. The 'CompilerConfig' object does not have "
                    f"attribute '{key}'. Supported attributes are: {sorted(_KNOWN_OPTIONS)}"
                )
        dump_dir = options.get("data_dump_dir", "./") if options.get("dump_tensor_data") else None
        if options.get("force_eager"):
            return _dumping(gm, dump_dir, False) if dump_dir else gm.forward
        if dump_dir and _MODE == "mismatch":
            return _dumping(gm, dump_dir, True)

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
            out = gm.forward(*args)
            if _MODE == "mismatch":
                out = [o + 1e-2 if isinstance(o, torch.Tensor) else o for o in out] if isinstance(out, (list, tuple)) else out + 1e-2
            if _MODE == "slow":
                time.sleep(0.05)
            return out

        return graph_mode
