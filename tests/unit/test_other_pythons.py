""".ci/other-pythons.sh stays true to the suite and the package: every test file its fast
part lists exists, and the Pythons it tests are those tox lists beside 3.11."""

from __future__ import annotations

import configparser
import re

from tests.paths import ROOT

SCRIPT = (ROOT / ".ci" / "other-pythons.sh").read_text(encoding="utf-8")


def test_every_listed_test_file_exists() -> None:
    """A renamed or removed test file fails here, not silently in the script's pytest run."""
    listed = re.findall(r"tests/(?:unit|live|property)/test_\w+\.py", SCRIPT)
    assert len(listed) > 30
    assert [name for name in listed if not (ROOT / name).is_file()] == []


def test_the_versions_match_tox() -> None:
    """The script's versions are tox's py3XX environments other than py311."""
    versions = re.search(r"^VERSIONS=\(([^)]*)\)", SCRIPT, re.MULTILINE)
    assert versions is not None
    tox = configparser.ConfigParser()
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    envs = [e.strip() for e in tox["tox"]["env_list"].split(",")]
    listed = [f"py{v.replace('.', '')}" for v in versions.group(1).split()]
    assert [e for e in envs if re.fullmatch(r"py3\d+", e)] == ["py311", *listed]
