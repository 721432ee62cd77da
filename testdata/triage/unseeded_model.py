import torch

# No seed: weights and input differ between processes unless npgx seeds every step alike.
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 4))
compiled = torch.compile(model, backend="npugraph_ex")
x = torch.randn(3, 8)
for _ in range(2):
    y = compiled(x)
print(y.sum().item())
