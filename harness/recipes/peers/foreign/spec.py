"""A foreign peer as a scenario names it: a shared library (the C ABI) or a command (the
process protocol), and the recipe of ours it claims to route like.

    peers = [{ library = "build/libketama_peer.so", routes_like = { construction = "libketama" } },
             { command = ["node", "peers/js/hashring.js"], name = "hashring-js" }]

Paths (the library, and the command's arguments) are taken relative to the directory the
harness runs in, as a shell would take them. Every field is read through `Fields.take_*`,
so the scenario reference and the fuzzers know it, and checked before any work.

Reading a peer's table checks what it says; whether this machine has what it names (the
library file, the program) is a second question, `machine_problem`, which `run` asks before
any work (harness.run.machine_check): a scenario naming a library built elsewhere still
reads, lists and validates on a machine without it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.core.fields import Fields
from harness.recipes.algorithms import ALGORITHMS, get_algorithm
from harness.recipes.constructions.known_clients import OTHER_CLIENTS

#: seconds a peer may take to answer one request before it is stopped
DEFAULT_TIMEOUT_S = 60.0
TIMEOUT_BOUNDS = (0.01, 3600.0)
#: ns per key the time estimate charges each batch of a peer, its route and our reference's
#: beside it, unless its table says otherwise (libmemcached's route through the ABI: about
#: 700; peers that route through live servers or in pure Python, such as
#: peers/python/twemproxy_peer.py and kafka_peer.py, 15,000 to 17,000)
DEFAULT_NS_PER_KEY = 5_000.0
NS_PER_KEY_BOUNDS = (1.0, 1e9)
LIBRARY_EXPECTED = ("the path of a shared library exporting the ring_peer ABI "
                    "(python -m harness abi)")
INPUTS = ("keys", "hashes")
COMMAND_EXPECTED = "a non-empty list of non-empty strings (the program and its arguments)"


@dataclass(frozen=True)
class ForeignPeerSpec:
    """One foreign peer, checked: where it is, what it is told, what it claims."""

    name: str
    #: the shared library's path, for an in-process peer
    library: str | None = None
    #: the program and its arguments, for a peer behind the process protocol
    command: tuple[str, ...] | None = None
    #: the parameter string given to its build ("" when none)
    params: str = ""
    #: our recipe it claims to route like: {"algorithm": name, **params}; None if none
    routes_like: dict[str, Any] | None = None
    #: whether that claim is parity (every key alike; a difference fails the run)
    exact: bool = True
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: what it is given: "keys" (names, it hashes them) or "hashes" (the key hashes of the
    #: recipe it routes like, for a library that takes hashes, as jump's do)
    input: str = "keys"
    #: the recipe's checked parameters (defaults filled in), for building it
    recipe_params: dict[str, Any] = field(default_factory=dict, compare=False)
    #: ns per key the time estimate charges each of its batches
    ns_per_key: float = DEFAULT_NS_PER_KEY
    #: the scenario field it was read from ("measure.peers[0]"), for errors naming it
    where: str = field(default="", compare=False)

    @property
    def kind(self) -> Literal["library", "command"]:
        return "library" if self.library is not None else "command"

    def as_record(self) -> dict[str, Any]:
        """What a fresh process needs to rebuild this spec (the memory probe)."""
        return {"name": self.name, "library": self.library,
                "command": list(self.command) if self.command else None,
                "params": self.params, "routes_like": self.routes_like, "exact": self.exact,
                "timeout_s": self.timeout_s, "input": self.input,
                "recipe_params": self.recipe_params, "ns_per_key": self.ns_per_key,
                "where": self.where}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ForeignPeerSpec:
        command = record["command"]
        return cls(record["name"], record["library"], tuple(command) if command else None,
                   record["params"], record["routes_like"], record["exact"],
                   record["timeout_s"], record["input"], record["recipe_params"],
                   record.get("ns_per_key", DEFAULT_NS_PER_KEY), record.get("where", ""))

    def machine_problem(self) -> tuple[str, str, object] | None:
        """What this machine lacks to run the peer, as (its field, what it must be, what it
        is), or None: the library file, or the command's program."""
        if self.library is not None and (problem := _library_problem(self.library)):
            return "library", problem, self.library
        if self.command is not None and (problem := _program_problem(self.command)):
            return "command", problem, list(self.command)
        return None


def _default_name(library: str | None, command: tuple[str, ...] | None) -> str:
    if library is not None:
        return Path(library).stem.removeprefix("lib")
    assert command is not None
    # "node peers/js/hashring.js" -> "hashring": the script names it better than "node".
    return Path(command[-1]).stem or Path(command[0]).name


