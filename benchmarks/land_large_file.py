"""Measure landing of one large JSON-lines file: time, throughput and the
peak memory of the landing process tree (Python driver + Spark JVM).

    .venv/bin/python benchmarks/land_large_file.py --size-gb 1

Generates a file of realistic CES-sized messages in a temporary directory
(or lands --file), runs `python -m python_ingest land` as a subprocess
against a fresh temporary lakehouse, samples the resident memory of the
process and its children from /proc every 0.2 s, and prints a report.
Not a test: absolute times on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def generate(path: Path, size_bytes: int) -> int:
    """Write CES-like messages until the file reaches `size_bytes`; returns the line count."""
    payload = "x" * 700
    lines = 0
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < size_bytes:
            row = json.dumps({"id": str(lines), "note": payload})
            message = json.dumps(
                {
                    "specversion": "1.0",
                    "type": "com.microsoft.SQL.CES.DML.V1",
                    "source": "/",
                    "id": f"msg-{lines}",
                    "operation": "INS",
                    "time": "2025-03-14T16:45:01.000Z",
                    "data": json.dumps({"eventrow": {"old": "{}", "current": row}}),
                }
            )
            handle.write(message + "\n")
            written += len(message) + 1
            lines += 1
    return lines


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of a process and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
        stack.extend(children.get(current, []))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--file", type=Path, help="land this file instead of generating one")
    parser.add_argument("--chunk-size", type=int, default=50_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="cdc-land-bench-") as scratch:
        work = Path(scratch)
        path = args.file
        if path is None:
            path = work / "large.jsonl"
            started = time.monotonic()
            lines = generate(path, int(args.size_gb * 2**30))
            print(
                f"generated {path.stat().st_size / 2**30:.2f} GiB, {lines:,} lines "
                f"in {time.monotonic() - started:.0f}s",
                flush=True,
            )
        env = {**os.environ, "CDC_LAKEHOUSE_DIR": str(work / "lakehouse")}
        command = [
            sys.executable,
            "-m",
            "python_ingest",
            "land",
            "--format",
            "ces",
            "--container",
            "jsonl",
            "--chunk-size",
            str(args.chunk_size),
            str(path),
        ]
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=ROOT, env=env)
        peak = 0

        def sample() -> None:
            nonlocal peak
            while process.poll() is None:
                peak = max(peak, tree_rss_bytes(process.pid))
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = process.wait()
        sampler.join()
        # land started the lakehouse's metastore service; it must not outlive the lakehouse.
        stop = [sys.executable, "-m", "python_ingest", "lakehouse", "stop"]
        subprocess.run(stop, cwd=ROOT, env=env, capture_output=True, check=False)
        elapsed = time.monotonic() - started
        size = path.stat().st_size
        print(
            f"exit {code}; {size / 2**30:.2f} GiB landed in {elapsed:.0f}s "
            f"({size / 2**20 / elapsed:.1f} MiB/s); peak RSS of land (Python + JVM): "
            f"{peak / 2**20:,.0f} MiB",
            flush=True,
        )
        return code


if __name__ == "__main__":
    sys.exit(main())
