"""The domain core stays importable without frameworks, and without I/O libraries."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ["textual", "fastapi", "sqlmodel", "sqlalchemy", "litellm", "uvicorn", "websockets"]


def test_core_imports_no_framework():
    code = (
        "import sys\n"
        "import grace_arena.core.match, grace_arena.core.packet, grace_arena.core.judge\n"
        "import grace_arena.core.tokenize, grace_arena.core.specs\n"
        f"print([m for m in {FRAMEWORKS!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_cli_help_is_fast_to_import():
    """``grace-arena --help`` must not pull in litellm (about 4 s to import)."""
    code = (
        "import sys\nfrom grace_arena.cli import app\n"
        "print('litellm' in sys.modules, 'textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_every_computing_module_of_the_analysis_is_under_the_import_contract():
    """Only ``sources`` (``load`` from a database) and the package's ``__init__`` may reach
    the record; the contract in pyproject.toml must name every other analysis module, so a
    new one cannot slip out of it."""
    import pkgutil
    import tomllib
    from pathlib import Path

    import grace_arena.analysis as analysis

    config = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    contract = next(
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"].startswith("The analysis computes")
    )
    modules = {f"grace_arena.analysis.{m.name}" for m in pkgutil.iter_modules(analysis.__path__)}
    assert set(contract["source_modules"]) == modules - {"grace_arena.analysis.sources"}
    assert "grace_arena.analysis.sources" in contract["forbidden_modules"]
    assert "grace_arena.io" in contract["forbidden_modules"]


def test_the_import_contracts_hold_and_name_every_module_of_the_server():
    """The contracts in pyproject.toml (the core imports no framework, the server's modules
    are layered with no import circle, ...) are checked by import-linter; every module of
    ``grace_arena.server`` is in the server's layers, so a new one cannot slip out of them."""
    import pkgutil
    import shutil
    import tomllib
    from pathlib import Path

    import grace_arena.server as server

    root = Path(__file__).parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text())
    layers = next(
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"].startswith("The server's modules are layered")
    )
    named = {m.strip() for layer in layers["layers"] for m in layer.split("|")}
    modules = {m.name for m in pkgutil.iter_modules(server.__path__)}
    assert named == modules
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter is a development dependency"
    out = subprocess.run([lint], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def _import_cycles(graph) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of more than one
    module (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            for other in imported:
                if other not in index:
                    index[other] = low[other] = len(index)
                    stack.append(other)
                    on_stack.add(other)
                    work.append(
                        (other, iter(sorted(graph.find_modules_directly_imported_by(other))))
                    )
                    break
                if other in on_stack:
                    low[module] = min(low[module], index[other])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return cycles


def test_the_import_cycle_finder_finds_a_circle_and_only_circles():
    import grimp

    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")]:
        graph.add_import(importer=importer, imported=imported)
    assert _import_cycles(graph) == [["p.a", "p.b", "p.c"]]
    graph.remove_import(importer="p.c", imported="p.a")
    assert _import_cycles(graph) == []


def test_no_module_of_the_project_imports_itself_through_others():
    """No import circle between the modules of the project's packages, counting the imports
    made inside functions and under ``TYPE_CHECKING`` (grimp reads every import statement): a
    circle is two modules that can only be understood, and changed, together."""
    import grimp

    graph = grimp.build_graph("grace_arena", "moderator_tui", "buzzer_client")
    assert "grace_arena.core.standings" in graph.modules
    assert _import_cycles(graph) == []


def test_every_package_of_the_project_is_in_the_packages_layers():
    """The layers contract in pyproject.toml names every package and module of grace_arena, and
    the TUI and the phones' pages, so that a new one cannot slip out of it; the TUI's own
    contract covers all of moderator_tui."""
    import pkgutil
    import tomllib
    from pathlib import Path

    import grace_arena

    config = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    importlinter = config["tool"]["importlinter"]
    layers = next(
        c for c in importlinter["contracts"] if c["name"].startswith("The packages are layered")
    )
    named = {m.strip() for layer in layers["layers"] for m in layer.split("|")}
    modules = {f"grace_arena.{m.name}" for m in pkgutil.iter_modules(grace_arena.__path__)}
    assert named == modules | {"moderator_tui", "buzzer_client"}
    assert {"moderator_tui", "buzzer_client"} <= set(importlinter["root_packages"])
    tui = next(c for c in importlinter["contracts"] if c["name"].startswith("The moderator's TUI"))
    assert tui["source_modules"] == ["moderator_tui"]
    assert {"grace_arena.server", "grace_arena.record"} <= set(tui["forbidden_modules"])
