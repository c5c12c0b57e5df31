"""The package's import graph: no cycle, layers that only point down, and no
module reaching into another subpackage's private modules.

The graph is read from the source with :mod:`ast` (every ``import``, at module
level or inside a function), so a lazy import counts as much as an eager one.
"""

import ast
from pathlib import Path

import pytest

import sklearn_smallfair

PACKAGE = Path(sklearn_smallfair.__file__).parent
ROOT = "sklearn_smallfair"
#: ``python -m sklearn_smallfair`` runs the command line: the top of the graph.
ENTRY_POINT = f"{ROOT}.__main__"

#: Rank of each subpackage: a module may import only modules of its own
#: subpackage or of a lower rank. The private top-level modules
#: (``_confusion``, ``_validation``, ...) are the bottom layer, rank 0.
LAYERS = {
    "smoothing": 1,
    "datasets": 1,
    "dyadic": 1,
    "adaptive": 1,
    "preprocessing": 2,
    "metrics": 2,
    "stats": 3,
    "model_selection": 3,
    "audit": 4,
    "cli": 5,
}


def _modules():
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


def _graph():
    """Edges ``module -> imported module`` inside the package."""
    mods = _modules()
    graph = {m: set() for m in mods}
    for module, path in mods.items():
        base = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")[: len(base.split(".")) - node.level + 1]
                    package = ".".join(parts + ([node.module] if node.module else []))
                else:
                    package = node.module or ""
                targets = [
                    f"{package}.{a.name}" if f"{package}.{a.name}" in mods else package
                    for a in node.names
                ]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in mods and "." in target:
                    target = target.rpartition(".")[0]
                if target in mods and target != module:
                    graph[module].add(target)
    return graph


def _strongly_connected(graph):
    """Tarjan's strongly connected components of more than one module."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _subpackage(module):
    """The subpackage of a module, or ``None`` for the top-level modules."""
    parts = module.split(".")
    if len(parts) < 2 or not (PACKAGE / parts[1]).is_dir():
        return None
    return parts[1]


def _rank(module):
    if module == ENTRY_POINT:
        return max(LAYERS.values()) + 1
    sub = _subpackage(module)
    return 0 if sub is None else LAYERS[sub]


GRAPH = _graph()


def test_graph_is_read():
    # the reader finds the imports it must find; an empty graph passes vacuously
    assert f"{ROOT}._confusion" in GRAPH[f"{ROOT}.metrics._registry"] or any(
        t.startswith(f"{ROOT}._") for t in GRAPH[f"{ROOT}.metrics._registry"]
    )
    assert sum(len(v) for v in GRAPH.values()) > 100
    assert set(LAYERS) == {
        _subpackage(m) for m in GRAPH if _subpackage(m) is not None
    }, "every subpackage has a layer"


def test_no_import_cycle():
    cycles = _strongly_connected(GRAPH)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_layers_point_down():
    upward = [
        f"{m} (layer {_rank(m)}) imports {t} (layer {_rank(t)})"
        for m, targets in GRAPH.items()
        if m != ROOT
        for t in targets
        if t != ROOT and _subpackage(t) != _subpackage(m) and _rank(t) >= _rank(m)
    ]
    assert not upward, "upward or sideways imports:\n" + "\n".join(sorted(upward))


def test_no_reaching_into_private_modules_of_other_subpackages():
    private = [
        f"{m} imports {t}"
        for m, targets in GRAPH.items()
        for t in targets
        if _subpackage(t) is not None
        and _subpackage(t) != _subpackage(m)
        and any(p.startswith("_") for p in t.split(".")[2:])
    ]
    assert not private, "private imports across subpackages:\n" + "\n".join(
        sorted(private)
    )


def test_the_checks_can_fail():
    cyclic = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _strongly_connected(cyclic) == [["a", "b", "c"]]
    assert _rank(f"{ROOT}.audit._audit") > _rank(f"{ROOT}.metrics._group")
    assert _rank(f"{ROOT}._validation") == 0


@pytest.mark.parametrize("sub", sorted(LAYERS))
def test_bottom_layer_does_not_import_subpackages(sub):
    offenders = [
        f"{m} imports {t}"
        for m, targets in GRAPH.items()
        if _subpackage(m) is None and m not in (ROOT, ENTRY_POINT)
        for t in targets
        if _subpackage(t) == sub
    ]
    assert not offenders, "\n".join(offenders)
