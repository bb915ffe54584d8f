"""The project's Python packages import in one direction, and no module imports itself back
through others (docs/architecture.md, "Python packages").

Every import is read from the source, those inside functions as well as those at the top of a
module, so an import put inside a function to hide a circle is found too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADAPTER_DIR = ROOT / "adapters" / "dbt-spark-embedded"
ADAPTER = "dbt.adapters.spark_embedded"
ADAPTER_API = f"{ADAPTER}.api"
# From the bottom up: a package may import its own modules and the packages of lower layers,
# never a package of its own layer or of a higher one.
LAYERS = (
    ("cdc_registry",),
    ("python_ingest", "cdc_tools", "cdc_cluster"),
    ("cdc_pipeline",),
    ("cdc_cli",),
    ("benchmarks",),
)
# `python -m python_ingest` is the contract's command: its entry point runs the CLI above it.
ENTRY_POINTS = {"python_ingest.__main__"}


def module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules(root: Path = ROOT, adapter_dir: Path = ADAPTER_DIR) -> dict[str, Path]:
    """Module name -> file, for every package of LAYERS and every module of the adapter."""
    found = {}
    for layer in LAYERS:
        for package in layer:
            for path in sorted((root / package).rglob("*.py")):
                if any(part.startswith(".") for part in path.relative_to(root).parts):
                    continue  # a virtual environment inside (benchmarks/peer/.venv), not the project's
                found[module_name(path, root)] = path
    for path in sorted((adapter_dir / "dbt" / "adapters" / "spark_embedded").rglob("*.py")):
        found[module_name(path, adapter_dir)] = path
    return found


def imports_of(module: str, path: Path, known: Iterable[str]) -> set[str]:
    """The known modules that `module` imports anywhere in its source."""
    known = set(known)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in known:  # `import a.b.c` of a known `a.b`
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
    return targets


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def package_of(module: str) -> str:
    return ADAPTER if module.startswith(ADAPTER) else module.split(".")[0]


def layer_of(package: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if package in layer), None)


def wrong_directions(graph: Mapping[str, set[str]]) -> list[str]:
    """Each import that runs sideways or back up, or into the adapter past its public API."""
    wrong = []
    for module, targets in sorted(graph.items()):
        if module in ENTRY_POINTS:
            continue
        package = package_of(module)
        for target in sorted(targets):
            other = package_of(target)
            if other == package:
                continue
            if package == ADAPTER:
                wrong.append(f"{module} -> {target}: the adapter imports nothing of the project")
            elif other == ADAPTER:
                if target != ADAPTER_API:
                    wrong.append(f"{module} -> {target}: past the adapter's public API ({ADAPTER_API})")
            elif layer_of(other) >= layer_of(package):
                wrong.append(f"{module} -> {target}: {other} is not below {package}")
    return wrong


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(project_modules())


def test_the_reader_sees_imports_inside_functions(graph: dict[str, set[str]]) -> None:
    # `land` imports the landing of files only when it runs (cdc_cli/land.py, _land_files).
    assert "python_ingest.sources" in graph["cdc_cli.land"]
    assert ADAPTER_API in graph["cdc_cli.land"]


def test_no_import_runs_sideways_or_back_up(graph: dict[str, set[str]]) -> None:
    assert wrong_directions(graph) == []


def test_no_circle_of_imports(graph: dict[str, set[str]]) -> None:
    assert circles(graph) == []


def test_the_checks_find_a_circle_and_an_import_back_up(tmp_path: Path) -> None:
    """The checks themselves, on a small tree that breaks both rules."""
    for package, source in {
        "cdc_registry/__init__.py": "def read():\n    from python_ingest import land\n",
        "python_ingest/__init__.py": "",
        "python_ingest/land.py": "from python_ingest.bronze import TABLE\n",
        "python_ingest/bronze.py": "def table():\n    from . import land\n",
        "cdc_tools/__init__.py": "from dbt.adapters.spark_embedded.jars import jar_paths\n",
    }.items():
        (tmp_path / package).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / package).write_text(source, encoding="utf-8")
    for package in ("cdc_cluster", "cdc_pipeline", "cdc_cli", "benchmarks"):
        (tmp_path / package).mkdir()
    adapter = tmp_path / "adapter" / "dbt" / "adapters" / "spark_embedded"
    adapter.mkdir(parents=True)
    (adapter / "jars.py").write_text("import cdc_registry\n", encoding="utf-8")
    graph = import_graph(project_modules(tmp_path, tmp_path / "adapter"))
    assert circles(graph) == [["python_ingest.bronze", "python_ingest.land"]]
    assert wrong_directions(graph) == [
        "cdc_registry -> python_ingest.land: python_ingest is not below cdc_registry",
        "cdc_tools -> dbt.adapters.spark_embedded.jars: past the adapter's public API "
        "(dbt.adapters.spark_embedded.api)",
        "dbt.adapters.spark_embedded.jars -> cdc_registry: the adapter imports nothing of the project",
    ]
