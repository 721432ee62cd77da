"""Written by `npgx triage bisect` (node search) next to each node run's script.

Wraps the "npugraph_ex" torch.compile backend. Every FX graph Dynamo hands over gets an id in
the order the backend is called (0, 1, ... : graph breaks and recompiles each add one); its
computing nodes (call_function, call_method, call_module) are numbered in graph order. The plan
(npgx_nodes_plan.json next to this file) says, per graph id, which node numbers the real backend
compiles; the graph is split at node boundaries (torch.fx split_module) into runs of chosen and
other nodes, each chosen run is compiled by the real backend with the call's own options, the
other runs stay eager. A graph whose nodes are all chosen is handed to the real backend as it
is (exactly step 5); a graph with none chosen runs eagerly.

Every graph is described into npgx_nodes_graphs.json (rewritten after each graph, before
compiling, so a crash still leaves the table): per node its name, target, input shapes, dtypes
and strides from the node meta, the innermost frame of its stack trace outside torch, and the
call as a Python expression over its tensor inputs T[i] and its target F (the single-op repro).
"""
import inspect
import json
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_PLAN = os.path.join(_HERE, "npgx_nodes_plan.json")
_GRAPHS = os.path.join(_HERE, "npgx_nodes_graphs.json")
_BACKEND = "npugraph_ex"
_COMPUTING = ("call_function", "call_method", "call_module")
_graphs = []


def _plan():
    try:
        with open(_PLAN) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"select": {}}


def _save():
    tmp = _GRAPHS + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"graphs": _graphs}, f, indent=1)
    os.replace(tmp, _GRAPHS)


def _example(node):
    return node.meta.get("example_value", node.meta.get("val"))


def _tensor_meta(v):
    import torch

    if not isinstance(v, torch.Tensor):
        return None
    try:
        stride = [int(s) for s in v.stride()]
    except Exception:  # sparse or symbolic beyond hints
        stride = None
    return {
        "shape": [str(s) if not isinstance(s, int) else s for s in v.shape],
        "dtype": str(v.dtype).replace("torch.", ""),
        "stride": stride,
    }


def _frame(node):
    """The innermost frame of the node's stack trace outside torch: (file, line, function, code)."""
    import torch

    text = node.meta.get("stack_trace") or ""
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    lines = text.splitlines()
    best = None
    for i, line in enumerate(lines):
        s = line.strip()
        if not s.startswith('File "'):
            continue
        try:
            path, rest = s[6:].split('", line ', 1)
            num, _, fn = rest.partition(", in ")
            entry = {
                "file": path,
                "line": int(num),
                "function": fn,
                "code": lines[i + 1].strip() if i + 1 < len(lines) else "",
            }
        except ValueError:
            continue
        if not os.path.abspath(path).startswith(torch_dir):
            best = entry
    return best


class _Call:
    """Builds the node's call as a Python expression over T[i] (tensor inputs) and F."""

    def __init__(self):
        self.tensors = []
        self.rebuildable = True

    def expr(self, a):
        import torch
        from torch.fx import Node

        if isinstance(a, Node):
            v = _example(a)
            if isinstance(v, torch.Tensor):
                if a.name not in [t["producer"] for t in self.tensors]:
                    meta = _tensor_meta(v)
                    meta["producer"] = a.name
                    self.tensors.append(meta)
                idx = [t["producer"] for t in self.tensors].index(a.name)
                return "T[%d]" % idx
            if isinstance(v, (int, float, bool)):
                return repr(v)
            try:
                return repr(int(v))  # a SymInt: its hint
            except Exception:
                self.rebuildable = False
                return "None"
        if isinstance(a, (list, tuple)):
            inner = ", ".join(self.expr(x) for x in a)
            if isinstance(a, tuple) or type(a).__name__ == "immutable_list":
                if isinstance(a, tuple) and len(a) == 1:
                    inner += ","
                return ("(%s)" if isinstance(a, tuple) else "[%s]") % inner
            return "[%s]" % inner
        if isinstance(a, dict):
            return "{%s}" % ", ".join("%r: %s" % (k, self.expr(v)) for k, v in a.items())
        if isinstance(a, slice):
            return "slice(%s, %s, %s)" % (self.expr(a.start), self.expr(a.stop), self.expr(a.step))
        if isinstance(a, (torch.dtype, torch.memory_format, torch.layout)):
            return str(a)
        if isinstance(a, torch.device):
            return "DEVICE"
        if a is None or isinstance(a, (bool, int, float, str)):
            return repr(a)
        self.rebuildable = False
        return "None"


