import os

import torch

# Deliberately nondeterministic: reseeded from the OS after npgx's seed, so two eager runs differ.
torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
model = torch.nn.Linear(8, 4)
compiled = torch.compile(model, backend="npugraph_ex")
x = torch.randn(3, 8)
for _ in range(2):
    y = compiled(x)
print(y.sum().item())
