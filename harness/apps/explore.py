"""`python -m harness explore`: the ring explorer, one self-contained interactive page.

It draws a ring with each server's points in its own colour, shows which
server owns a key you type (and the arc it falls in), adds and removes
servers and reports how many of 5,000 sample keys change owner on the ring
and under hash mod N, and redraws the ring and the servers' shares when the
points per server change. The page rebuilds rings itself, in JavaScript,
from the same recipe as the harness (`harness/apps/assets/hashes.js` reproduces
our hashes bit for bit), and exposes `window.ringExplorer.lookup(key)`.

With no scenario the ring is the one of Semicolony's "Consistent hashing
simulator", so that its figures can be compared: servers n1, n2, ... with
points named n1:0, n1:1, ..., 32-bit FNV-1a then MurmurHash3's fmix32 over
the UTF-8 bytes, the first point at or after the key's hash (wrapping), the
lowest server index keeping a shared position. With a scenario it is that
scenario's ring (its first sweep point), drawn sampled when large.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from importlib import resources

from harness.core import charts
from harness.core.errors import ScenarioError
from harness.core.ring import MAX_SERVERS
from harness.core.servers import Server
from harness.recipes.constructions.generator import generate_ring, points_for
from harness.report.html import STYLE, escape_text, json_for_script, vega_bundle
from harness.run.scenario import Scenario

SAMPLE_KEYS = 5_000
#: hashes the page computes in JavaScript (64-bit rings would need BigInt positions)
BROWSER_HASHES = ("fnv1a-fmix32", "crc32", "md5-32", "blake2b-32")
#: larger rings are sent to the page precomputed instead of rebuilt on load
PRECOMPUTE_FROM = 20_000


@dataclass(frozen=True)
class ExplorerRing:
    """What the page rebuilds: servers, points per unit weight, hash, names of points and keys."""

    servers: tuple[Server, ...]
    points_per_weight: int
    hash: str = "fnv1a-fmix32"
    point_name: str = "{server}:{j}"
    key_name: str = "key-{i}"
    new_server_prefix: str = "n"
    source: str = "The ring of Semicolony's \"Consistent hashing simulator\""


#: the most points the page rebuilds: it hashes every point in the browser, and a ring
#: drawn with more than this many is a bar of colour, not a picture of a ring
MAX_PAGE_POINTS = 1_000_000


def _check_size(where: str, servers: tuple[Server, ...], points: int) -> None:
    total = sum(points_for(s.weight, points) for s in servers)
    if total > MAX_PAGE_POINTS:
        raise ScenarioError(f"{where}: at most {MAX_PAGE_POINTS:,} points in all, so that the "
                            f"page can draw and hash them (got {total:,}: {len(servers):,} "
                            f"servers at {points:,} points per unit weight)")


def simulator_ring(servers: int = 3, points: int = 100) -> ExplorerRing:
    """The simulator's ring: n1..nN, points n1:0, n1:1, ..., FNV-1a + fmix32."""
    if not 1 <= servers <= MAX_SERVERS or points < 1:
        raise ScenarioError(f"explore: --servers must be from 1 to {MAX_SERVERS:,} and "
                            f"--points at least 1 (got {servers} and {points})")
    ring = ExplorerRing(tuple(Server(f"n{i}") for i in range(1, servers + 1)), points)
    _check_size("explore", ring.servers, points)
    return ring


def scenario_ring(scenario: Scenario, points: int | None = None) -> ExplorerRing:
    """A scenario's ring, refused in one line where the page cannot rebuild it."""
    recipes = scenario.recipes()
    recipe = recipes[0]
    params = recipe.params
    where = f"{scenario.path}: explore"
    if recipe.algorithm != "ring":
        # bounded-load is built on a ring but routes by load too: the page would draw the
        # plain ring and call it the scenario's.
        raise ScenarioError(f"{where} draws a ring routed by position alone (got algorithm "
                            f"{recipe.algorithm!r}, which the page cannot show truthfully)")
    if params["construction"] != "points":
        raise ScenarioError(f"{where} needs generator.construction = 'points' (got "
                            f"{params['construction']!r}; the page rebuilds hashed points)")
    if params["hash"] not in BROWSER_HASHES:
        raise ScenarioError(f"{where} needs generator.hash to be one of "
                            f"{', '.join(BROWSER_HASHES)} (got {params['hash']!r})")
    for field, value, fields in (("generator.point_name", params["point_name"], "server|j"),
                                 ("keys.name", scenario.keys.name, "i")):
        if re.search(r"[{}]", re.sub(r"\{(" + fields + r")\}", "", value)):
            raise ScenarioError(f"{where} needs {field} to use plain fields only, such as "
                                f"'{{server}}:{{j}}' (got {value!r})")
    servers = tuple(scenario.ring_servers())
    chosen = points or params["points_per_weight"]
    _check_size(where, servers, chosen)
    sweep = [r.params["points_per_weight"] for r in recipes]
    which = ("" if points is not None or len(sweep) == 1 else
             f" (the first of its sweep, {', '.join(f'{k:,}' for k in sweep)}: --points "
             "chooses another)")
    return ExplorerRing(servers, chosen, params["hash"], params["point_name"],
                        scenario.keys.name, "new-server-",
                        f"The ring of scenario {scenario.path} at {chosen:,} points per "
                        f"unit weight{which}")


