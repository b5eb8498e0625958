"""The optional tools of this machine: programs and system packages that some parts of the
harness use and none of it needs.

The harness itself needs Python, a C compiler and the OpenSSL and zlib headers (the C core is
built when the package installs). Everything here is optional: a metric, a peer or a test that
needs a tool says which one is missing and how to install it, and `ring-harness doctor`
lists them all. One table, so that the three never disagree about a tool's name, how it is
found, or the command that installs it.

A tool is present when every program it names is on PATH and every file it names exists.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

#: installs every tool below on Debian or Ubuntu, from a checkout of the repository
INSTALL_ALL = "bash .ci/install-peers.sh"


@dataclass(frozen=True)
class Tool:
    """One optional tool: what uses it, how it is found, and what installs it."""

    name: str
    #: what in the harness uses it, in words
    used_by: str
    #: programs that must be on PATH
    programs: tuple[str, ...] = ()
    #: files that must exist (headers, jars, source trees)
    files: tuple[str, ...] = ()
    #: the command that installs it on Debian or Ubuntu
    install: str = ""

    def missing(self) -> str | None:
        """What of the tool this machine lacks, in words, or None when it is all here."""
        absent = [p for p in self.programs if shutil.which(p) is None]
        absent += [f for f in self.files if not os.path.exists(f)]
        if not absent:
            return None
        return ", ".join(absent) + (" is" if len(absent) == 1 else " are") + " not found"

    def problem(self) -> str | None:
        """One line for a skip or a refusal: the tool, what is missing, the install command;
        None when the tool is here."""
        lacking = self.missing()
        if lacking is None:
            return None
        return f"{self.name} is missing ({lacking}): install it with `{self.install}`"


def _apt(*packages: str) -> str:
    return "apt-get install " + " ".join(packages)


TOOLS: dict[str, Tool] = {tool.name: tool for tool in (
    Tool("nginx", "checking our nginx ring against a live nginx (tests)",
         programs=("nginx",), install=_apt("nginx")),
    Tool("haproxy", "checking our HAProxy ring against a live HAProxy (tests)",
         programs=("haproxy",), install=_apt("haproxy")),
    Tool("chromium", "testing the HTML pages in a real browser (tests)",
         programs=("chromium", "chromedriver"), install=_apt("chromium", "chromium-driver")),
    Tool("valgrind", "the counts metric (callgrind) and tox -e bench-counts; installed "
         "before the package is built, whose counted marker needs valgrind's header",
         programs=("valgrind", "setarch"), files=("/usr/include/valgrind/callgrind.h",),
         install=_apt("valgrind")),
    Tool("libmemcached", "the libmemcached ketama peer through the C ABI",
         files=("/usr/include/libmemcached/memcached.h",), install=_apt("libmemcached-dev")),
    Tool("go", "the groupcache peer (Go's consistenthash)",
         programs=("go",), files=("/usr/share/gocode/src/github.com/golang/groupcache",),
         install=_apt("golang-go", "golang-github-golang-groupcache-dev")),
    Tool("java", "the spymemcached and Guava peers",
         programs=("javac", "java"),
         files=("/usr/share/java/spymemcached.jar", "/usr/share/java/guava.jar"),
         install=_apt("default-jdk-headless", "libspymemcached-java", "libguava-java")),
    Tool("node", "the npm hashring peer, and the pipe-protocol example peers in JavaScript",
         programs=("node",), install=_apt("nodejs")),
    Tool("memcached", "twemproxy's live test (memcached behind nutcracker)",
         programs=("memcached",), install=_apt("memcached")),
    Tool("redis", "Redis Cluster's live key-slot test",
         programs=("redis-server", "redis-cli"), install=_apt("redis-server", "redis-tools")),
    Tool("nutcracker", "twemproxy's live test",
         programs=("nutcracker",), install=_apt("nutcracker")),
)}


def get_tool(name: str) -> Tool:
    """The named tool (a KeyError names a tool the table does not have)."""
    return TOOLS[name]


def tool_problem(name: str) -> str | None:
    """Why the named tool cannot be used here, with its install command, or None."""
    return TOOLS[name].problem()
