"""The supervisor of one foreign peer: the parent of the peer and of everything it starts.

Run as a script by `process.PeerProcess` (`python -I -S supervisor.py STATUS CONTROL --
COMMAND...`, standard library only, so it starts in a few ms), it makes itself a child
subreaper (Linux's PR_SET_CHILD_SUBREAPER), starts the peer in a session of its own, and
waits. Whatever the peer starts that outlives its parent (a double-forked daemon, a child
in another process group or session) is then reparented to the supervisor, not to init,
so it can still be found: at the end every child the supervisor has is killed with
SIGKILL and reaped, again and again until none is left (a killed process's own children
become the supervisor's in turn).

The end comes when the harness writes to the CONTROL pipe or closes it, which the kernel
does when the harness dies, even by SIGKILL; when the harness dies the supervisor is
also sent SIGTERM (PR_SET_PDEATHSIG, set before this script starts). SIGINT is ignored: a
Ctrl-C reaches the harness, which ends the run and then its peers.

Over the STATUS pipe it tells the harness `started PID` (or `failed MESSAGE`), and
`exited WAITSTATUS` when the peer itself has ended; the peer's stdin, stdout and stderr
are the harness's pipes, which the supervisor hands on and then lets go of (so that the
harness sees end of file when the peer dies).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value)


def _children() -> list[int]:
    """The pids whose parent is this process (from /proc: a reparented orphan included)."""
    me, found = os.getpid(), []
    try:
        with open(f"/proc/{me}/task/{me}/children") as listed:
            return [int(pid) for pid in listed.read().split()]
    except OSError:
        pass
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"{entry.path}/stat") as stat:
                    # the parent is the second field after the name, which may hold spaces
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def _reap_all(status: int, peer: int) -> None:
    """Kill every descendant and reap it, until this process has no child left."""
    with contextlib.suppress(OSError):
        os.killpg(peer, signal.SIGKILL)
    while True:
        for pid in _children():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            pid, wait_status = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == peer:
            _tell(status, f"exited {wait_status}")


def _tell(status: int, line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(status, line.encode() + b"\n")


def _start(command: list[str], status: int, control: int) -> int:
    """Fork and exec the peer in a new session; its pid, or a `failed` line and exit."""
    errors_read, errors_write = os.pipe()  # close-on-exec: empty when exec succeeded
    pid = os.fork()
    if pid == 0:
        try:
            os.close(errors_read)
            os.close(status)
            os.close(control)
            os.setsid()
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(errors_write, (exc.strerror or str(exc)).encode())
        finally:
            os._exit(127)
    os.close(errors_write)
    with os.fdopen(errors_read, "rb") as errors:
        message = errors.read().decode(errors="replace")
    if message:
        os.waitpid(pid, 0)
        _tell(status, f"failed {message}")
        sys.exit(0)
    return pid


def main(argv: list[str]) -> None:
    status, control, command = int(argv[1]), int(argv[2]), argv[4:]
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    stop = False

    def on_term(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    peer = _start(command, status, control)
    _tell(status, f"started {peer}")
    # Let go of the peer's pipes: only the peer (and what it starts) holds them now.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for fd in range(3, 1024):  # an inherited shared region: the peer holds its own
        if fd not in (status, control, wake_read, wake_write, null):
            with contextlib.suppress(OSError):
                os.close(fd)
    while not stop:
        with contextlib.suppress(InterruptedError):
            ready = select.select([control, wake_read], [], [])[0]
            if wake_read in ready:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_read, 512)
            if control in ready:
                break  # a byte or end of file: either way, the end
        while True:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == peer:
                _tell(status, f"exited {wait_status}")
    _reap_all(status, peer)
    _tell(status, "done")


if __name__ == "__main__":
    main(sys.argv)