def _describe(gid, gm, nodes):
    from torch.fx.node import _get_qualified_name

    out = []
    for i, n in enumerate(nodes):
        call = _Call()
        args = [call.expr(a) for a in n.args]
        args += ["%s=%s" % (k, call.expr(v)) for k, v in n.kwargs.items()]
        if n.op == "call_function":
            try:
                target = _get_qualified_name(n.target)
            except Exception:
                target = str(n.target)
                call.rebuildable = False
            expr = "F(%s)" % ", ".join(args)
        elif n.op == "call_method":
            target = "Tensor." + str(n.target)
            expr = "getattr(%s, %r)(%s)" % (args[0] if args else "None", str(n.target), ", ".join(args[1:]))
        else:
            sub = gm.get_submodule(n.target)
            target = "%s.%s" % (type(sub).__module__, type(sub).__qualname__)
            expr = "F(%s)" % ", ".join(args)
            call.rebuildable = False  # a module's parameters are not recorded
        out.append(
            {
                "index": i,
                "name": n.name,
                "op": n.op,
                "target": target,
                "inputs": call.tensors,
                "output": _tensor_meta(_example(n)),
                "source": _frame(n),
                "call": expr,
                "rebuildable": call.rebuildable,
            }
        )
    return {"graph": gid, "nodes": out}


def _split_compile(real, gm, chosen, nodes, kwargs):
    import torch
    from torch.fx.passes.split_module import split_module

    # Runs of consecutive chosen / other nodes; a get_attr goes with the next computing node.
    flags = {}
    pending = []
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        if n.op in _COMPUTING:
            sel = nodes.index(n) in chosen
            for p in pending:
                flags[p] = sel
            pending = []
            flags[n] = sel
        else:
            pending.append(n)
    for p in pending:
        flags[p] = False
    part, run, prev = {}, -1, None
    for n in gm.graph.nodes:
        if n in flags:
            if flags[n] != prev:
                run, prev = run + 1, flags[n]
            part[n] = run
    runs_chosen = {part[n] for n in part if flags[n]}
    # Keep the FX node names (torch >= 2.1 can): a backend error that names a node ("for node
    # gate") then reads the same in a node run as in step 5, where the graph is whole.
    extra = {}
    if "keep_original_node_name" in inspect.signature(split_module).parameters:
        extra["keep_original_node_name"] = True
    split = split_module(gm, None, lambda n: part[n], **extra)

    class Compiled(torch.nn.Module):
        def __init__(self, fn, single):
            super().__init__()
            self.fn, self.single = fn, single

        def forward(self, *args):
            out = self.fn(*args)
            return out[0] if self.single else out

    for name, sub in list(split.named_children()):
        if not name.startswith("submod_") or int(name[len("submod_"):]) not in runs_chosen:
            continue
        single = False
        for sn in sub.graph.nodes:
            if sn.op == "output" and not isinstance(sn.args[0], tuple):
                sn.args = ((sn.args[0],),)
                single = True
        sub.recompile()
        inputs = [_example(p) for p in sub.graph.nodes if p.op == "placeholder"]
        setattr(split, name, Compiled(real(sub, inputs, **kwargs), single))
    return split


def _wrap(real):
    def npgx_nodes_backend(gm, example_inputs, **kwargs):
        gid = len(_graphs)
        nodes = [n for n in gm.graph.nodes if n.op in _COMPUTING]
        _graphs.append(_describe(gid, gm, nodes))
        _save()
        chosen = set(_plan().get("select", {}).get(str(gid), []))
        if nodes and len(chosen) >= len(nodes):
            return real(gm, example_inputs, **kwargs)
        if not chosen:
            return gm.forward
        return _split_compile(real, gm, chosen, nodes, kwargs)

    return npgx_nodes_backend


def install():
    """Makes torch.compile(backend="npugraph_ex") go through the node splitter."""
    import torch._dynamo.backends.registry as registry

    lookup = registry.lookup_backend

    def lookup_backend(compiler_fn):
        fn = lookup(compiler_fn)
        return _wrap(fn) if compiler_fn == _BACKEND else fn

    registry.lookup_backend = lookup_backend
