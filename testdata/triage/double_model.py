import torch

# No seed: weights and input differ between processes unless npgx seeds every step alike.
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
compiled = torch.compile(model, backend="npugraph_ex", options={"inplace_pass": False})
x = torch.randn(2, 4)
for _ in range(3):
    y = compiled(x)
print(y.sum().item())
