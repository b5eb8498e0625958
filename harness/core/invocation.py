"""How the user started the program, so that usage lines and hints name the command as it
was typed: `ring-harness` from the console script, `python -m harness` as a module.

argparse names a program after `sys.argv[0]`'s file name, which for `python -m harness` is
`__main__.py`; so both command lines name theirs with `Program.name`, by the rule
Python 3.14's argparse adopted: a module run with -m is `INTERPRETER -m MODULE`, the
interpreter named as it was started.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Program:
    #: the module `python -m` runs
    module: str
    #: the console script's name ([project.scripts] in pyproject.toml)
    script: str
    #: the name where neither started this process (code calling `main` itself, tests)
    usual: str

    def name(self) -> str:
        """`PYTHON -m MODULE` when this process runs the module with -m, the script's name
        when it runs the console script, else `usual`."""
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        if spec is not None and spec.name in (self.module, f"{self.module}.__main__"):
            return f"{os.path.basename(sys.executable) or 'python'} -m {self.module}"
        started = os.path.basename(sys.argv[0]) if sys.argv else ""
        # A console script on Windows is SCRIPT.exe.
        if spec is None and started.removesuffix(".exe") == self.script:
            return self.script
        return self.usual


HARNESS = Program(module="harness", script="ring-harness", usual="python -m harness")
BENCH_GATE = Program(module="harness.cli.gate", script="ring-bench-gate",
                     usual="ring-bench-gate")
