import os

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
# Data dumps go into the step directory npgx made for this run (the parent of its plog directory).
step_dir = os.path.dirname(os.environ.get("ASCEND_PROCESS_LOG_PATH", "./ascend_plog"))
compiled = torch.compile(
    model,
    backend="npugraph_ex",
    options={"dump_tensor_data": True, "data_dump_dir": step_dir},
)
x = torch.randn(2, 4)
y = compiled(x)
print(y.sum().item())
