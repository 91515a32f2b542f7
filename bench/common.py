"""Timing utilities shared by netra's GPU benchmarks.

Method (docs/benchmarks.md): CUDA events; warm-up first; every measured call reads a different
input set, and the sets together exceed the L2 several times, so each call reads cold data;
eager = a burst of back-to-back calls on one stream; graph = the same calls captured once into a
CUDA graph and replayed; the reported figure is the median over repetitions of the time per call.
Results are written as JSON with the GPU, date and git revision: a family's records in the committed
shape by record(), peer() and write_family() (bench/schema.py; usage in write_family's docstring).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
from typing import Callable, Sequence

import torch

Call = Callable[[], object]


def l2_bytes() -> int:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return int(getattr(props, "L2_cache_size", 60 * 1024 * 1024))


def rotation(bytes_per_call: int, factor: float = 3.0, minimum: int = 2, maximum: int = 4096) -> int:
    """How many distinct input sets make one pass over them touch `factor` x L2."""
    return max(minimum, min(maximum, math.ceil(factor * l2_bytes() / max(1, bytes_per_call))))


def _median_us_per_call(run_once: Callable[[], None], calls_per_run: int, reps: int) -> tuple[float, list[float]]:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(reps):
        start.record()
        run_once()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0 / calls_per_run)
    return statistics.median(samples), samples


def bench_eager(calls: Sequence[Call], reps: int = 30, warmup: int = 3) -> dict:
    """Median µs per call over `reps` bursts of all `calls` (each on its own input set)."""
    def burst():
        for c in calls:
            c()
    for _ in range(warmup):
        burst()
    torch.cuda.synchronize()
    median, samples = _median_us_per_call(burst, len(calls), reps)
    return {"median_us": median, "min_us": min(samples), "max_us": max(samples), "reps": reps, "calls_per_rep": len(calls)}


def bench_graph(calls: Sequence[Call], reps: int = 30, warmup: int = 3) -> dict:
    """Capture all `calls` once into a CUDA graph; median µs per call over `reps` replays."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for c in calls:  # warm (lazy init, autotuning) outside capture
            c()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for c in calls:
            c()
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    median, samples = _median_us_per_call(graph.replay, len(calls), reps)
    return {"median_us": median, "min_us": min(samples), "max_us": max(samples), "reps": reps, "calls_per_rep": len(calls)}


def copy_bandwidth(nbytes: int = 2 << 30, reps: int = 20) -> float:
    """Measured device-to-device copy bandwidth in bytes/s, counting bytes read plus written."""
    src = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    median, _ = _median_us_per_call(lambda: dst.copy_(src), 1, reps)
    del src, dst
    torch.cuda.empty_cache()
    return 2.0 * nbytes / (median * 1e-6)


def git_revision() -> str:
    if os.environ.get("NETRA_GIT_REVISION"):
        return os.environ["NETRA_GIT_REVISION"]
    try:
        return subprocess.check_output(["git", "rev-parse", "HEAD"], text=True, stderr=subprocess.DEVNULL).strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def environment() -> dict:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "gpu": props.name,
        "sms": props.multi_processor_count,
        "l2_bytes": l2_bytes(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_revision": git_revision(),
    }


