"""Project commands run by the tests in process groups of their own, so that a command's
Spark JVM never outlives it, however the command ends (SIGKILL included)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping
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
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr_apart else subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, errors = process.communicate(timeout=timeout)
    finally:
        kill_group(process.pid)
    return process.returncode, output, errors or ""
