"""How fast this machine's cores are, in one line, so that suite times from different machines
can be told apart (docs/testing.md, "How long it takes").

The suite's time is CPU-bound on two cores, and the machines it runs on differ: the same suite
took 34 minutes on one and more than 90 on another. This probe times a fixed pure-Python loop
in CPU seconds of this process (not wall time, so another process on the other core changes
it little), and the first touch of fresh memory, page by page (what every JVM pays for its
heap; in a virtual machine it can cost several times what it does on bare metal), and prints
the best of a few rounds of each. `scripts/test.sh` prints it before pytest, so
every CI log says which kind of machine it ran on.

    .venv/bin/python benchmarks/machine_speed.py [--additions N] [--mebibytes M] [--rounds K]
"""

from __future__ import annotations

import argparse
import mmap
import time

ADDITIONS = 10_000_000
MEBIBYTES = 256
PAGE = mmap.PAGESIZE


def loop_seconds(additions: int) -> float:
    """CPU seconds of this process for `additions` integer additions in a Python loop."""
    started = time.process_time()
    total = 0
    for number in range(additions):
        total += number
    assert total == additions * (additions - 1) // 2
    return time.process_time() - started


def first_touch_seconds(mebibytes: int) -> float:
    """Wall seconds to write one byte into each page of `mebibytes` MiB of fresh anonymous
    memory (each write a page fault: the kernel finds and zeroes a page)."""
    size = mebibytes << 20
    memory = mmap.mmap(-1, size)
    try:
        started = time.perf_counter()
        for offset in range(0, size, PAGE):
            memory[offset] = 1
        return time.perf_counter() - started
    finally:
        memory.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--additions", type=int, default=ADDITIONS, help="additions per round")
    parser.add_argument("--mebibytes", type=int, default=MEBIBYTES, help="fresh memory touched per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the best one counts")
    args = parser.parse_args(argv)
    rounds = range(max(1, args.rounds))
    best = min(loop_seconds(args.additions) for _ in rounds)
    touch = min(first_touch_seconds(args.mebibytes) for _ in rounds)
    print(
        f"machine speed: {args.additions:,} additions in a Python loop took {best:.2f} CPU s, "
        f"the first touch of {args.mebibytes} MiB {touch:.2f} s "
        f"(best of {len(rounds)}; lower is faster)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
