"""Two FX graphs (a graph break between them) for the FX node search tests (test double)."""
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = torch.relu(self.lin(x))
        h = h * 2.0
        torch._dynamo.graph_break()
        s = torch.sigmoid(h)
        s = s + 1.0
        t = torch.tanh(s)
        return t - h


model = Block()
compiled = torch.compile(model, backend="npugraph_ex", options={"capture_limit": 64})
x = torch.randn(4, 8)
with torch.no_grad():
    for _ in range(2):
        y = compiled(x)
print(float(y.sum()))
