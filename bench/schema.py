"""The shape of every committed benchmark result, `bench/results/<family>_h200.json` (docs/benchmarks.md,
"Results files"), and the code that builds it. No torch, no GPU: bench/summarize.py reads results with
it on any machine; bench/common.py re-exports `peer` and `record` and adds `write_family`.

A family file: {"family", "environment", "copy_bandwidth_bytes_per_s", "method", "records": [record]}.
A record: one (contract, instance, shape) timed in one run, with its peers from the same run.
Evidence files (floors, numerics, timelines: `bench/results/evidence/*.json`) share the envelope, not
the record fields.
"""
from __future__ import annotations

ENVIRONMENT_FIELDS = ("gpu", "sms", "l2_bytes", "torch", "cuda", "date", "git_revision")
ENVELOPE_FIELDS = ("family", "environment", "copy_bandwidth_bytes_per_s", "method", "records")
RECORD_FIELDS = ("contract", "instance", "shape", "netra_graph_us", "netra_eager_us", "correct", "comparison", "peers", "best_peer",
                 "best_peer_graph_us", "speedup_vs_best_peer", "bytes", "roofline_us", "floor_us", "target_us", "meets_target")
PEER_FIELDS = ("name", "graph_us", "exact")


def peer(name: str, graph_us: float | None, exact: bool, eager_us: float | None = None, note: str | None = None, **extra) -> dict:
    """A peer timed in the same run. `exact`: it meets the contract's comparison policy (checked in
    the same run); a peer that does not stays in the record but is never the best peer."""
    p = {"name": name, "graph_us": graph_us, "exact": bool(exact)}
    if eager_us is not None:
        p["eager_us"] = eager_us
    if note:
        p["note"] = note
    p.update(extra)
    return p


def record(contract: str, instance: str, shape: dict, netra_graph_us: float, netra_eager_us: float | None, correct: bool | None,
           comparison: str, peers: list[dict], bytes_moved: int | float | None, copy_bandwidth: float | None,
           floor_us: float | None = None, target_us: float | None = None, roofline_us: float | None = None, **extra) -> dict:
    """One record with the derived fields filled in: best_peer = the fastest peer (graph-replayed)
    that meets the policy, speedup_vs_best_peer = its time / netra's, roofline_us = bytes / copy
    bandwidth (unless given: e.g. flops over a measured rate), meets_target = netra's graph time <=
    target_us (None without a target). `correct`: True / False from a check in the same run, None
    when this run did not check (shown as unchecked, never as a win). Extra keyword fields are kept."""
    exact = [p for p in peers if p["exact"] and p.get("graph_us") is not None]
    best = min(exact, key=lambda p: p["graph_us"]) if exact else None
    if roofline_us is None and bytes_moved is not None and copy_bandwidth:
        roofline_us = bytes_moved / copy_bandwidth * 1e6
    r = {
        "contract": contract, "instance": instance, "shape": dict(shape),
        "netra_graph_us": netra_graph_us, "netra_eager_us": netra_eager_us,
        "correct": correct, "comparison": comparison, "peers": list(peers),
        "best_peer": best["name"] if best else None,
        "best_peer_graph_us": best["graph_us"] if best else None,
        "speedup_vs_best_peer": best["graph_us"] / netra_graph_us if best and netra_graph_us else None,
        "bytes": bytes_moved, "roofline_us": roofline_us, "floor_us": floor_us, "target_us": target_us,
        "meets_target": (netra_graph_us <= target_us) if target_us is not None and netra_graph_us is not None else None,
    }
    r.update(extra)
    return r


def family_document(family: str, environment: dict, copy_bandwidth: float | None, method: str, records: list[dict], **extra) -> dict:
    doc = {"family": family, "environment": environment, "copy_bandwidth_bytes_per_s": copy_bandwidth, "method": method,
           "records": records}
    doc.update(extra)
    return doc


def problems(doc: dict, evidence: bool = False) -> list[str]:
    """What keeps `doc` from being a family file (evidence=True: only the envelope is required)."""
    out = [f"missing field {k!r}" for k in ENVELOPE_FIELDS if k not in doc]
    out += [f"environment lacks {k!r}" for k in ENVIRONMENT_FIELDS if k not in doc.get("environment", {})]
    if evidence:
        return out
    for i, r in enumerate(doc.get("records", [])):
        out += [f"record {i} lacks {k!r}" for k in RECORD_FIELDS if k not in r]
        for j, p in enumerate(r.get("peers", [])):
            out += [f"record {i} peer {j} lacks {k!r}" for k in PEER_FIELDS if k not in p]
        if r.get("best_peer") is not None and not any(p["name"] == r["best_peer"] and p.get("exact") for p in r.get("peers", [])):
            out.append(f"record {i}: best_peer {r['best_peer']!r} is not an exact peer of the record")
    return out
