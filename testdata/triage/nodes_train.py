"""A training step (forward, backward, gradients out) for the FX node search tests (test double)."""
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Sigmoid(), torch.nn.Linear(8, 4))


def train_step(x):
    loss = torch.tanh(model(x)).sum()
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return grads


compiled = torch.compile(train_step, backend="npugraph_ex", options={"capture_limit": 64})
x = torch.randn(4, 8)
for _ in range(2):
    grads = compiled(x)
print(float(grads[0].sum()))
