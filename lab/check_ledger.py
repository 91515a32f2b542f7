"""Checks lab/ledger.json against the tree: every row's data files exist, every patch applies
(`git apply --check`) at the row's recorded base commit, after the patches the row requires, and
every patch and data file under lab/<family>/ belongs to some row.

The apply check needs the history: in a clone without it (shallow, no .git, or a base commit it
does not hold) those rows are reported as SKIP and the script exits 77 (CTest: skipped), after
checking everything else. Exit 1 on any failure.

usage: python3 lab/check_ledger.py [--root DIR]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def git(root: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, env=env)


def history(root: str) -> str | None:
    """None when the repository can check patches at old commits, else why not."""
    r = git(root, "rev-parse", "--is-shallow-repository")
    if r.returncode != 0:
        return "not a git checkout with history (" + (r.stderr.strip().splitlines() or ["git failed"])[-1] + ")"
    if r.stdout.strip() == "true":
        return "shallow clone (fetch with full history: git fetch --unshallow)"
    return None


def applies(root: str, base: str, patch: str, requires: list[str]) -> tuple[bool, str]:
    """Applies `requires` then checks `patch` at `base` in a temporary index (the work tree and the
    real index are not touched)."""
    fd, index = tempfile.mkstemp(prefix="netra-ledger-index-")
    os.close(fd)
    os.unlink(index)  # read-tree writes a fresh index there
    env = dict(os.environ, GIT_INDEX_FILE=index)
    try:
        r = git(root, "read-tree", base, env=env)
        if r.returncode != 0:
            return False, r.stderr.strip()
        for pre in requires:
            r = git(root, "apply", "--cached", os.path.join(root, pre), env=env)
            if r.returncode != 0:
                return False, f"required patch {pre}: " + r.stderr.strip()
        r = git(root, "apply", "--cached", "--check", os.path.join(root, patch), env=env)
        return r.returncode == 0, r.stderr.strip()
    finally:
        if os.path.exists(index):
            os.unlink(index)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = p.parse_args().root
    with open(os.path.join(root, "lab", "ledger.json")) as f:
        rows = json.load(f)["rows"]

    failures, skipped, checked = [], [], 0
    required = ("id", "family", "kernel", "hypothesis", "base", "patch", "data", "result", "verdict")
    ids = [r.get("id") for r in rows]
    if len(set(ids)) != len(ids):
        failures.append("duplicate ids: " + ", ".join(sorted({i for i in ids if ids.count(i) > 1})))
    referenced = set()
    no_history = history(root)
    for r in rows:
        missing = [k for k in required if k not in r]
        if missing:
            failures.append(f"{r.get('id')}: missing fields {missing}")
            continue
        if not r["data"]:
            failures.append(f"{r['id']}: no data file")
        for d in r["data"]:
            referenced.add(d)
            if not os.path.isfile(os.path.join(root, d)):
                failures.append(f"{r['id']}: data file {d} does not exist")
        for s in [r.get("script")] if r.get("script") else []:
            if not os.path.isfile(os.path.join(root, s)):
                failures.append(f"{r['id']}: script {s} does not exist")
        if r["patch"] is None:  # measured between committed revisions: the base must still name one
            if not no_history and git(root, "cat-file", "-e", r["base"] + "^{commit}").returncode != 0:
                skipped.append(f"{r['id']}: base commit {r['base']} is not in this clone")
            continue
        patches = [r["patch"], *r.get("requires", [])]
        referenced.update(patches)
        absent = [x for x in patches if not os.path.isfile(os.path.join(root, x))]
        if absent:
            failures.append(f"{r['id']}: patch {absent} does not exist")
            continue
        if no_history:
            skipped.append(f"{r['id']}: {no_history}")
            continue
        if git(root, "cat-file", "-e", r["base"] + "^{commit}").returncode != 0:
            skipped.append(f"{r['id']}: base commit {r['base']} is not in this clone")
            continue
        ok, why = applies(root, r["base"], r["patch"], r.get("requires", []))
        checked += 1
        if not ok:
            failures.append(f"{r['id']}: {r['patch']} does not apply at {r['base'][:12]}: {why}")

    for path in sorted(glob.glob(os.path.join(root, "lab", "*", "*.patch")) +
                       glob.glob(os.path.join(root, "lab", "*", "data", "*"))):
        rel = os.path.relpath(path, root)
        if rel not in referenced:
            failures.append(f"{rel} is in lab/ but in no ledger row")

    print(f"ledger: {len(rows)} rows; {checked} patches applied at their base commits")
    for s in skipped:
        print("SKIP", s)
    for f in failures:
        print("FAIL", f)
    if failures:
        return 1
    if skipped:
        print(f"SKIPPED: {len(skipped)} patch checks need the repository's history")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
