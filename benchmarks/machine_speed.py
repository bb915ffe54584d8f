"""How fast this machine's cores are, in one line, so that suite times from different machines
can be told apart (docs/testing.md, "How long it takes").

The suite's time is CPU-bound on two cores, and the machines it runs on differ: the same suite
took 34 minutes on one and more than 90 on another. This probe times a fixed pure-Python loop
in CPU seconds of this process (not wall time, so another process on the other core changes
it little) and prints the best of a few rounds. `scripts/test.sh` prints it before pytest, so
every CI log says which kind of machine it ran on.

    .venv/bin/python benchmarks/machine_speed.py [--additions N] [--rounds K]
"""

from __future__ import annotations

import argparse
import time

ADDITIONS = 10_000_000


def loop_seconds(additions: int) -> float:
    """CPU seconds of this process for `additions` integer additions in a Python loop."""
    started = time.process_time()
    total = 0
    for number in range(additions):
        total += number
    assert total == additions * (additions - 1) // 2
    return time.process_time() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--additions", type=int, default=ADDITIONS, help="additions per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the best one counts")
    args = parser.parse_args(argv)
    best = min(loop_seconds(args.additions) for _ in range(max(1, args.rounds)))
    print(
        f"machine speed: {args.additions:,} additions in a Python loop took {best:.2f} CPU s "
        f"(best of {max(1, args.rounds)}; lower is faster)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