def page_data(ring: ExplorerRing) -> dict[str, object]:
    data: dict[str, object] = {
        "servers": [{"name": s.name, "weight": s.weight} for s in ring.servers],
        "points_per_weight": ring.points_per_weight, "hash": ring.hash,
        "point_name": ring.point_name, "new_server_prefix": ring.new_server_prefix,
        "sample_keys": [ring.key_name.format(i=i) for i in range(SAMPLE_KEYS)],
        "shares_spec": charts.shares("Share of the ring per server; ticks: fair share", []).spec,
    }
    built = generate_ring(ring.servers, ring.points_per_weight, ring.hash, ring.point_name)
    if built.entries >= PRECOMPUTE_FROM:
        data["positions"] = base64.b64encode(built.positions.astype("<u4").tobytes()).decode()
        data["owners"] = base64.b64encode(built.owners.astype("<u2").tobytes()).decode()
    return data


PAGE_STYLE = """
.explorer { display: grid; grid-template-columns: 470px 1fr; gap: 1.5rem; align-items: start; }
@media (max-width: 900px) { .explorer { grid-template-columns: 1fr; } }
#ring { width: 460px; height: 460px; color: var(--fg); }
.controls label { display: block; margin: .4rem 0; }
.controls input[type=text] { width: 16rem; }
button { margin-right: .5rem; padding: .3rem .8rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; margin-right: .4rem;
  border-radius: 2px; vertical-align: middle; }
#servers { columns: 2; font-size: .88rem; padding-left: 1rem; }
.figure { font-weight: 600; }
"""


def _asset(name: str) -> str:
    return resources.files("harness.apps.assets").joinpath(name).read_text(encoding="utf-8")


def explorer_page(ring: ExplorerRing) -> str:
    data = json_for_script(page_data(ring))
    return f"""<!doctype html>
<html lang=en><head><meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">
<title>Ring explorer</title><style>{STYLE}{PAGE_STYLE}</style></head>
<body>
<header><h1>Ring explorer</h1>
<p>{escape_text(ring.source)}: {len(ring.servers):,} servers, hash
<code>{escape_text(ring.hash)}</code>, points named
<code>{escape_text(ring.point_name)}</code>. The owner of a key is the first
point at or after the key's hash, wrapping round; the lowest server index keeps a shared
position. Built in this page from the same recipe as <code>python -m harness</code>.</p>
</header>
<main class="explorer">
<div><svg id="ring" viewBox="0 0 460 460" role="img" aria-label="the ring"></svg>
<p class="note" id="drawn"></p></div>
<div class="controls">
<label>Key <input id="key" type="text" value="user:42"></label>
<p>Owner on the ring: <span class="figure" id="owner"></span>; with hash mod N:
<span id="modn"></span>. Key hash <span id="keyhash"></span>.</p>
<label>Points per unit weight <input id="points" type="number" min="1"
value="{int(ring.points_per_weight)}"></label>
<p><button id="add" type="button">Add a server</button>
<button id="remove" type="button">Remove the last server</button></p>
<p id="last">Add or remove a server to see how many of {SAMPLE_KEYS:,} sample keys
change owner.</p>
<div id="shares" class="chart"></div>
<ul id="servers"></ul>
</div>
</main>
<script id="explorer-data" type="application/json">{data}</script>
<script>{vega_bundle()}</script>
<script>{_asset("hashes.js")}</script>
<script>{_asset("explorer.js")}</script>
</body></html>
"""
