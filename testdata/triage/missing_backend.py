import torch


def build(model):
    # a factory function: the compile call lives here
    return torch.compile(model, backend="npugraph_ex", dynamic=False, options={"static_kernel_compile": True})


model = build(torch.nn.Linear(4, 4))
print(model(torch.randn(2, 4)).shape)
