"""The process driver: one foreign peer's process, its pipes, its deadline, its end.

The peer is started by a supervisor of its own (`supervisor.py`, a child subreaper), in a
session of its own: whatever it starts, in whatever process group or session, even a
double-forked daemon, stays the supervisor's descendant. Every way out (the end of the
peer, an error, SIGTERM or SIGINT) tells the supervisor to kill and reap all of them, and
so does the harness's death, even by SIGKILL (the control pipe closes, and
PR_SET_PDEATHSIG sends the supervisor SIGTERM). The peer's pipes are the harness's own,
handed on by the supervisor, so nothing stands between a request and the peer. Every
request has a deadline (the scenario's `timeout`); reads and writes wait on the pipes with
`select`, so a peer that stops reading or never answers is stopped at its deadline, and
one that dies is noticed at once (end of file).

Any failure is a HarnessError of one line: `peer 'NAME': what it did` (and the last line
it wrote to stderr, if any). Its stderr comes through a pipe, drained while the harness
waits on it, of which only the last STDERR_TAIL bytes are kept: a peer writing to stderr
without end (7 GB in 25 s into a temporary file, before) costs neither memory nor disk.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.core.errors import HarnessError
from harness.recipes.peers.foreign import protocol

PR_SET_PDEATHSIG = 1
#: Linux's fcntl to resize a pipe (fcntl.F_SETPIPE_SZ from Python 3.10, named here for mypy)
F_SETPIPE_SZ = 1031
PIPE_BYTES = 1 << 20
#: bytes of the peer's stderr kept for the error line
STDERR_TAIL = 4096
#: requests a pipe may still hold pages of after their peer failed (vmsplice hands the
#: pipe references to our pages, not copies): kept for the process's life, so that those
#: pages stay the request whoever reads them; one per peer failed after a vmsplice
_PINNED: list[bytes] = []


_LIBC = ctypes.CDLL(None, use_errno=True)
_VMSPLICE = getattr(_LIBC, "vmsplice", None)
SPLICE_F_NONBLOCK = 2


class _IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("size", ctypes.c_size_t)]


def _address(data: bytes) -> int | None:
    """Where an immutable bytes object's content is, for vmsplice; None without it."""
    if _VMSPLICE is None or not data:
        return None
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value


def _vmsplice(fd: int, address: int, size: int) -> int:
    """Up to `size` bytes at `address` into the pipe `fd` without copying them: the pipe
    takes references to our pages, where write(2) copies every byte into pages of its own
    (3.9 ns a key of a 100,000-key request, measured). Safe because a request is an
    immutable bytes object kept alive until the pipe holds none of it: `request` checks
    that the pipe is empty when the reply has come (a peer that answers before reading its
    whole request is stopped, a protocol failure), and a request written by vmsplice to a
    peer that failed is kept for good (`_PINNED`), so its pages never become other memory
    of ours while some process may still read them."""
    assert _VMSPLICE is not None, "_address gives None without vmsplice"
    vector = _IOVec(address, size)
    written = int(_VMSPLICE(fd, ctypes.byref(vector), 1, SPLICE_F_NONBLOCK))
    if written < 0:
        error = ctypes.get_errno()
        kind = {errno.EAGAIN: BlockingIOError, errno.EPIPE: BrokenPipeError}.get(error, OSError)
        raise kind(error, os.strerror(error))
    return written


def _pending(fd: int) -> int:
    """Bytes a pipe holds, unread (FIONREAD, on either end of it); 0 if it cannot tell."""
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0])
    except OSError:
        return 0


SUPERVISOR = Path(__file__).with_name("supervisor.py")
#: seconds the supervisor may take to start, and to kill and reap the peer's descendants
SUPERVISOR_S = 10.0


