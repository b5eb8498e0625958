"""Pages made from a scenario whose user strings are all hostile, opened in headless
chromium: the run's report, a comparison of it with itself, its plan and its explorer.
A hook installed before any page script records alert, confirm and prompt; after load no
injected script has run (no window.__pwned, no dialog, the title unchanged, no element
with an event-handler attribute or a script link) and each hostile string the page
shows is in its text exactly as written."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.browser import browser, console_errors

pytestmark = pytest.mark.tools("chromium")

DESCRIPTION = ('![x](x" onerror="alert(1)") ![y](y" onerror="window.__pwned=1") '
               "[z](javascript:window.__pwned=2) <img src=x onerror=alert(1)>")
SERVERS = [
    '"><script>window.__pwned=3</script>',
    "</script><script>window.__pwned=4</script>",
    '<img src=x onerror="window.__pwned=5">',
    "<!--<script>document.title='pwned'</script> & \"q\" 'a' &amp; \u2028 |x| `t` **b**",
]
CAPABILITIES = ["<svg onload=window.__pwned=6>", '**b** & "q" | `t` <b>x</b> \u2029']
KEY_NAME = "<img src=x onerror=window.__pwned=7>{i}</script>"
POINT_NAME = "<!--<script>{server}:{j}"
#: the zone every listed server is in, and the server a replication joins
ZONE = "<style>*{display:none}</style>`z` | **z**"
JOIN = '<a href="javascript:window.__pwned=9">join</a> | `j`'
#: the result file's name as compare is given it (its page shows the path)
RESULT_NAME = '"><img src=x onerror=window.__pwned=8>`x`.json'

HOOK = """
window.__dialogs = [];
['alert', 'confirm', 'prompt'].forEach(function (name) {
  window[name] = function (message) { window.__dialogs.push(name + ': ' + message); };
});
"""
INJECTED = """
const handlers = Array.from(document.querySelectorAll('*')).flatMap(function (e) {
  return Array.from(e.attributes).filter(function (a) {
    return a.name.startsWith('on') || /^\\s*javascript:/i.test(a.value); })
    .map(function (a) { return e.tagName + ' ' + a.name; });
});
return {pwned: window.__pwned === undefined ? null : String(window.__pwned),
        dialogs: window.__dialogs, title: document.title, handlers: handlers,
        scripts: document.scripts.length, images: document.images.length,
        text: document.documentElement.textContent};
"""


def _toml(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, for text inside the BMP)."""
    return json.dumps(value)


def _scenario() -> str:
    servers = "".join(
        f"[[servers.list]]\nname = {_toml(name)}\nweight = {1 + (i == 3)}\n"
        f"zone = {_toml(ZONE)}\n"
        + (f"capabilities = [{', '.join(_toml(c) for c in CAPABILITIES[: 2 - i % 2])}]\n"
           if i < 2 else "")
        for i, name in enumerate(SERVERS))
    return f"""name = "hostile"
description = {_toml(DESCRIPTION)}

{servers}
[generator]
points_per_weight = [8, 16]
point_name = {_toml(POINT_NAME)}

[keys]
count = 300
name = {_toml(KEY_NAME)}

[measure]
layouts = ["numpy-packed", "cffi-packed"]
metrics = ["balance", "load"]

[process]

[replication]
copies = 2
objects = 500
fail = {_toml(SERVERS[0])}
join = {_toml(JOIN)}
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The run's report, compare of it with itself, its plan and its explorer page."""
    folder = tmp_path_factory.mktemp("hostile")
    scenario = folder / "hostile.toml"
    scenario.write_text(_scenario(), encoding="utf-8")
    assert main(["run", str(scenario), "--out", str(folder), "--no-progress"]) == 0
    renamed = folder / RESULT_NAME
    shutil.copy(folder / "hostile.json", renamed)
    assert main(["compare", str(renamed), str(renamed), "--out", str(folder / "cmp.md")]) == 0
    assert main(["plan", str(scenario), "--target-cv", "0.1",
                 "--out", str(folder / "plan")]) == 0
    assert main(["explore", str(scenario), "--out", str(folder / "x.html")]) == 0
    return {"run": folder / "hostile.html", "compare": folder / "cmp.html",
            "plan": folder / "plan.html", "explore": folder / "x.html",
            "result": folder / "hostile.json"}


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with browser() as session:
        session.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOOK})
        yield session


