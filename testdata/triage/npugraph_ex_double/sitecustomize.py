# TEST DOUBLE — tests only, never shipped with npgx.
#
# Registers a fake "npugraph_ex" torch.compile backend that runs on CPU, so that the npgx triage
# integration tests can drive steps 4 and 5 without an Ascend NPU. Active only when the
# environment variable NPGX_TEST_DOUBLE names a behaviour:
#   fail_without_force_eager  graph mode (force_eager off) fails at the first call with a
#                             CANN-style error report, force_eager runs eagerly
#   mismatch                  graph mode returns slightly wrong numbers
#   slow                      graph mode sleeps 50 ms per call
import os
import sys

_MODE = os.environ.get("NPGX_TEST_DOUBLE")

if _MODE:
    import time

    import torch
    from torch._dynamo import register_backend

    _KNOWN_OPTIONS = {"force_eager", "static_kernel_compile", "inplace_pass"}

    @register_backend(name="npugraph_ex")
    def _npugraph_ex_double(gm, example_inputs, options=None, **kwargs):
        options = dict(options or {})
        for key in options:
            if key not in _KNOWN_OPTIONS:
                raise ValueError(
                    f"Invalid option '{key}'. The 'CompilerConfig' object does not have "
                    f"attribute '{key}'. Supported attributes are: {sorted(_KNOWN_OPTIONS)}"
                )
        if options.get("force_eager"):
            return gm.forward

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
