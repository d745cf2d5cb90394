"""`python -m stackgraph.bench [--only NAME ...] [--quick]`: run benchmarks, print markdown."""

from __future__ import annotations

import argparse
import importlib
import sys

from . import BENCHES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stackgraph.bench")
    parser.add_argument("--only", action="append", choices=sorted(BENCHES))
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args(argv)
    for name in args.only or list(BENCHES):
        module = importlib.import_module(BENCHES[name])
        sys.stdout.write(module.run(quick=args.quick) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
