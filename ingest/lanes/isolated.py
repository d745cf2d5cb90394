"""Parsing untrusted input in a child process with limits, so one hostile file cannot take
the ingest (or, with `serve --schedule`, the API) down.

libcst's native parser overflows its stack on deeply nested code (a segfault, LibCST #619
and #1000) and needs superlinear time on long operator chains (4,000 terms: 20 s). So the
work runs in a child under a memory cap and a CPU budget per item, and calls `at(i)` before
item `i`: a crash, a CPU overrun or an exception names that item.

    try:
        batch = run_isolated(Limits(), analyse_files, files)
    except ChildFailed as exc:
        exc.index, exc.reason      # 3, "crashed the parser (SIGSEGV)"

Children are forked by a helper process (`python -m stackgraph.ingest.lanes.isolated`,
started once per process, parsers imported), not by multiprocessing: its forkserver
re-imports the caller's `__main__` in every child (the CLI's, pytest's: tenths of a second
each), and forking the caller itself is unsafe once it runs threads (the API). The helper
is single-threaded, so its forks are safe and cost milliseconds.
"""

from __future__ import annotations

import atexit
import importlib
import math
import mmap
import os
import pickle
import resource
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, ParamSpec, TypeVar

from stackgraph.errors import InputError

__all__ = ["ChildFailed", "Limits", "at", "run_isolated"]

P = ParamSpec("P")
T = TypeVar("T")

PRELOAD = ("libcst", "stackgraph.ingest.lanes.code.extract")
"""Imported once by the helper, so each child starts with them loaded."""


@dataclass(frozen=True)
class Limits:
    """What one child may use: CPU seconds per item and address space in all; `prescan`
    lets a parser refuse cheaply, before the child's work, what it knows to be hostile."""

    cpu_s_per_item: int = 20
    memory_bytes: int = 2 << 30
    prescan: bool = True


class ChildFailed(InputError):
    """The child died, overran its budget or raised while on item `index` (-1: between
    items, or the helper was lost)."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason


# -- the child ------------------------------------------------------------------------------


@dataclass
class _Child:
    current: mmap.mmap
    limits: Limits


_child: _Child | None = None
_INDEX = struct.Struct("q")


def at(index: int) -> None:
    """The work is now on item `index`, with a fresh CPU budget; a no-op outside a child."""
    if _child is None:
        return
    _child.current[: _INDEX.size] = _INDEX.pack(index)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime) + _child.limits.cpu_s_per_item
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _run_child(out: Connection, current: mmap.mmap, job: tuple[Any, ...]) -> None:
    global _child
    limits, work, args, kwargs = job
    _child = _Child(current, limits)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash leaves no core file behind
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, hard))
    at(-1)
    try:
        result = work(*args, **kwargs)
        at(-1)
        out.send(("ok", result))
    except Exception as exc:  # the parent names the item; nothing escapes the child
        index = _INDEX.unpack(current[: _INDEX.size])[0]
        out.send(("error", index, f"{type(exc).__name__}: {exc}"))


def _serve(jobs: Connection, answers: Connection) -> None:
    """The helper: for each job, fork a child, forward its answer, then how it ended."""
    for name in PRELOAD:
        importlib.import_module(name)
    while True:
        try:
            job = jobs.recv()
        except EOFError:
            return
        current = mmap.mmap(-1, _INDEX.size)
        current[: _INDEX.size] = _INDEX.pack(-1)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                _run_child(Connection(w), current, job)
            finally:
                os._exit(0)
        os.close(w)
        reader = Connection(r)
        try:
            payload: bytes | None = reader.recv_bytes()
        except (EOFError, OSError):
            payload = None
        reader.close()
        _, status = os.waitpid(pid, 0)
        index = _INDEX.unpack(current[: _INDEX.size])[0]
        answers.send((os.waitstatus_to_exitcode(status), index, payload is not None))
        if payload is not None:
            answers.send_bytes(payload)


# -- the parent -----------------------------------------------------------------------------


@dataclass
class _Helper:
    proc: subprocess.Popen[bytes]
    jobs: Connection
    answers: Connection

    @classmethod
    def start(cls) -> _Helper:
        job_r, job_w = os.pipe()
        ans_r, ans_w = os.pipe()
        proc = subprocess.Popen(
            [sys.executable, "-m", __name__, str(job_r), str(ans_w)],
            pass_fds=(job_r, ans_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(job_r)
        os.close(ans_w)
        return cls(proc, Connection(job_w, readable=False), Connection(ans_r, writable=False))

    def stop(self) -> None:
        self.jobs.close()
        self.answers.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_lock = threading.Lock()
_helper: _Helper | None = None


def _stop_helper() -> None:
    global _helper
    if _helper is not None:
        _helper.stop()
        _helper = None


atexit.register(_stop_helper)


def _death(exitcode: int, limits: Limits) -> str:
    if exitcode >= 0:
        return f"the parser exited with code {exitcode}"
    sig = -exitcode
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    if sig == signal.SIGXCPU:
        return f"took more than {limits.cpu_s_per_item} s of CPU"
    if sig == signal.SIGKILL:
        return f"was killed ({name}; over the {limits.memory_bytes >> 20} MiB memory cap?)"
    return f"crashed the parser ({name})"


def run_isolated(limits: Limits, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`work(*args, **kwargs)` in a child under `limits`; raises `ChildFailed` naming the
    item the child was on when it died, overran or raised. `work` must be importable, and
    its arguments and result picklable. Calls from several threads take turns."""
    global _helper
    with _lock:
        if _helper is None or _helper.proc.poll() is not None:
            _helper = _Helper.start()
        try:
            _helper.jobs.send((limits, work, args, kwargs))
            exitcode, index, answered = _helper.answers.recv()
            payload = _helper.answers.recv_bytes() if answered else None
        except (EOFError, OSError) as exc:
            _stop_helper()
            raise ChildFailed(-1, f"the parser process was lost ({exc or 'EOF'})") from None
    message = pickle.loads(payload) if payload is not None else None
    if message is None:
        raise ChildFailed(index, _death(exitcode, limits))
    if message[0] == "error":
        raise ChildFailed(int(message[1]), str(message[2]))
    result: T = message[1]
    return result


if __name__ == "__main__":  # the helper; `at` must be the imported module's, not __main__'s
    from stackgraph.ingest.lanes.isolated import _serve as serve

    serve(
        Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False)
    )
