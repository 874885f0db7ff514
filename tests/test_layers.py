"""The package reads bottom to top, and every import points down (or sideways, without a circle).

Layers, bottom to top: the maths and the data every experiment is configured from (``cldiv.config``,
``sphere``, ``losses``, ``metrics``, ``published`` numbers, ``budgets``); the machinery every experiment
shares (``cldiv.runs``); the experiments (``cldiv.theory``, ``cldiv.synthetic``, ``cldiv.images``); the
book (``cldiv.book``).
Imports are read from the source with ``ast``, at module level and inside functions alike.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "cldiv"

#: Module-name prefixes of each layer, bottom (0) to top; the longest matching prefix decides. Any other
#: subpackage of cldiv is an experiment (layer 2): a new experiment needs no entry here.
LAYERS = {
    "cldiv": 0, "cldiv.config": 0, "cldiv.sphere": 0, "cldiv.losses": 0, "cldiv.metrics": 0, "cldiv.published": 0,
    "cldiv.budgets": 0,
    "cldiv.runs": 1,
    "cldiv.book": 3,
}
EXPERIMENT_LAYER = 2
LAYER_NAMES = ("maths and data", "run machinery", "experiments", "book")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    """The layer of ``module``: its longest prefix in LAYERS; a module in any other subpackage of cldiv
    is an experiment's; a top-level module of cldiv not in LAYERS has no layer (an error)."""
    if module in LAYERS:
        return LAYERS[module]
    parts = module.split(".")
    if len(parts) > 2 and ".".join(parts[:2]) in LAYERS:
        return LAYERS[".".join(parts[:2])]
    if len(parts) >= 2 and (PACKAGE / parts[1]).is_dir():
        return EXPERIMENT_LAYER
    raise AssertionError(f"{module} is in no layer: add it to tests/test_layers.py LAYERS")


def imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported cldiv module, line, inside a function) for every import of ``module``."""
    tree = ast.parse(MODULES[module].read_text())
    inside = {id(sub) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              for sub in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # "from cldiv.book import chapters" imports the module cldiv.book.chapters
            targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                       for a in node.names]
        else:
            continue
        found += [(t, node.lineno, id(node) in inside) for t in targets if t == "cldiv" or t.startswith("cldiv.")]
    return found


GRAPH = {module: {target for target, _, _ in imports(module) if target != module} for module in MODULES}


def test_every_module_has_a_layer():
    for module in MODULES:
        layer(module)
    assert [layer(m) for m in ("cldiv.sphere", "cldiv.runs.store", "cldiv.images.simclr", "cldiv.book.cli")] == [0, 1, 2, 3]
    assert layer("cldiv.theory") == layer("cldiv.synthetic.train") == EXPERIMENT_LAYER


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_runs_up_the_layers(module):
    for target, line, _ in imports(module):
        assert layer(target) <= layer(module), (
            f"{module} ({LAYER_NAMES[layer(module)]}) imports {target} ({LAYER_NAMES[layer(target)]}) "
            f"at line {line}: an import from a lower layer to a higher one")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_cldiv_import_inside_a_function(module):
    inner = [f"{target} (line {line})" for target, line, inside in imports(module) if inside]
    assert not inner, f"{module} imports cldiv modules inside functions: {', '.join(inner)}"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_a_constructed_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle():
    found = circles(GRAPH)
    assert not found, "import circles: " + "; ".join(
        " <-> ".join(component) + ": " + ", ".join(f"{a} -> {b}" for a in component for b in sorted(GRAPH[a] & set(component)))
        for component in found)
