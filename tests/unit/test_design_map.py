"""docs/design.md's module map names every package of harness, and only those: a new
package without a row, or a row left behind by a moved one, fails here."""

from __future__ import annotations

import re
from pathlib import Path

import harness
from tests.paths import ROOT

DESIGN = ROOT / "docs" / "design.md"


def _packages() -> set[str]:
    package = Path(harness.__file__).resolve().parent
    return {".".join(("harness", *init.parent.relative_to(package).parts))
            for init in package.rglob("__init__.py")}


def _mapped() -> set[str]:
    text = DESIGN.read_text(encoding="utf-8")
    section = text.split("### Module map", 1)[1].split("\nHow the shape is kept:", 1)[0]
    return set(re.findall(r"^\| `(harness[\w.]*)` \|", section, flags=re.M))


def test_every_package_has_a_row() -> None:
    assert sorted(_packages() - _mapped()) == []


def test_every_row_is_a_package() -> None:
    assert sorted(_mapped() - _packages()) == []
    assert len(_mapped()) >= 20
