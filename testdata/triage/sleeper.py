import subprocess
import sys
import time

# The child is in npgx's process group for the step: it must be stopped with the step.
child = subprocess.Popen(["sleep", "120"])
with open(sys.argv[1], "w") as f:
    f.write(str(child.pid))
print("child started", flush=True)


def f(x):
    return x


if False:  # never runs: gives the triage a compile call to edit
    import torch

    f = torch.compile(f, backend="npugraph_ex")

time.sleep(120)
