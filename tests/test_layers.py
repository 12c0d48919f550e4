"""The import rules that keep the layers pointing one way, checked on the source.

From the bottom: `wire` (the API's models) and `db` (connections, schema, models) know
nothing above them; `stores` hold the SQL and Redis commands; `services` hold the rules;
`api` and `mcp` sit side by side over the services; `server` composes them.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "hindsight"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    path = SRC / Path(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Line numbers of imports under `if TYPE_CHECKING:`: they never run."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        lines.add(sub.lineno)
    return lines


def imports_of(path: Path) -> Iterator[tuple[str, bool]]:
    """(module imported, whether at module level) for every import that runs."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_only(tree)
    top_level = {id(node) for node in tree.body}
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or node.lineno in skip:
            continue
        at_top = id(node) in top_level
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, at_top
            continue
        base = node.module or ""
        if node.level:
            anchor = package[: len(package) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            # `from hindsight import limits` imports the module hindsight.limits
            candidate = f"{base}.{alias.name}"
            yield (candidate if _is_module(candidate) else base), at_top


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        edges[name] = {target for target, _ in imports_of(path)}
    return edges


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _offences(layer: str, allowed: set[str]) -> list[str]:
    found = []
    for module, targets in graph().items():
        if _layer(module) != layer:
            continue
        for target in sorted(targets):
            if target.startswith("hindsight.") and _layer(target) not in allowed | {layer}:
                found.append(f"{module} imports {target}")
    return found


def test_wire_imports_only_pydantic_limits_and_itself() -> None:
    stdlib = sys.stdlib_module_names
    found = []
    modules = sorted((PACKAGE / "wire").rglob("*.py"))
    assert len(modules) > 1, "the wire models are missing"
    for path in modules:
        for target, _ in imports_of(path):
            top = target.split(".")[0]
            if top in stdlib or top == "pydantic" or target == "__future__":
                continue
            if target == "hindsight.limits" or target.startswith("hindsight.wire"):
                continue
            found.append(f"{_module_name(path)} imports {target}")
    assert not found, "\n".join(found)


def test_db_imports_nothing_above_it() -> None:
    # below db: the settings, the error types, ids and plain text helpers
    assert not _offences("db", {"config", "errors", "limits", "ids", "text"}), "\n".join(
        _offences("db", {"config", "errors", "limits", "ids", "text"})
    )


def test_services_never_import_the_transports() -> None:
    found = [
        line for line in _offences("services", set(_all_layers()) - {"api", "mcp", "cli", "server"})
    ]
    assert not found, "\n".join(found)


def test_stores_never_import_services_or_transports() -> None:
    allowed = set(_all_layers()) - {"api", "mcp", "cli", "server", "services", "client"}
    found = _offences("stores", allowed)
    assert not found, "\n".join(found)


def test_api_and_mcp_are_siblings() -> None:
    found = _offences("api", set(_all_layers()) - {"mcp", "cli", "server"})
    found += _offences("mcp", set(_all_layers()) - {"api", "cli", "server"})
    assert not found, "\n".join(found)


def test_routes_and_tools_reach_the_stores_only_through_services() -> None:
    found = _offences("api", set(_all_layers()) - {"db", "stores", "mcp", "cli", "server"})
    found += _offences("mcp", set(_all_layers()) - {"db", "stores", "api", "cli", "server"})
    assert not found, "\n".join(found)


def test_model_providers_know_no_database() -> None:
    found = []
    for layer in ("embeddings", "llm", "rerank"):
        found += _offences(layer, set(_all_layers()) - {"db", "stores", "services", "api", "mcp"})
    assert not found, "\n".join(found)


def _all_layers() -> set[str]:
    return {_layer(module) for module in graph()}


def test_no_import_cycles() -> None:
    edges = {
        module: {t for t in targets if t.startswith("hindsight")}
        for module, targets in graph().items()
    }
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(edges.get(module, ())):
            # importing a package runs its __init__, which is the package's own module
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module)
    assert not cycles, "\n".join(" -> ".join(cycle) for cycle in cycles)