def _load(driver: Any, page: Path, ready: str) -> dict[str, Any]:
    """Open `page`, wait for its charts (`ready`: a promise expression), then report what
    ran and what the page holds."""
    console_errors(driver)
    driver.get(page.as_uri())
    driver.set_script_timeout(60)
    drawn = driver.execute_async_script(
        f"const done = arguments[0]; Promise.resolve({ready})"
        ".then(() => done('drawn'), e => done(String(e)));")
    assert drawn == "drawn"
    state: dict[str, Any] = driver.execute_script(INJECTED)
    state["console_errors"] = console_errors(driver)
    return state


def _assert_nothing_ran(state: dict[str, Any], title: str, scripts: int) -> None:
    assert state["pwned"] is None
    assert state["dialogs"] == []
    assert state["title"] == title
    assert state["handlers"] == []
    assert state["scripts"] == scripts
    assert state["images"] == 0
    assert state["console_errors"] == []


def _hottest_servers(result: Path) -> set[str]:
    document = json.loads(result.read_text(encoding="utf-8"))
    return {run["figures"]["load"]["hottest_server"] for run in document["runs"]}


def test_report_runs_no_injected_script_and_shows_the_strings(pages: dict[str, Path],
                                                              driver: Any) -> None:
    """The run's HTML report: nothing injected ran; the description, every capability,
    the servers the load table names and the replication's failing and joining servers
    are on the page as written."""
    state = _load(driver, pages["run"], "window.chartsReady")
    _assert_nothing_ran(state, "hostile", scripts=3)
    for value in [DESCRIPTION, *CAPABILITIES, *_hottest_servers(pages["result"]),
                  f"{SERVERS[0]} fails", f"{JOIN} joins"]:
        assert value in state["text"], value


def test_compare_runs_no_injected_script_and_shows_the_file_name(pages: dict[str, Path],
                                                                 driver: Any) -> None:
    """compare of the result with itself, under a hostile file name: nothing ran, the name
    shows as written."""
    state = _load(driver, pages["compare"], "window.chartsReady")
    _assert_nothing_ran(state, "Comparison", scripts=2)  # no chart, no library
    assert state["text"].count(RESULT_NAME) >= 2


def test_plan_runs_no_injected_script_and_shows_the_capabilities(pages: dict[str, Path],
                                                                 driver: Any) -> None:
    """The scenario's plan: nothing ran; each capability names a ring of the process."""
    state = _load(driver, pages["plan"], "window.chartsReady")
    _assert_nothing_ran(state, "Plan: 4 servers, CV <= 10%", scripts=2)
    for value in CAPABILITIES:
        assert value in state["text"], value


def test_explorer_runs_no_injected_script_and_shows_the_servers(pages: dict[str, Path],
                                                                driver: Any) -> None:
    """The explorer: nothing ran; every server name and the point-name template show as
    written, and the page's data holds the key names and servers intact."""
    state = _load(driver, pages["explore"], "window.sharesDrawn")
    _assert_nothing_ran(state, "Ring explorer", scripts=4)
    for value in [*SERVERS, POINT_NAME]:
        assert value in state["text"], value
    data = driver.execute_script(
        "return JSON.parse(document.getElementById('explorer-data').textContent);")
    assert [s["name"] for s in data["servers"]] == SERVERS
    assert data["sample_keys"][:2] == [KEY_NAME.format(i=0), KEY_NAME.format(i=1)]
    assert data["point_name"] == POINT_NAME
    assert driver.execute_script("return window.ringExplorer.servers();") == SERVERS
    owner = driver.execute_script("return window.ringExplorer.lookup(arguments[0]);",
                                  KEY_NAME.format(i=0))
    assert owner in SERVERS


def test_chart_tooltips_show_server_names_as_text(pages: dict[str, Path], driver: Any) -> None:
    """Hovering each bar of the report's shares chart: vega's tooltip holds the server
    name as text (only its own table elements), and nothing injected runs."""
    from selenium.webdriver.common.action_chains import ActionChains

    _load(driver, pages["run"], "window.chartsReady")
    bars = driver.find_elements(  # the shares chart's bars (vega labels each mark)
        "css selector", ".mark-rect path[aria-label^='server: ']")
    assert bars
    shown = set()
    for bar in bars:
        ActionChains(driver).move_to_element(bar).perform()
        tooltip = driver.execute_script(
            "const t = document.getElementById('vg-tooltip-element');"
            "return {tags: Array.from(t.querySelectorAll('*')).map(e => e.tagName),"
            "        server: t.querySelector('td.value').textContent};")
        assert set(tooltip["tags"]) <= {"TABLE", "TBODY", "TR", "TD"}
        shown.add(tooltip["server"])
    assert shown and shown <= set(SERVERS)
    assert driver.execute_script("return [window.__pwned, window.__dialogs]") == [None, []]
