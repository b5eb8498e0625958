"""What `identify` reads: observed routing (a CSV of key and server) and the server list.

The routing file has one `key,server` row a line (a first row `key,server` is a header and
is skipped); keys are text, as a client is given them, and are read as UTF-8. The server
list is a TOML file, `[[servers]]` tables of `name` and optional `weight` (default 1), in
the order the client is configured with them, or a CSV of `name[,weight]` rows. Every
error names the file, the line or field, what was expected and what was found, in one line,
before any work.
"""

from __future__ import annotations

import csv
import io
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import ScenarioError
from harness.core.ring import MAX_SERVERS
from harness.core.safe_read import read_regular_file
from harness.core.servers import Server

#: most observed keys read (a search routes each several times)
MAX_KEYS = 1_000_000
#: largest input file read
MAX_FILE_BYTES = 256 << 20


def read_text_file(path: Path, what: str) -> str:
    data = read_regular_file(path, MAX_FILE_BYTES, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{path}: the {what} must be UTF-8 text (got a byte "
                            f"0x{data[exc.start]:02x} at offset {exc.start})") from None


@dataclass(frozen=True)
class Observations:
    """Keys, each key's observed server (an index into `servers`), and the servers."""

    keys: tuple[bytes, ...]
    owners: tuple[int, ...]
    servers: tuple[Server, ...]
    routing_file: str
    servers_file: str


def _shown(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def read_servers(path: Path) -> tuple[Server, ...]:
    text = read_text_file(path, "server list")
    if path.suffix.lower() == ".toml":
        servers = _toml_servers(path, text)
    else:
        servers = _csv_servers(path, text)
    if not servers:
        raise ScenarioError(f"{path}: servers must be at least one server (got none)")
    if len(servers) > MAX_SERVERS:
        raise ScenarioError(f"{path}: servers must be at most {MAX_SERVERS:,} servers "
                            f"(got {len(servers):,})")
    seen: set[str] = set()
    for server in servers:
        if server.name in seen:
            raise ScenarioError(f"{path}: servers must have distinct names (got "
                                f"{_shown(server.name)} twice)")
        seen.add(server.name)
    return tuple(servers)


def _weight(path: Path, where: str, value: object) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(float(value)) and 1e-6 <= float(value) <= 1e12
    if not ok:
        raise ScenarioError(f"{path}: {where} must be a number from 1e-06 to 1e+12 "
                            f"(got {value!r})")
    return float(value)  # type: ignore[arg-type]


def _toml_servers(path: Path, text: str) -> list[Server]:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML ({exc})") from None
    unknown = set(document) - {"servers"}
    if unknown:
        raise ScenarioError(f"{path}: only [[servers]] tables are expected (got "
                            f"{', '.join(sorted(map(repr, unknown)))})")
    tables = document.get("servers", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ScenarioError(f"{path}: servers must be [[servers]] tables (got {tables!r})")
    servers = []
    for i, table in enumerate(tables):
        extra = set(table) - {"name", "weight"}
        if extra:
            raise ScenarioError(f"{path}: servers[{i}] must have only name and weight (got "
                                f"{', '.join(sorted(map(repr, extra)))})")
        name = table.get("name")
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"{path}: servers[{i}].name must be a non-empty string "
                                f"(got {name!r})")
        servers.append(Server(name, _weight(path, f"servers[{i}].weight",
                                            table.get("weight", 1))))
    return servers


def _csv_servers(path: Path, text: str) -> list[Server]:
    servers = []
    for line, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or (line == 1 and row[0].strip().lower() == "name"):
            continue
        if len(row) > 2 or not row[0]:
            raise ScenarioError(f"{path}: line {line} must be name or name,weight "
                                f"(got {_shown(','.join(row))})")
        weight: object = 1
        if len(row) == 2:
            try:
                weight = float(row[1])
            except ValueError:
                weight = row[1]
        servers.append(Server(row[0], _weight(path, f"line {line} weight", weight)))
    return servers


def read_observations(routing: Path, servers_path: Path) -> Observations:
    """The observed routing, each server checked against the list, before any work."""
    servers = read_servers(servers_path)
    index = {server.name: i for i, server in enumerate(servers)}
    text = read_text_file(routing, "observed routing")
    keys: list[bytes] = []
    owners: list[int] = []
    seen: dict[bytes, int] = {}
    for line, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or (line == 1 and [c.strip().lower() for c in row] == ["key", "server"]):
            continue
        if len(row) != 2:
            raise ScenarioError(f"{routing}: line {line} must be key,server (got "
                                f"{len(row)} fields: {_shown(','.join(row))})")
        key, server = row
        if server not in index:
            raise ScenarioError(f"{routing}: line {line} server must be one of the "
                                f"{len(servers)} servers of {servers_path} (got {_shown(server)})")
        data = key.encode("utf-8", "surrogateescape")
        owner = index[server]
        if data in seen:
            if seen[data] != owner:
                raise ScenarioError(f"{routing}: line {line} must route key {_shown(key)} "
                                    f"as before, to {servers[seen[data]].name!r} (got "
                                    f"{_shown(server)}): a client routes a key one way")
            continue
        seen[data] = owner
        keys.append(data)
        owners.append(owner)
        if len(keys) > MAX_KEYS:
            raise ScenarioError(f"{routing}: keys must be at most {MAX_KEYS:,} (got more)")
    if not keys:
        raise ScenarioError(f"{routing}: rows must be at least one key,server row (got none)")
    return Observations(tuple(keys), tuple(owners), servers, str(routing), str(servers_path))