def write_results(path: str, benchmark: str, records: list[dict], extra: dict | None = None) -> None:
    doc = {"benchmark": benchmark, "environment": environment(), "records": records}
    if extra:
        doc.update(extra)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def run_program(argv: Sequence[str] | None = None) -> tuple[str, list[dict], float]:
    """For the scripts that record a standalone CUDA program's JSON lines (--program BIN --out FILE):
    runs the program and returns the output path, its records and the copy bandwidth (measured first)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    bandwidth = copy_bandwidth()
    out = subprocess.run([a.program], check=True, capture_output=True, text=True, timeout=300).stdout
    return a.out, [json.loads(line) for line in out.splitlines() if line.startswith("{")], bandwidth


def print_table(rows: list[dict], columns: list[str]) -> None:
    widths = [max(len(c), *(len(_fmt(r.get(c))) for r in rows)) for c in columns]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    for r in rows:
        print("  ".join(_fmt(r.get(c)).ljust(w) for c, w in zip(columns, widths)))


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    return "" if v is None else str(v)


# ---- results in the committed shape (bench/schema.py, docs/benchmarks.md "Results files") ----------
try:
    from bench.schema import family_document, peer, problems, record  # noqa: E402,F401
except ImportError:  # run as a script from inside bench/
    from schema import family_document, peer, problems, record  # noqa: E402,F401


def checked_peer(name: str, make: Callable[[int], Call], sets: int, check: Callable[[], dict], note: str, reps: int = 10) -> dict:
    """A peer over `sets` rotated input sets (`make(s)` gives the call for set s): its first call is
    checked by `check()` (a dict with max_abs_err, beyond_bound, cosine), then it is timed graph-replayed
    and eager; a peer that does not take the call is recorded as not run, with the reason."""
    try:
        calls = [make(s) for s in range(sets)]
        calls[0]()
        torch.cuda.synchronize()
        cmp = check()
        g = bench_graph(calls, reps=reps)["median_us"]
        e = bench_eager(calls, reps=reps)["median_us"]
        return peer(name, g, exact=cmp["beyond_bound"] == 0, eager_us=e,
                    note=f"max |err| {cmp['max_abs_err']:.3g}, beyond bound {cmp['beyond_bound']}, cosine {cmp['cosine']}; {note}")
    except Exception as ex:  # a backend that does not take this call
        return peer(name, None, exact=False, note=f"not run: {type(ex).__name__}: {str(ex).splitlines()[0][:160]}")


def write_family(path: str, family: str, records: list[dict], copy_bandwidth: float | None, method: str,
                 evidence: bool = False, **extra) -> dict:
    """Writes a results file in the committed shape; `evidence=True` for files whose records are not
    kernel timings (floors, numerics, timelines: only the envelope is checked). Raises ValueError on
    a malformed document, before writing anything.

    A family's benchmark builds one record per (contract, instance, shape) and writes them at once:

        from bench import common
        bw = common.copy_bandwidth()                       # measured in the same run
        peers = [common.peer("torch", t_graph_us, exact=torch_meets_policy, eager_us=t_eager_us,
                             note="why it is or is not exact")]
        rec = common.record("rms_norm", "rms-norm-sm90a-...", {"rows": m}, netra_graph_us, netra_eager_us,
                            correct=ok,                     # the contract's check in this run (None: not checked)
                            comparison="bitwise against the host oracle", peers=peers,
                            bytes_moved=nbytes, copy_bandwidth=bw, floor_us=None, target_us=None)
        common.write_family("bench/results/norm_h200.json", "norm", [rec, ...], bw,
                            method="one line: how a figure was timed")

    record() fills best_peer (the fastest peer with exact=True), best_peer_graph_us,
    speedup_vs_best_peer, roofline_us (bytes / bandwidth unless roofline_us= is given) and
    meets_target; extra keyword arguments stay in the record. write_family() adds the environment
    (GPU, SMs, L2, torch, CUDA, date, git revision). Several scripts filling one family file:
    merge_family(). bench/summarize.py then puts the family into docs/results.md and draws
    docs/plots/<family>.png; nothing else needs to change."""
    doc = family_document(family, environment(), copy_bandwidth, method, records, **extra)
    bad = problems(doc, evidence=evidence)
    if bad:
        raise ValueError(f"{path}: not in the results shape: " + "; ".join(bad[:8]))
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    return doc


def merge_family(path: str, family: str, records: list[dict], replaces: Callable[[dict], bool], copy_bandwidth: float | None,
                 method: str, **extra) -> dict:
    """write_family for a family file that several scripts fill (moe: bench/moe_routing.py and
    bench/moe_block.py): `records` take the place of the file's records for which `replaces(record)`
    is true, the others stay, as do the file's extra fields (a script names its own, e.g. its
    environment, in `extra`). The envelope's environment, bandwidth and method are this run's."""
    kept, kept_extra = [], {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
        if old.get("family") == family:
            kept = [r for r in old.get("records", []) if not replaces(r)]
            kept_extra = {k: v for k, v in old.items() if k not in ("family", "environment", "copy_bandwidth_bytes_per_s", "method", "records")}
    kept_extra.update(extra)
    return write_family(path, family, kept + records, copy_bandwidth, method, **kept_extra)
