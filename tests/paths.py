"""Where the tests find the checkout, computed once: the test files sit one folder deeper
(tests/unit/, tests/live/, tests/property/) than the shared helpers, so a file that took the
root from its own location would count its parents differently from its neighbours."""

from __future__ import annotations

from pathlib import Path

#: the tests/ folder: the shared helpers, fixtures/ and plugin_demo/
TESTS = Path(__file__).resolve().parent
#: the repository's root (scenarios/, results/, docs/, peers/, .ci/)
ROOT = TESTS.parent
#: test data: format-1 results, the C core's surface, the shipped estimates
FIXTURES = TESTS / "fixtures"
#: the demo plugin tests/unit/test_plugins.py installs
PLUGIN_DEMO = TESTS / "plugin_demo"
#: the groups a test file lives in, by what it needs (docs/guide/where-things-go.md)
GROUPS = ("unit", "live", "property")
