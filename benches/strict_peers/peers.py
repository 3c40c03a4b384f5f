#!/usr/bin/env python3
"""Time per schema of the strict conversion against two Python peers.

Peers: the OpenAI Agents SDK's ensure_strict_json_schema (pip openai-agents)
and Pydantic AI's OpenAIJsonSchemaTransformer (pip pydantic-ai-slim), both
over the public corpus in tests/fixtures/corpus. Prints a table and the ratio
of the fastest peer's time to ours. See README.md in this folder.
"""

import copy
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ROUNDS = 20


def corpus():
    schemas = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/corpus/*.tools.json"))):
        with open(path) as f:
            schemas += [t["inputSchema"] for t in json.load(f)["tools"]]
    return schemas


def ours():
    out = subprocess.run(
        ["cargo", "bench", "--quiet", "--bench", "strict_peers"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    return json.loads(line)


def time_peer(name, convert, schemas):
    ok = sum(1 for s in schemas if attempt(convert, s))
    start = time.perf_counter()
    for _ in range(ROUNDS):
        for schema in schemas:
            attempt(convert, schema)
    ns = (time.perf_counter() - start) * 1e9 / (ROUNDS * len(schemas))
    return {"peer": name, "converted": ok, "ns_per_schema": ns}


def attempt(convert, schema):
    try:
        convert(schema)
        return True
    except Exception:
        return False


def peers():
    from agents.strict_schema import ensure_strict_json_schema
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

    return [
        # Both peers are given a private copy, as ours reads its input by reference
        # and builds a new value.
        ("openai-agents ensure_strict_json_schema",
         lambda s: ensure_strict_json_schema(copy.deepcopy(s), _reject_open_objects=True)),
        ("pydantic-ai OpenAIJsonSchemaTransformer(strict=True)",
         lambda s: OpenAIJsonSchemaTransformer(copy.deepcopy(s), strict=True).walk()),
    ]


def main():
    schemas = corpus()
    rust = ours()
    rows = [time_peer(name, fn, schemas) for name, fn in peers()]
    fastest = min(r["ns_per_schema"] for r in rows)
    print(f"schemas: {len(schemas)}")
    print(f"{'converter':55} {'converted':>9} {'us/schema':>10}")
    print(f"{'mcp-adapters strict::convert':55} {rust['converted']:>9} {rust['ns_per_schema'] / 1000:>10.2f}")
    for r in rows:
        print(f"{r['peer']:55} {r['converted']:>9} {r['ns_per_schema'] / 1000:>10.2f}")
    print(f"ratio to the fastest peer: {fastest / rust['ns_per_schema']:.1f}x (goal: 50x)")


if __name__ == "__main__":
    sys.exit(main())