def _supervisor_dies_with_parent() -> None:
    """In the supervisor, before its exec: SIGTERM (which it handles by killing the
    peer's descendants) when the harness dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class PeerProcess:
    """A started peer, spoken to one request at a time."""

    def __init__(self, name: str, command: Sequence[str], timeout_s: float,
                 shared_fd: int | None = None, *, refusals_as_said: bool = False,
                 environment: Mapping[str, str] | None = None) -> None:
        """`shared_fd`: a descriptor the peer inherits, its number in the environment
        (protocol.SHARED_FD_VARIABLE), for shared batches; `refusals_as_said`: an `E`
        reply's message is the error as it stands (a library worker's), not `refused
        REQUEST: message`; `environment`: variables set for the peer (a worker's TMPDIR)."""
        self.name, self.timeout_s = name, timeout_s
        self._refusals_as_said = refusals_as_said
        # The harness's own interpreter, for a Python peer that needs the packages it is
        # installed with (peers/run.sh kafka: kafka-python is in the harness's environment).
        env = {**os.environ, protocol.PYTHON_VARIABLE: sys.executable, **(environment or {})}
        if shared_fd is not None:
            env[protocol.SHARED_FD_VARIABLE] = str(shared_fd)
        # The tail of what it wrote to stderr: its last line explains a failure.
        self._stderr_tail = bytearray()
        status_read, status_write = os.pipe()
        control_read, self._control = os.pipe()
        passed = (status_write, control_read, *(() if shared_fd is None else (shared_fd,)))
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(SUPERVISOR), str(status_write),
                 str(control_read), "--", *command],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=env, pass_fds=passed,
                preexec_fn=_supervisor_dies_with_parent)  # safe: the harness starts no threads
        except OSError as exc:
            for fd in (status_read, self._control):
                os.close(fd)
            raise HarnessError(f"peer {name!r}: failed to start ({exc.strerror or exc})") \
                from None
        finally:
            for fd in (status_write, control_read):
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._status, self._status_text = status_read, b""
        #: the peer's wait status once the supervisor has reported it
        self._peer_status: int | None = None
        self._pid = -1
        assert self._process.stdin is not None and self._process.stdout is not None
        assert self._process.stderr is not None
        self._in, self._out = self._process.stdin.fileno(), self._process.stdout.fileno()
        self._err: int | None = self._process.stderr.fileno()
        #: whether the request under way went (partly) through vmsplice
        self._spliced = False
        os.set_blocking(self._in, False)
        os.set_blocking(self._err, False)
        for fd in (self._in, self._out):
            # A batch of 100,000 keys is about 2.5 MB: through the default 64 KiB pipe that
            # is 40 hand-overs between the processes, each a wait for the scheduler on a
            # busy machine. The largest pipe an unprivileged process may ask for (1 MiB by
            # default) makes it three.
            with contextlib.suppress(OSError):
                fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES)
        started = self._status_line(time.monotonic() + SUPERVISOR_S)
        if started is None or not started.startswith("started "):
            self.stop()
            said = "its supervisor did not start" if started is None else \
                started.removeprefix("failed ")
            raise HarnessError(f"peer {name!r}: failed to start ({said})")
        self._pid = int(started.split()[1])

    @property
    def pid(self) -> int:
        """The peer's own pid (the supervisor is its parent)."""
        return self._pid

    def _status_line(self, deadline: float) -> str | None:
        """The supervisor's next line, waited for until `deadline`; None if it gave none
        (it ended, or the time ran out). An `exited` line is kept as the peer's status."""
        while b"\n" not in self._status_text:
            ready = select.select([self._status], [], [], max(0.0, deadline - time.monotonic()))
            if not ready[0]:
                return None
            try:
                chunk = os.read(self._status, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                return None
            self._status_text += chunk
        line, self._status_text = self._status_text.split(b"\n", 1)
        text = line.decode(errors="replace")
        if text.startswith("exited "):
            self._peer_status = int(text.split()[1])
        return text

    def _peer_ended(self, wait_s: float) -> int | None:
        """The peer's exit code (negative: the signal), waited for up to `wait_s`."""
        deadline = time.monotonic() + wait_s
        while self._peer_status is None:
            if self._status_line(deadline) is None:
                return None
        return os.waitstatus_to_exitcode(self._peer_status)

    def request(self, message: bytes, what: str,
                limit: int = protocol.MAX_REPLY_BYTES) -> bytes:
        """Send one request and return its reply's payload, or fail with the peer's line; a
        reply frame longer than `limit` bytes is refused before it is read. Any reply that
        breaks the protocol (cut short, too long, unknown status, an error reply whose
        message is not a string of the frame, an answer before the whole request was read,
        bytes nobody asked for) is that one line, the peer stopped."""
        deadline = time.monotonic() + self.timeout_s
        self._spliced = False
        try:
            try:
                payload = self._exchange(message, deadline, what, limit)
            except protocol.ProtocolError as exc:
                raise self.failure(str(exc)) from None
        except BaseException:
            if self._spliced:  # the pipe may still hold pages of it: they stay the request
                _PINNED.append(message)
            raise
        return payload

    def _exchange(self, message: bytes, deadline: float, what: str, limit: int) -> bytes:
        unasked = _pending(self._out)
        if unasked:
            raise protocol.ProtocolError(f"wrote {unasked:,} bytes nobody asked for before "
                                         f"{what} (a reply too many, or garbage)")
        self._write(message, deadline, what)
        header = self._read(4, deadline, what)
        length = int.from_bytes(header, "little")
        if not 1 <= length <= min(limit, protocol.MAX_REPLY_BYTES):
            raise protocol.ProtocolError(f"answered {what} with garbage (a frame of "
                                         f"{length:,} bytes)")
        body = self._read(length, deadline, what)
        # The reply is whole: the peer must have read all of its request by now. Bytes of
        # it still in the pipe mean it answered without reading them (and might read them
        # later, when the request is gone): a protocol failure.
        unread = _pending(self._in)
        if unread:
            raise protocol.ProtocolError(f"answered {what} before reading all of it "
                                         f"({unread:,} bytes of the request unread)")
        status, payload = body[:1], body[1:]
        if status == protocol.ERROR:
            message_text = protocol.error_message(payload, what)
            if self._refusals_as_said:
                self.stop()
                raise HarnessError(f"peer {self.name!r}: {message_text}")
            raise protocol.ProtocolError(f"refused {what}: {message_text}")
        if status != protocol.OK:
            raise protocol.ProtocolError(f"answered {what} with garbage (status byte "
                                         f"{status!r})")
        return payload

    def _write(self, data: bytes, deadline: float, what: str) -> None:
        address = _address(data)
        view, at = memoryview(data), 0
        while at < len(data):
            if self._wait(self._in, "write", deadline, what):
                # Its output is readable before the request is all written: an answer (or
                # its end) before it read its request.
                if _pending(self._out):
                    raise protocol.ProtocolError(
                        f"answered {what} before reading all of it ({len(data) - at:,} "
                        "bytes of the request not yet written)")
                raise self.failure(f"{self._ended()} before reading all of {what}")
            try:
                if address is not None:
                    self._spliced = True
                    written = _vmsplice(self._in, address + at, len(data) - at)
                else:
                    written = os.write(self._in, view[at:])
            except BrokenPipeError:
                raise self.failure(f"{self._ended()} before reading all of {what}") from None
            except BlockingIOError:
                continue
            except OSError:  # vmsplice refused here (an old kernel, a sandbox): copy instead
                address = None
                continue
            at += written

    def _read(self, size: int, deadline: float, what: str) -> bytes:
        # One buffer filled in place: a reply of 100,000 owners arrives in a few reads, and
        # joining chunks would copy it once more.
        buffer = bytearray(size)
        view, got = memoryview(buffer), 0
        while got < size:
            self._wait(self._out, "read", deadline, what)
            count = os.readv(self._out, [view[got:]])
            if not count:
                raise self.failure(f"{self._ended()} during {what}")
            got += count
        return bytes(buffer)

    def _wait(self, fd: int, direction: str, deadline: float, what: str) -> bool:
        """Wait until `fd` is ready, draining the peer's stderr meanwhile (a peer blocked
        writing to a full stderr pipe would never answer). Waiting to write, its output is
        watched too: True when that became readable first (an early answer, or its end)."""
        while True:
            errors = [self._err] if self._err is not None else []
            reads, writes = ([fd, *errors], []) if direction == "read" \
                else ([self._out, *errors], [fd])
            ready = select.select(reads, writes, [],
                                  max(0.0, deadline - time.monotonic()))
            if self._err is not None and self._err in ready[0]:
                self._drain_stderr()
            if direction == "write" and self._out in ready[0]:
                return True
            if fd in ready[0] or fd in ready[1]:
                return False
            # Checked by the clock, not by select's timeout alone: a peer that writes to
            # stderr without end keeps select returning and must still meet its deadline.
            if not any(ready) or time.monotonic() >= deadline:
                raise self.failure(f"did not answer {what} within its timeout of "
                                   f"{self.timeout_s:g} s")

    def _drain_stderr(self) -> None:
        """Read what the peer's stderr holds now (without waiting), keeping the tail."""
        if self._err is None:
            return
        for _ in range(64):  # at most 4 MiB a call: a peer cannot keep us here
            try:
                chunk = os.read(self._err, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._err = None  # end of file: no select on it any more
                return
            self._stderr_tail += chunk
            del self._stderr_tail[:-STDERR_TAIL]

    def _ended(self) -> str:
        """How the peer ended: its exit status (waited for briefly: it closed its pipe)."""
        code = self._peer_ended(1.0)
        if code is None:
            return "closed its output"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"was killed by {signal.Signals(-code).name}"
            return f"was killed by signal {-code}"
        return f"exited with status {code}"

    def failure(self, what: str) -> HarnessError:
        """The one-line error for `what` the peer did; the peer is stopped first."""
        self.stop()
        lines = bytes(self._stderr_tail).decode(errors="replace").strip().splitlines()
        said = f" (its stderr: {lines[-1].strip()[:300]})" if lines else ""
        return HarnessError(f"peer {self.name!r}: {what}{said}")

    def quit(self) -> None:
        """Ask the peer to end, then make sure it has (and its group with it)."""
        if self._peer_ended(0.0) is None:
            with contextlib.suppress(OSError):
                os.set_blocking(self._in, True)
                os.write(self._in, protocol.quit_())
            self._peer_ended(min(self.timeout_s, 5.0))
        self.stop()

    def stop(self) -> None:
        """End the peer and everything it started, and reap them; idempotent. The
        supervisor kills and reaps every descendant (its children, then theirs as they are
        reparented to it) and exits; one that does not within SUPERVISOR_S is killed. What
        the peer wrote to stderr before it ended is read first (its last line explains a
        failure)."""
        if self._control >= 0:
            with contextlib.suppress(OSError):
                os.close(self._control)  # end of file: the supervisor's signal to end
            self._control = -1
        with contextlib.suppress(OSError):
            try:
                self._process.wait(timeout=SUPERVISOR_S)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._pid > 0:  # the supervisor killed by someone: the peer's group at least
            with contextlib.suppress(OSError):
                os.killpg(self._pid, signal.SIGKILL)
        self._drain_stderr()
        self._err = None  # closed below: its number may be reused by another file
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if self._status >= 0:
            while self._peer_status is None and self._status_line(time.monotonic()) \
                    is not None:
                pass
            os.close(self._status)
            self._status = -1

    def close(self) -> None:
        self.quit()


def pss_bytes(pid: int) -> int | None:
    """The process's proportional set size (/proc/PID/smaps_rollup), None if unreadable."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def cpu_ns(pid: int) -> int | None:
    """CPU time the process's threads have run, ns (/proc/PID/task/*/schedstat: the
    scheduler's own count, exact to the ns where /proc/PID/stat counts 10 ms ticks); None
    if unreadable."""
    total = 0
    try:
        for task in os.scandir(f"/proc/{pid}/task"):
            with open(f"{task.path}/schedstat") as schedstat:
                total += int(schedstat.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total
