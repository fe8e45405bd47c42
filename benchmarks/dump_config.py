#!/usr/bin/env python3
"""Write the engine configuration (JSON) a spec resolves to, for the engine-only
runner `cargo run --release --example run_config -- OUT.json` (profiling, callgrind).

    python benchmarks/dump_config.py SPEC.toml OUT.json
"""

import json
import sys

from ccbench.spec import load_spec


def main() -> None:
    spec, out = sys.argv[1], sys.argv[2]
    with open(out, "w") as f:
        json.dump(load_spec(spec).resolve(), f)


if __name__ == "__main__":
    main()