def _library_problem(path: str) -> str | None:
    if not os.path.isfile(path):
        return "the path of an existing shared library file"
    return None


def _program_problem(command: tuple[str, ...]) -> str | None:
    program = command[0]
    if os.sep in program:
        return None if os.path.isfile(program) and os.access(program, os.X_OK) else (
            "a command whose program is an executable file")
    return None if shutil.which(program) else "a command whose program is on PATH"


def parse_foreign_peer(table: Fields) -> ForeignPeerSpec:
    """A foreign peer's table, checked (paths included), or a ScenarioError naming the field."""
    library = table.take_raw("library", None, expected=LIBRARY_EXPECTED)
    if library is not None and (not isinstance(library, str) or not library
                                or "\0" in library):
        raise table.error("library", LIBRARY_EXPECTED, library)
    raw_command = table.take_raw("command", None, expected=COMMAND_EXPECTED)
    if library is None and raw_command is None:
        raise table.error_at(table.path, "a table with library or command", table.table)
    if library is not None and raw_command is not None:
        raise table.error("command", "absent when library is given (a peer is one or the "
                          "other)", raw_command)
    command: tuple[str, ...] | None = None
    if raw_command is not None:
        if not isinstance(raw_command, list) or not raw_command or not all(
                isinstance(part, str) and part and "\0" not in part for part in raw_command):
            raise table.error("command", COMMAND_EXPECTED, raw_command)
        command = tuple(raw_command)
    name = table.take_label("name", _default_name(library, command),
                            shown_default="the library's or the script's file name")
    params = table.take_raw("params", "", expected="a string given to the peer's build")
    if not isinstance(params, str) or "\0" in params:
        raise table.error("params", "a string given to the peer's build", params)
    routes_like, recipe_params = _routes_like(table)
    exact = table.take_raw("exact", True, expected="true or false")
    if not isinstance(exact, bool):
        raise table.error("exact", "true or false", exact)
    timeout_s = table.take_number("timeout", DEFAULT_TIMEOUT_S, bounds=TIMEOUT_BOUNDS)
    ns_per_key = table.take_number("ns_per_key", DEFAULT_NS_PER_KEY, bounds=NS_PER_KEY_BOUNDS)
    given = table.take_choice("input", INPUTS, "keys")
    if given == "hashes" and routes_like is None:
        raise table.error("input", "'keys' unless routes_like names the recipe whose key "
                          "hashes it is given", given)
    table.finish()
    return ForeignPeerSpec(name, library, command, params, routes_like, exact, timeout_s,
                           given, recipe_params, ns_per_key, table.path)


def _routes_like(table: Fields) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The recipe the peer claims to route like, checked as the recipe's own table is; or
    a known client by name (`client = "npm hashring"`, `known_clients.OTHER_CLIENTS`), which
    stands for its recipe and takes no other field."""
    inner = table.take_table("routes_like")
    if not inner.table:
        return None, {}
    if inner.has("client"):
        client, algorithm_name, stated, checked = known_client_recipe(inner)
        return {"algorithm": algorithm_name, "client": client, **stated}, checked
    algorithm = get_algorithm(inner.take_choice("algorithm", list(ALGORITHMS), "ring"))
    rest = inner.take_rest()
    params = Fields(inner.file, inner.path, rest, declares=False)
    checked = algorithm.parse_params(params)
    params.finish()
    return {"algorithm": algorithm.name, **rest}, checked


def known_client_recipe(table: Fields, beside: tuple[str, ...] = ()
                        ) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    """A known client named by `client` (`known_clients.OTHER_CLIENTS`), which takes no
    field beside it but those of `beside` (taken already): (its name, its algorithm, its
    parameters as stated, and as checked)."""
    expected = ("one of " + ", ".join(repr(c) for c in OTHER_CLIENTS)
                + ": a known client, standing for its recipe")
    client = table.take_raw("client", None, expected=expected,
                            shown_default="none: the recipe's own fields")
    if client not in OTHER_CLIENTS:
        raise table.error("client", expected, client)
    for key in table.table:  # the client's recipe is its own: no field beside the name
        if key != "client" and key not in beside:
            raise table.error(key, f"absent beside client (the recipe is {client}'s)",
                              table.table[key])
    table.finish()
    _, algorithm_name, stated = OTHER_CLIENTS[client]
    params = Fields(table.file, table.path, dict(stated), declares=False)
    checked = get_algorithm(algorithm_name).parse_params(params)
    params.finish()
    return str(client), algorithm_name, dict(stated), checked
