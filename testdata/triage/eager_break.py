import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.proj(x)


model = Net()
compiled = torch.compile(model, backend="npugraph_ex", options={"static_kernel_compile": True})
# the input has the wrong width: this fails already in eager
print(compiled(torch.randn(2, 5)))
