import torch


def step(x):
    y = x * 2
    torch._dynamo.graph_break()  # a no-op in eager, a graph break under torch.compile
    return y + 1


compiled = torch.compile(
    step,
    backend="npugraph_ex",  # the backend under triage
    fullgraph=True,
)
print(compiled(torch.ones(3)))
