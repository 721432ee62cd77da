import torch


def step(x):
    y = x * 2
    print("host-side print inside the compiled region")  # graph break
    return y + 1


compiled = torch.compile(
    step,
    backend="npugraph_ex",  # the backend under triage
    fullgraph=True,
)
print(compiled(torch.ones(3)))
