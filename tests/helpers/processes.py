"""Project commands run by the tests in process groups of their own, so that a command's
Spark JVM never outlives it, however the command ends (SIGKILL included)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from python_ingest.landing import KILL_ENV
from tests.helpers.lakehouse_query import ROOT


def kill_group(group: int) -> None:
    """SIGKILL the process group `group` and wait (up to 30 s) until none of it is left."""
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def start_in_group(
    command: list[str], env: Mapping[str, str], stderr_apart: bool = False
) -> subprocess.Popen:
    """Start `command` from the repository root in a process group of its own (stop it with
    kill_group), its output (and error output, unless `stderr_apart`) in a text pipe."""
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr_apart else subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def run_in_group(
    command: list[str],
    lakehouse: Path,
    kill_at: str | None = None,
    timeout: float = 300,
    stderr_apart: bool = False,
    environment: Mapping[str, str] | None = None,
) -> tuple[int, str, str]:
    """Run `command` from the repository root against the lakehouse at `lakehouse`, with the
    landing kill switch ``$CDC_LAND_KILL_AT`` set to `kill_at` (unset without it) and the
    variables of `environment` besides; then kill what is left of its process group. Returns
    the exit status, the output, and the error output when `stderr_apart` (else it is in the
    output, and '' is returned for it)."""
    env = {**os.environ, **(environment or {}), "CDC_LAKEHOUSE_DIR": str(lakehouse)}
    env.pop(KILL_ENV, None)
    if kill_at:
        env[KILL_ENV] = kill_at
    process = start_in_group(command, env, stderr_apart)
    try:
        output, errors = process.communicate(timeout=timeout)
    finally:
        kill_group(process.pid)
    return process.returncode, output, errors or ""


COMMITTED = re.compile(
    r"^(bronze\.raw_\w+): committed ([\d,]+) message\(s\) from (\d+) file\(s\) in [\d.]+s "
    r"\([\d,]+ messages/s\)$"
)


class Watch:
    """A `land --watch` process in a process group of its own, its output read as it comes."""

    def __init__(
        self,
        lakehouse: Path,
        sources: list[str],
        kill_at: str | None = None,
        interval: float = 0.5,
        chunk_size: int = 7,
    ) -> None:
        env = {**os.environ, "CDC_LAKEHOUSE_DIR": str(lakehouse)}
        env.pop(KILL_ENV, None)
        if kill_at:
            env[KILL_ENV] = kill_at
        args = ["land", "--watch", "--interval", str(interval), "--chunk-size", str(chunk_size)]
        for source in sources:
            args += ["--source", source]
        self.process = start_in_group([sys.executable, "-m", "python_ingest", *args], env)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def committed(self) -> dict[str, int]:
        """Messages committed so far, per bronze table, from the progress lines."""
        totals: dict[str, int] = {}
        for line in self.lines:
            if found := COMMITTED.match(line):
                totals[found[1]] = totals.get(found[1], 0) + int(found[2].replace(",", ""))
        return totals

    def wait_for(self, what: str, condition: Callable[[], bool], timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self._reader.join(timeout=5)
                raise AssertionError(f"land --watch: no {what}; output:\n{self.output[-4000:]}")
            time.sleep(0.2)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        try:
            self.process.send_signal(sig)
            return self.process.wait(timeout=120)
        finally:
            kill_group(self.process.pid)
            self._reader.join(timeout=5)
