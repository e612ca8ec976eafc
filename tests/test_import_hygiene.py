"""The core must never import Textual: it runs headless (CLI, CI, the agent loop) and stays testable alone."""

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
