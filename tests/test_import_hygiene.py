"""The core must never import Textual: it runs headless (CLI, CI, the agent loop) and stays testable alone."""

import os
import subprocess
import sys


def test_core_does_not_import_textual():
    code = (
        "import importlib, pkgutil, sys, inspector.core as core\n"
        "for m in pkgutil.walk_packages(core.__path__, 'inspector.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "import inspector.cli\n"
        "bad = sorted(n for n in sys.modules if n == 'textual' or n.startswith('textual.'))\n"
        "print(len(bad)); assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"


def test_no_module_imports_itself_back():
    """No import cycles in the package, counting every import (a function's own and a type checker's too): modules
    that import each other are one module split in two, or a layer that reaches back up. Each cycle found is
    printed as the modules it runs through."""
    import ast
    from pathlib import Path

    root = Path(__file__).parent.parent / "inspector"
    modules = {}
    for path in root.rglob("*.py"):
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("inspector"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    target = full if full in modules else resolve(node.module or "")
                    if target and target != name:
                        graph[name].add(target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    target = resolve(alias.name) if alias.name.startswith("inspector") else None
                    if target and target != name:
                        graph[name].add(target)
    # a package's __init__ re-exporting its submodules is no cycle of theirs
    for name in graph:
        graph[name] = {t for t in graph[name] if not (t.startswith(name + ".") and modules[name].name == "__init__.py")}

    cycles, index, low, stack, on, counter = [], {}, {}, [], set(), [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles, cycles


OTHER_LOADERS = ("codex", "conversations", "neutral", "gemini", "qwen", "opencode", "copilot", "kimi", "cline_sdk",
                 "cline_task", "agent_stores")


def test_the_status_line_imports_only_what_it_needs(tmp_path):
    """Claude Code starts `statusline` after every turn, so what it imports is its start-up time: not the
    compaction engine, the figures package, the report writer or Textual (each package's `__init__` imports all
    of it; ~30 ms together), nor any other agent's loader (reading a Claude Code transcript needs only its own)."""
    from pathlib import Path

    session = Path(__file__).parent / "corpus" / "claude-code-manual-compact.jsonl"
    code = (
        "import sys\n"
        "from inspector.cli import main\n"
        f"assert main(['statusline', '--session', {str(session)!r}]) == 0\n"
        "heavy = ('inspector.core.compaction', 'inspector.core.figures', 'inspector.core.report', 'textual',\n"
        f"         *('inspector.core.formats.' + n for n in {OTHER_LOADERS!r}))\n"
        "bad = sorted(n for n in sys.modules if n in heavy or n.startswith(tuple(h + '.' for h in heavy)))\n"
        "print(len(bad), bad, file=sys.stderr); assert not bad, bad\n"
    )
    env = {**os.environ, "CONTEXT_INSPECTOR_CACHE": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert "%" in result.stdout  # its line, the percent of the window used


def test_no_docstring_holds_a_lone_surrogate():
    """A docstring that holds a lone surrogate (a "\\ud83d" escape in a string that is not raw) stops the module's
    import from Python 3.13 on, which cleans docstrings as UTF-8 when it compiles them: write such an escape as text."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).parent.parent / "inspector"
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc and re.search("[\ud800-\udfff]", doc):
                    found.append(f"{path.relative_to(root.parent)}: {getattr(node, 'name', 'the module')}")
    assert not found, found
