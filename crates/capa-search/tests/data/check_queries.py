#!/usr/bin/env python3
"""Sanity-check queries.jsonl against the tool catalogs.

Checks that every line parses, has a non-empty query and relevant list, that
every relevant address (<source>.<name>) exists in the three catalogs, that no
query or relevant address is repeated, and prints per-catalog counts.

Usage: python3 check_queries.py [--catalogs DIR] [--queries FILE]
Exit status is 1 if any check fails.
"""
import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CATALOGS = ("github.jsonl", "docker-registry.jsonl", "livemcpbench.jsonl")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--catalogs", default="/work/shared/fixtures/catalogs")
    ap.add_argument("--queries", default=os.path.join(HERE, "queries.jsonl"))
    args = ap.parse_args()

    owner = {}  # address -> catalog file
    sources = collections.defaultdict(set)  # catalog -> sources
    for cat in CATALOGS:
        with open(os.path.join(args.catalogs, cat), encoding="utf-8") as f:
            for line in f:
                t = json.loads(line)
                owner[f"{t['source']}.{t['name']}"] = cat
                sources[cat].add(t["source"])

    errors = []
    seen = set()
    touching = collections.Counter()  # catalog -> queries with >=1 relevant tool in it
    only = collections.Counter()  # catalog -> queries whose relevant tools are all in it
    covered = collections.defaultdict(set)  # catalog -> sources used in labels
    sizes = collections.Counter()
    n = 0
    with open(args.queries, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                errors.append(f"line {lineno}: blank line")
                continue
            try:
                e = json.loads(line)
            except json.JSONDecodeError as ex:
                errors.append(f"line {lineno}: bad JSON: {ex}")
                continue
            n += 1
            q, rel = e.get("query"), e.get("relevant")
            if set(e) - {"kind"} != {"query", "relevant"}:
                errors.append(f"line {lineno}: unexpected keys {sorted(e)}")
            if e.get("kind", "everyday") not in ("everyday", "paraphrase", "task"):
                errors.append(f"line {lineno}: kind must be everyday, paraphrase or task")
            if not isinstance(q, str) or not q.strip():
                errors.append(f"line {lineno}: empty query")
                continue
            key = " ".join(q.lower().split())
            if key in seen:
                errors.append(f"line {lineno}: duplicate query {q!r}")
            seen.add(key)
            if not isinstance(rel, list) or not rel:
                errors.append(f"line {lineno}: empty relevant list for {q!r}")
                continue
            if len(set(rel)) != len(rel):
                errors.append(f"line {lineno}: repeated address in {q!r}")
            cats = set()
            for a in rel:
                if a not in owner:
                    errors.append(f"line {lineno}: unknown address {a!r} in {q!r}")
                    continue
                cats.add(owner[a])
                # source ids never contain '.', so the source is before the first dot
                covered[owner[a]].add(a.split(".", 1)[0])
            for c in cats:
                touching[c] += 1
            if len(cats) == 1:
                only[next(iter(cats))] += 1
            sizes[len(rel)] += 1

    print(f"queries: {n}")
    for c in CATALOGS:
        print(f"  {c:24s} touching {touching[c]:3d}  only-this-catalog {only[c]:3d}  "
              f"sources labelled {len(covered[c])}/{len(sources[c])}")
    print(f"  mixed (tools from >1 catalog): {n - sum(only.values())}")
    print("  relevant-list sizes: " + ", ".join(f"{k}:{v}" for k, v in sorted(sizes.items())))
    for c in CATALOGS:
        missing = sorted(sources[c] - covered[c])
        if missing:
            print(f"  {c}: sources with no labelled tool: {', '.join(missing)}")
    for err in errors:
        print("ERROR", err, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
