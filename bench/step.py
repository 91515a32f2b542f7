"""The integrated step on the H200: the synthetic Qwen3.6-35B-A3B-FP8 decode and verify step
(netra.step) captured per graph bucket, measured by the article's evidence ladder, written as
bench/results/step_h200.json (family "step") and docs/step-coverage.md.

Per bucket (decode B in plan.DECODE_BUCKETS at KV length --kv-len, verify B in plan.VERIFY_BUCKETS):
  1. the teacher-forced oracle on the model's first 4 layers (every op kind: netra's op on the torch
     path's own inputs, each output against the op's derived bound, netra.step.oracle);
  2. first call (eager, recording which implementation served each op: the coverage table), warm
     eager, capture (graph-pool bytes), graph replay == eager bit for bit (GDN pools restored before
     each), 10 replays allocate nothing, replay median;
  3. the pure torch path (every family on the framework's implementation), eager for the
     end-to-end figure (relative logit distance, greedy agreement, each disagreement's margin;
     reported, not bounded: docs/step.md) and graph-replayed;
  4. bytes floor (plan.step_bytes with the distinct experts the run's routes touched) / measured
     copy bandwidth, netra's ratio.
Before the buckets: the attention glue's selection (model.select_glue) and the dense path's
measured choice per group and row count (model.tune_dense, or --dense-table). After them:
per-family device time, critical-path time and launches (profiler; --profile-buckets, default
decode 1 / 64 and verify 64) with the floor's part of each family, AB/BA and single-family
toggles, 1000 replays of one bucket with fixed inputs (one output), changing inputs == eager, the teacher-forced oracle over all layers (--forced, per layer and op;
the first before the buckets), the per-layer divergence trace. --headline-child: one fresh process timing the headline buckets
(bench/device/step_session.sh runs three, --merge-fresh adds their median of medians). Every part
runs inside the --seconds budget; a part that did not fit is recorded as skipped.

usage: python3 bench/step.py [--layers 40] [--kv-len 8192] [--seconds 180] [--out-dir DIR]
       python3 bench/step.py --tune-dense-only --dense-table T.json [--dense-seconds 40]
       python3 bench/step.py --headline-child --seed N > fresh_N.json
       python3 bench/step.py --merge-fresh fresh_0.json,fresh_1.json,fresh_2.json --out-dir DIR
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

from bench import common  # noqa: E402
import netra.torch_ops as ops  # noqa: E402
from netra import gdn as _gdn  # noqa: E402
from netra.step import model, oracle, plan  # noqa: E402

ALL_TORCH = {f: "torch" for f in model.FAMILIES}
HEADLINE = (("decode", 1), ("decode", 64), ("decode", 128), ("verify", 1))


def log(*a):
    print(*a, flush=True)


class Clock:
    def __init__(self, seconds):
        self.end = time.time() + seconds

    def left(self):
        return self.end - time.time()


replay_us = model.replay_us


def eager_us(fn, reps):
    samples = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t) * 1e6)
    return statistics.median(samples)


def end_to_end(net_logits, ref_logits, net_tokens, ref_tokens):
    """The end-to-end figure of netra's step against the torch path (reported, not bounded: FP8
    codes and routes that flip under each op's bounded error compound over the layers): relative
    L2 logit distance, greedy agreement, every disagreement's margin (the reference's logit of its
    token minus its logit of netra's token) and the row's max logit distance."""
    a, b = net_logits.double(), ref_logits.double()
    agree = net_tokens == ref_tokens
    dis = []
    for r in (~agree).nonzero().flatten().tolist():
        dis.append({"row": r, "margin": float(b[r, ref_tokens[r]] - b[r, net_tokens[r]]), "row_max_err": float((a[r] - b[r]).abs().max())})
    return {"rel_l2": float((a - b).norm() / b.norm()), "max_abs_err": float((a - b).abs().max()), "agreement": float(agree.float().mean()),
            "rows": int(agree.numel()), "disagreements": dis, "argmax_exact": bool(torch.equal(net_tokens, torch.argmax(net_logits, dim=-1)))}


def distinct_experts(keep, rows, cfg):
    """Distinct routed experts per layer among the live rows' routes (from the eager run)."""
    return [int(torch.unique(ids[:rows, :cfg.top_k]).numel()) for ids in keep if isinstance(ids, torch.Tensor)]


class Runner:
    def __init__(self, a):
        self.a, self.cfg = a, plan.ModelConfig(layers=a.layers)
        self.clock = Clock(a.seconds)
        self.doc = {"skipped": [], "setup": {}, "single_family_toggles": [], "abba": [], "replay_invariants": {}, "end_to_end": [],
                    "teacher_forced": []}
        self.coverage, self.workspace, self.records, self.prefix_rows = [], [], [], []
        self.gen = torch.Generator().manual_seed(a.seed)

    # -- the world --------------------------------------------------------------------------------
    def setup(self):
        cfg, a, d = self.cfg, self.a, self.doc["setup"]
        t = time.perf_counter()
        self.bw = common.copy_bandwidth(1 << 30, reps=10)
        d["copy_bandwidth_s"] = time.perf_counter() - t
        self.matrix_rate = matrix_rate()
        d["bf16_matrix_flops_per_s"] = self.matrix_rate
        torch.cuda.synchronize()
        free0 = torch.cuda.mem_get_info()[0]
        t = time.perf_counter()
        ops.prepare()
        torch.cuda.synchronize()
        d["handles_s"] = time.perf_counter() - t  # code-object load, JIT (cache), workspaces
        d["handle_bytes"] = free0 - torch.cuda.mem_get_info()[0]
        t = time.perf_counter()
        d["glue"] = model.select_glue("cuda") if a.glue == "fused" else {"fused": False, "why": "--glue torch"}
        d["glue_s"] = time.perf_counter() - t
        t = time.perf_counter()
        self.dense_table = load_or_tune_dense(cfg, a)
        d["dense_tune_s"] = time.perf_counter() - t
        self.fp8_rows, self.forms = model.fp8_rows_of(self.dense_table), plan.dense_forms_of(self.dense_table)
        t = time.perf_counter()
        self.w = model.Weights(cfg, "cuda", seed=a.seed, fp8_rows=self.fp8_rows, forms=self.forms)
        requests = max(max(a.buckets), max(a.verify_buckets) if a.verify_buckets else 1)
        self.p = model.Pools(cfg, "cuda", requests=requests, kv_len=a.kv_len, seed=a.seed + 1)
        torch.cuda.synchronize()
        d["weights_and_pools_s"] = time.perf_counter() - t
        d["device_bytes_after_setup"] = torch.cuda.memory_allocated()
        self.net = model.Step(self.w, self.p)
        self.ref = model.Step(self.w, self.p, ALL_TORCH)
        log(f"setup: {json.dumps(d)}")

    def fp8_groups(self, rows):
        return {g for g, ms in self.fp8_rows.items() if rows in ms}

    def batch(self, phase, B):
        b = model.Batch(self.p, phase, B)
        T = b.T
        toks = torch.randint(0, self.cfg.vocab, (B * T,), generator=self.gen).tolist()
        acc = plan.accepted_lengths(B, seed=B) if phase == "verify" else None
        b.set(list(range(B)), toks, [self.a.kv_len] * B, accepted=acc)
        return b

    def run(self, step, b, snap):
        self.p.restore(snap)
        logits, tokens = step(b)
        torch.cuda.synchronize()
        return logits.clone(), tokens.clone()

    # -- one bucket ---------------------------------------------------------------------------------
    def bucket(self, phase, B, on_torch=()):
        """on_torch: families run on torch in this bucket (only after the all-netra bucket failed)."""
        cfg, a = self.cfg, self.a
        net = self.net if not on_torch else model.Step(self.w, self.p, {f: "torch" if f in on_torch else "netra" for f in model.FAMILIES})
        b = self.batch(phase, B)
        rows = B * b.T
        snap = self.p.snapshot(b.gdn_slots)
        r = {"phase": phase, "batch": B, "families_on_torch_after_error": list(on_torch)}
        tf = self.teacher_forced(phase, B, layers=min(4, cfg.layers), keep_rows=False)
        r["teacher_forced_prefix_ok"] = tf["ok"]
        net.keep, net.trace = [], []
        ops.reset_counts()
        t = time.perf_counter()
        with ops.recording() as rec:
            ln, tn = self.run(net, b, snap)
        r["first_call_us"] = (time.perf_counter() - t) * 1e6
        keep, net.keep = net.keep, None
        trace, net.trace = net.trace, None
        r["fallbacks"] = {k: v for k, v in ops.fallback_counts().items() if v}
        seen = {}
        for row in rec:
            seen.setdefault(row["op"], row)
        for op, row in seen.items():
            tactic = plan.served_tactic(row["detail"]) if row["served"] == "netra" else None
            self.coverage.append({"phase": phase, "bucket": B, "op": op, "served": row["served"], "detail": tactic or row["detail"]})
        experts = distinct_experts(keep, rows, cfg)
        commit = self.commit_check(b, keep, snap) if phase == "verify" else None
        del keep
        r["netra_eager_us"] = eager_us(lambda: net(b), 3)
        t = time.perf_counter()
        graph, gl, gt, pool = model.capture(net, b)
        r["capture_s"] = time.perf_counter() - t
        self.p.restore(snap)
        graph.replay()
        torch.cuda.synchronize()
        r["eager_equals_graph"] = bool(torch.equal(gl[:rows], ln[:rows]) and torch.equal(gt[:rows], tn[:rows]))
        alloc0, free0 = torch.cuda.memory_allocated(), torch.cuda.mem_get_info()[0]
        for _ in range(10):
            graph.replay()
        torch.cuda.synchronize()
        replay_alloc = max(torch.cuda.memory_allocated() - alloc0, free0 - torch.cuda.mem_get_info()[0])
        r["netra_graph_us"], _ = replay_us(graph, a.reps)
        self.workspace.append({"phase": phase, "bucket": B, "step_buffers_bytes": b.nbytes(), "graph_pool_bytes": pool,
                               "replay_alloc_bytes": replay_alloc})
        peers, orc = [], None
        if self.clock.left() > a.reserve:
            self.ref.trace = []
            lr, tr = self.run(self.ref, b, snap)
            ref_trace, self.ref.trace = self.ref.trace, None
            orc = end_to_end(ln[:rows], lr[:rows], tn[:rows], tr[:rows])
            div = model.trace_divergence(trace, ref_trace, rows)
            orc.update(phase=phase, batch=B, layer_rel_l2=[r["rel_l2"] for r in div if r["what"] == "residual"])
            self.doc["end_to_end"].append(orc)
            del lr, tr, ref_trace
            tg, _, _, _ = model.capture(self.ref, b)
            torch_us, _ = replay_us(tg, max(3, a.reps // 4))
            del tg
            peers.append(common.peer("torch path (every family on the framework's torch implementation), graph-replayed", torch_us,
                                     exact=True,
                                     note="the reference path of the oracle, untuned: its MoE multiplies all 257 experts in BF16 every layer"))
        else:
            self.doc["skipped"].append(f"{phase} B={B}: torch path (time)")
        del trace
        self.p.restore(snap)
        floor = plan.step_bytes(cfg, B, a.kv_len, phase, distinct_experts=experts, fp8_groups=self.fp8_groups(rows))
        target = None
        if phase == "decode" and a.kv_len == 8192 and B in (1, 64):
            target = (1.5 if B == 1 else 1.35) * floor["total"] / self.bw * 1e6
        correct = r["eager_equals_graph"] and tf["ok"] and (orc["argmax_exact"] if orc else True) and (commit["ok"] if commit else True)
        rec_ = common.record(f"step_{phase}", f"netra-step-{cfg.layers}L", {"batch": B, "kv_len": a.kv_len, "layers": cfg.layers},
                             r["netra_graph_us"], r["netra_eager_us"], correct,
                             "teacher-forced oracle on the first 4 layers at this bucket: every netra op on the torch path's inputs within "
                             "its derived bound (bitwise where the contract is bitwise; docs/step.md); eager == graph replay bitwise; argmax "
                             "exact on netra's logits; verify: the commit equals the accepted prefix's recurrence", peers, floor["total"], self.bw,
                             target_us=target,
                             bytes_parts=floor, ratio_to_floor=plan.ratio(r["netra_graph_us"], floor["total"] / self.bw * 1e6),
                             floor_fp8_dense_us=plan.step_bytes(cfg, B, a.kv_len, phase, 1, experts)["total"] / self.bw * 1e6,
                             floor_with_compute_us=plan.floor_with_compute_us(floor, plan.step_flops(cfg, B, phase), self.bw, self.matrix_rate),
                             distinct_experts=experts, end_to_end=orc, verify_commit=commit, teacher_forced_prefix=tf["summary"],
                             dense_path=model.dense_label(self.fp8_rows, rows, self.forms),
                             **{k: v for k, v in r.items() if k not in ("netra_graph_us", "netra_eager_us")})
        self.records.append(rec_)
        log(f"{phase} B={B}: netra {r['netra_graph_us']:.0f} us graph, {r['netra_eager_us']:.0f} eager; floor {floor['total'] / self.bw * 1e6:.0f} us; "
            f"torch {peers[0]['graph_us'] if peers else float('nan'):.0f} us; eager==graph {r['eager_equals_graph']}; "
            f"teacher-forced (4 layers) {tf['ok']}; e2e {orc and {k: orc[k] for k in ('rel_l2', 'agreement')}}; fallbacks {r['fallbacks']}; "
            f"{self.clock.left():.0f} s left")
        del graph

    def teacher_forced(self, phase, B, layers=None, keep_rows=True):
        """The torch path's step of bucket B with every netra op run on its inputs (Step.forcing),
        over the first `layers` layers (all when None); each op's row checked against its bound."""
        w, p = (self.w, self.p) if layers is None else model.prefix(self.w, self.p, layers)
        step = model.Step(w, p, ALL_TORCH)
        b = self.batch(phase, B)
        snap = self.p.snapshot(b.gdn_slots)
        step.forcing = []
        self.run(step, b, snap)
        rows, step.forcing = step.forcing, None
        self.p.restore(snap)
        entry = {"phase": phase, "batch": B, "layers": w.cfg.layers, "kv_len": self.a.kv_len, "ok": all(r["ok"] for r in rows),
                 "summary": oracle.summary(rows), "failures": [r for r in rows if not r["ok"]][:8]}
        if keep_rows:
            entry["per_layer"] = [{"layer": r["layer"], "op": r["op"], "ok": r["ok"], "rel_l2_vs_torch": r["rel_l2_vs_torch"],
                                   "worst": {n: c["measured"] for n, c in r["checks"].items()}, **({"flips": r["flips"]} if "flips" in r else {})}
                                  for r in rows]
            self.doc["teacher_forced"].append(entry)
            log(f"teacher-forced {phase} B={B} {w.cfg.layers} layers: ok {entry['ok']}; " + "; ".join(
                f"{op} {s['ok']}/{s['calls']}" for op, s in entry["summary"].items()))
        else:
            self.prefix_rows += rows
        for f in entry["failures"]:
            log(f"  !! {phase} B={B} layer {f['layer']} {f['op']} served {f['served']}: {json.dumps(f['checks'])[:600]}")
        return entry

    def divergence(self, B):
        """Where netra's decode step leaves the torch path: per layer and per op (mixer, add + norm,
        MoE, residual stream) the relative L2 distance from the all-torch run, and the fraction of
        rows routed to another expert set; then one run per family with only that family on netra
        (the rest torch), whose first op of that family sees exactly the torch path's inputs: its
        distance is the op's local error, free of compounding — a local error far above the op's
        rounding (about 2^-8) is a semantic mismatch, a small local error that grows over the layers
        is compounding (with routing flips as its amplifier)."""
        cfg = self.cfg
        b = self.batch("decode", B)
        snap = self.p.snapshot(b.gdn_slots)
        rows = B * b.T

        def traced(step):
            step.trace, step.keep = [], []
            self.run(step, b, snap)
            out = (step.trace, step.keep)
            step.trace = step.keep = None
            return out

        ref_trace, ref_keep = traced(self.ref)
        runs = {"netra": self.net}
        runs.update({f"only_{f}": model.Step(self.w, self.p, {g: "netra" if g == f else "torch" for g in model.FAMILIES})
                     for f in model.FAMILIES if f != "argmax"})
        doc = {"batch": B, "kv_len": self.a.kv_len, "layers": cfg.layers, "runs": {}}
        for name, step in runs.items():
            trace, keep = traced(step)
            rows_ = model.trace_divergence(trace, ref_trace, rows)
            flips = model.route_flips(keep, ref_keep, rows, cfg.top_k)
            entry = {"trace": rows_, "route_flips": flips, "logits_rel_l2": rows_[-1]["rel_l2"]}
            if name.startswith("only_"):
                entry["first_local_error"] = plan.first_local_error(rows_, name[len("only_"):])
            doc["runs"][name] = entry
            log(f"divergence B={B} {name} (vs the all-torch path):\n{plan.divergence_table(rows_, flips)}")
            if "first_local_error" in entry:
                log(f"  {name}: first op's local error {entry['first_local_error']}")
            del trace, keep
        self.p.restore(snap)
        self.doc["divergence"] = doc

    def commit_check(self, b, keep, snap):
        """The first GDN layer's pools after verify + commit against the torch recurrence over
        exactly each request's accepted prefix (FP32 state: relative 1e-4), its conv history equal
        to the window after the last accepted token (bitwise)."""
        i = self.cfg.layer_kinds().index("gdn")
        q, k, y, decay, beta, windows = [t for t in keep if isinstance(t, tuple)][0]
        idx, saved = snap
        slots = b.gdn_slots.long()
        _, want = _gdn.recurrent_torch(q, k, y, decay, beta, saved[i][0], b.T, accepted=b.accepted, outputs=False)
        live = b.live
        got = self.p.state[i][slots[:live]]
        err = float((got - want[:live]).abs().max() / want[:live].abs().max())
        acc = b.accepted[:live].long()
        conv_ok = bool(torch.equal(self.p.conv[i][slots[:live]], windows[torch.arange(live, device=acc.device), acc - 1]))
        return {"state_rel_err": err, "conv_bitwise": conv_ok, "ok": err <= 1e-4 and conv_ok}

    # -- toggles, order, invariants ----------------------------------------------------------------
    def toggles(self, B):
        b = self.batch("decode", B)
        snap = self.p.snapshot(b.gdn_slots)
        base, _, _, _ = model.capture(self.net, b)
        reps = max(3, self.a.reps // 4)
        for fam in model.FAMILIES:
            if self.clock.left() < self.a.reserve:
                self.doc["skipped"].append(f"toggle {fam} B={B} (time)")
                continue
            backend = {f: "netra" for f in model.FAMILIES}
            backend[fam] = "torch"
            g, _, _, _ = model.capture(model.Step(self.w, self.p, backend), b)
            times = {"netra": [], "toggled": []}
            for order in ("AB", "BA", "AB", "BA"):
                for arm in order:
                    times["netra" if arm == "A" else "toggled"].append(replay_us(base if arm == "A" else g, reps)[0])
            m_a, m_b = statistics.median(times["netra"]), statistics.median(times["toggled"])
            self.doc["single_family_toggles"].append({"batch": B, "family": fam, "netra_us": m_a, "toggled_us": m_b, "delta_us": m_b - m_a, "rounds": times})
            log(f"toggle B={B} {fam}: netra {m_a:.0f} us, {fam} on torch {m_b:.0f} us, delta {m_b - m_a:+.0f} us")
            del g
        self.p.restore(snap)
        del base

    def abba(self, B):
        b = self.batch("decode", B)
        snap = self.p.snapshot(b.gdn_slots)
        ga, _, _, _ = model.capture(self.net, b)
        gb, _, _, _ = model.capture(self.ref, b)
        times = {"netra": [], "torch": []}
        for order in ("AB", "BA", "AB", "BA"):
            for arm in order:
                times["netra" if arm == "A" else "torch"].append(replay_us(ga if arm == "A" else gb, 5)[0])
        self.doc["abba"].append({"batch": B, "netra_us": times["netra"], "torch_us": times["torch"]})
        log(f"ABBA B={B}: netra {[round(x) for x in times['netra']]} torch {[round(x) for x in times['torch']]}")
        self.p.restore(snap)

    def invariants(self, B, n):
        b = self.batch("decode", B)
        snap = self.p.snapshot(b.gdn_slots)
        graph, gl, gt, _ = model.capture(self.net, b)
        self.p.restore(snap)
        graph.replay()
        first_l, first_t = gl.clone(), gt.clone()
        same, done = 0, 0
        t_end = time.time() + max(5.0, self.clock.left() - self.a.reserve - 20)
        for _ in range(n):
            if time.time() > t_end:
                break
            self.p.restore(snap)
            graph.replay()
            same += int(torch.equal(gl, first_l) and torch.equal(gt, first_t))
            done += 1
        digest = hashlib.sha256(first_l[:b.live].cpu().numpy().tobytes() + first_t[:b.live].cpu().numpy().tobytes()).hexdigest()
        changing = []
        for _ in range(5):
            toks = torch.randint(0, self.cfg.vocab, (B,), generator=self.gen).tolist()
            b.set(list(range(B)), toks, [self.a.kv_len] * B)
            le, te = self.run(self.net, b, snap)
            self.p.restore(snap)
            graph.replay()
            torch.cuda.synchronize()
            changing.append(bool(torch.equal(gl, le) and torch.equal(gt, te)))
        self.p.restore(snap)
        self.doc["replay_invariants"] = {"batch": B, "replays": done, "identical_to_first": same, "distinct_outputs": 1 + (done - same) if done else None,
                                  "sha256_first": digest, "changing_inputs_equal_eager": changing}
        log(f"invariants B={B}: {same}/{done} replays identical, changing inputs == eager: {changing}")

    def profile(self, phase, B):
        """Device time per step of each kernel family in 3 graph replays of the step of bucket B
        (torch.profiler, CUDA activity): netra's kernels by family (their symbols start netra_<family>),
        the framework's GEMMs, the framework's other kernels; beside each, the part of the bytes
        floor that family moves (experts: moe; KV: attention; GDN state and conv: gdn; dense
        projections, LM head and logits: the framework GEMMs), so the gap is attributed.
        Two figures per family: device_us, the sum of its kernels' durations, and critical_us, the
        part of the replay's span during which its kernels were the last to finish (kernels in
        start order; each is charged from max(its start, the latest end before it) to its end). A
        kernel launched with programmatic dependent launch (netra's MoE, the GDN decode) starts
        while its predecessor runs and waits at its grid-dependency point, so its duration counts
        that wait too: the device times add up to more than the replay; the critical parts add up
        to the replay's span less the idle gaps (gap_us). Per kernel name the same two figures
        (kernels; every netra kernel, else the 15 longest)."""
        b = self.batch(phase, B)
        rows = B * b.T
        snap = self.p.snapshot(b.gdn_slots)
        graph, _, _, _ = model.capture(self.net, b)
        graph.replay()
        torch.cuda.synchronize()
        reps = 3
        fam, kern, gaps, launches = profile_graph(graph, reps)
        floor = plan.step_bytes(self.cfg, B, self.a.kv_len, phase, fp8_groups=self.fp8_groups(rows))
        part_us = {k: v / self.bw * 1e6 for k, v in floor.items()}
        attribution = {"netra moe": part_us["experts"], "netra attention": part_us["kv"], "netra gdn": part_us["gdn_state"],
                       "framework GEMM": part_us["dense"] + part_us["lm_head"] + part_us["logits"] / 2, "netra argmax": part_us["logits"] / 2}
        for k, v in fam.items():
            v.update(floor_us=attribution.get(k), ratio=plan.ratio(v["device_us"], attribution.get(k)),
                     critical_ratio=plan.ratio(v["critical_us"], attribution.get(k)))
        shown = {n: v for n, v in kern.items() if n.startswith("netra_")}
        shown.update(dict(sorted(kern.items(), key=lambda kv: -kv[1]["device_us"])[:15]))
        graph_us, _ = replay_us(graph, 5)
        device = sum(v["device_us"] for v in fam.values())
        critical = sum(v["critical_us"] for v in fam.values())
        key = str(B) if phase == "decode" else f"verify {B}"
        self.doc.setdefault("family_time_per_step", {})[key] = {
            "phase": phase, "batch": B, "families": fam, "sum_device_us": device, "sum_critical_us": critical, "gap_us": gaps,
            "graph_us": graph_us, "floor_us": part_us["total"], "launches_per_step": launches,
            "framework_gemm_compute_floor_us": sum(plan.step_flops(self.cfg, B, phase).values()) / self.matrix_rate * 1e6,
            "graph_minus_device_us": graph_us - device, "dense_path": model.dense_label(self.fp8_rows, rows, self.forms),
            "kernels": dict(sorted(shown.items(), key=lambda kv: -kv[1]["critical_us"]))}
        log(f"profile {phase} B={B} (graph {graph_us:.0f} us, floor {part_us['total']:.0f} us, {launches} launches, "
            f"critical {critical:.0f} + gaps {gaps:.0f} us): " + ", ".join(
                f"{k} {v['device_us']:.0f} us device / {v['critical_us']:.0f} critical / {v['launches']} launches (floor {v['floor_us'] or 0:.0f})"
                for k, v in sorted(fam.items(), key=lambda kv: -kv[1]["critical_us"])))
        self.p.restore(snap)
        del graph

    def isolated(self, phase, B):
        """Each netra family's ops of the step of bucket B replayed alone, in the same process as the
        step's own profile of that bucket: one eager netra step records every netra op's call
        (Step.calls: its inputs, outputs and pools, in the step's order); per family one CUDA graph of
        only those calls (every layer's: the weights, KV and state read cold as in the step), its
        replay (median of --reps) and profile (profile_graph). The isolated figure is what a family
        bench measures at the step's shapes; the step's critical time minus it is what integration
        costs the family (the other kernels between its launches: the L2 they leave, PDL overlap
        across a family boundary). Per kernel both figures. Pools restored after."""
        b = self.batch(phase, B)
        snap = self.p.snapshot(b.gdn_slots)
        self.net.calls = []
        self.run(self.net, b, snap)
        calls, self.net.calls = self.net.calls, None
        key = str(B) if phase == "decode" else f"verify {B}"
        step_prof = self.doc.get("family_time_per_step", {}).get(key, {})
        step_fam, step_kern = step_prof.get("families", {}), step_prof.get("kernels", {})
        out = {}
        for fam in dict.fromkeys(f for f, _, _ in calls):
            graph = capture_calls([(fn, args) for f, fn, args in calls if f == fam])
            us, _ = replay_us(graph, self.a.reps)
            fams, kern, gaps, launches = profile_graph(graph)
            del graph
            self.p.restore(snap)
            alone = fams.get("netra " + fam, {})
            in_step = step_fam.get("netra " + fam, {})
            out[fam] = {"graph_us": us, "critical_us": alone.get("critical_us"), "device_us": alone.get("device_us"), "gap_us": gaps,
                        "launches": launches, "in_step_critical_us": in_step.get("critical_us"), "in_step_device_us": in_step.get("device_us"),
                        "floor_us": in_step.get("floor_us"),
                        "kernels": {n: {"alone_critical_us": v["critical_us"], "alone_device_us": v["device_us"], "launches": v["launches"],
                                        "in_step_critical_us": step_kern.get(n, {}).get("critical_us"),
                                        "in_step_device_us": step_kern.get(n, {}).get("device_us")}
                                    for n, v in sorted(kern.items(), key=lambda kv: -kv[1]["critical_us"])}}
            o = out[fam]
            log(f"isolated {phase} B={B} {fam}: alone {us:.0f} us graph / {o['critical_us'] or 0:.0f} critical / {launches} launches; "
                f"in the step {o['in_step_critical_us'] or 0:.0f} critical (floor {o['floor_us'] or 0:.0f}); " + ", ".join(
                    f"{n} {v['alone_critical_us']:.0f} vs {v['in_step_critical_us'] or 0:.0f}" for n, v in list(o["kernels"].items())[:6]))
        del calls
        self.p.restore(snap)
        self.doc.setdefault("isolated_families", {})[key] = {"phase": phase, "batch": B, "step_graph_us": step_prof.get("graph_us"),
                                                             "families": out}


def capture_calls(calls):
    """A CUDA graph of the recorded op calls [(fn, args)] in order (warm-up on a side stream first)."""
    def body():
        for fn, args in calls:
            fn(*args)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        body()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    graph.replay()
    torch.cuda.synchronize()
    return graph


def profile_graph(graph, reps=3):
    """Device time of each kernel family and kernel name over `reps` replays of a CUDA graph
    (torch.profiler, CUDA activity), per replay: ({family: {device_us, critical_us, launches}},
    {kernel name: the same}, idle gap µs, launches). netra's kernels by family (their symbols start
    netra_<family>), the framework's GEMMs (cuBLAS and the step's Triton forms), copies, the fused
    glue, the framework's other kernels. device_us sums durations; critical_us charges each kernel
    (in start order) from max(its start, the latest end before it) to its end (Runner.profile)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile
    with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            graph.replay()
        torch.cuda.synchronize()
    events = []
    for e in prof.events():
        if e.device_type is not None and "CUDA" not in str(e.device_type):
            continue
        name = e.name
        low = name.lower()
        if name.startswith("netra_"):
            key = "netra " + next((f for f in ("argmax", "moe", "norm", "attention", "gdn") if low.startswith("netra_" + f)), "other")
        elif any(w in low for w in ("gemm", "gemv", "cutlass", "xmma", "nvjet", "cublas", "splitk")) or low.startswith("_split_k"):
            key = "framework GEMM"  # cuBLAS's kernels and the step's Triton forms (_gemv, _split_k)
        elif "memcpy" in low or "memset" in low:
            key = "copies"
        elif low.startswith(("_attn_pre", "_gate_mul", "_quant")):
            key = "framework glue (fused)"
        else:
            key = "framework other"
        events.append((e.time_range.start, e.time_range.end, key, name[:120]))
    events.sort()
    fam, kern = {}, {}
    frontier, gaps = None, 0.0
    for start, end, key, name in events:
        crit = end - start if frontier is None else max(0.0, end - max(start, frontier))
        if frontier is not None and start > frontier:
            gaps += start - frontier
        frontier = end if frontier is None else max(frontier, end)
        for table, k in ((fam, key), (kern, name)):
            t = table.setdefault(k, {"device_us": 0.0, "critical_us": 0.0, "launches": 0.0})
            t["device_us"] += (end - start) / reps
            t["critical_us"] += crit / reps
            t["launches"] += 1 / reps
    for table in (fam, kern):
        for v in table.values():
            v["launches"] = round(v["launches"])
    return fam, kern, gaps / reps, round(len(events) / reps)


def matrix_rate(n=8192, reps=10):
    """The measured BF16 GEMM rate (flops/s) of torch.mm on n x n x n (median of reps): the compute
    side of the dense and LM-head parts of plan.floor_with_compute_us."""
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        torch.mm(a, b)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(reps):
        start.record()
        torch.mm(a, b)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e-3)
    del a, b
    torch.cuda.empty_cache()
    return 2.0 * n ** 3 / statistics.median(samples)


def load_or_tune_dense(cfg, a):
    """The dense path's table: read from --dense-table when that file exists (the fresh processes
    reuse the main run's measurement), else measured here (model.tune_dense) and written there;
    --dense bf16 / fp8 force one path at every row count (fp8 still BF16 where FP8 failed)."""
    if a.dense_table and os.path.exists(a.dense_table):
        with open(a.dense_table) as f:
            table = json.load(f)
    else:
        try:
            table = model.tune_dense(cfg, "cuda", seconds=a.dense_seconds, log=log)
        except Exception as e:  # noqa: BLE001  (the step still runs, BF16 at every row count, and says why)
            log(f"!! the dense measurement failed: {type(e).__name__}: {e}")
            torch.cuda.synchronize()
            table = {"error": {"0": {"chosen": "bf16", "error": f"{type(e).__name__}: {str(e)[:600]}"}}}
        if a.dense_table:
            with open(a.dense_table, "w") as f:
                json.dump(table, f, indent=1)
    if a.dense != "tuned":
        for entries in table.values():
            for e in entries.values():
                e["chosen"] = "fp8" if a.dense == "fp8" and "fp8_us" in e else "bf16"
    return table


def write(R, a):
    """The results file and the coverage table as they stand (after every part: a run cut short keeps them)."""
    os.makedirs(a.out_dir, exist_ok=True)
    method = ("CUDA events around each graph replay of the whole step, median of "
              f"{a.reps}; the weights ({R.cfg.layers} layers, ~0.8 GB of experts each) and KV far exceed the L2, so every replay reads cold "
              "data; eager = host clock around a synchronized eager step; GDN pools restored before each correctness run; bytes floor = "
              "netra.step.plan.step_bytes / measured copy bandwidth")
    summaries = []
    if R.prefix_rows:
        R.doc["teacher_forced_every_bucket"] = {"layers": min(4, R.cfg.layers), "summary": oracle.summary(R.prefix_rows),
                                                "ok": all(r["ok"] for r in R.prefix_rows)}
        buckets = sorted({(r["contract"].replace("step_", ""), r["shape"]["batch"]) for r in R.records})
        summaries.append((R.doc["teacher_forced_every_bucket"]["summary"],
                          {"what": f"first 4 layers, every bucket measured: {', '.join(f'{p} {b}' for p, b in buckets)}"}))
    for e in R.doc["teacher_forced"]:
        summaries.append((e["summary"], {"what": f"{e['phase']} B={e['batch']}, all {e['layers']} layers, KV {e['kv_len']}"}))
    dense_path = {"table": R.dense_table, "fp8_rows": {g: sorted(ms) for g, ms in R.fp8_rows.items()},
                  "bf16_forms": {g: {str(m): f for m, f in fs.items()} for g, fs in R.forms.items()},
                  "how": "per dense group (the projections of one input as one GEMM) and GEMM row count: FP8 block-scaled torch._scaled_mm "
                         "(activations quantized per token and 128, rows below 16 padded) where model.tune_dense measured it "
                         "correct and faster than BF16 (graph-replayed, weights rotated past the L2), BF16 on weights dequantized at load "
                         "elsewhere, each BF16 GEMM in the form (plan.BF16_FORMS: the cuBLAS call, backend and split-K permission) "
                         "measured fastest and within plan.dense_bf16_bound of the FP64 product (default unless 3 % faster)"}
    doc = common.write_family(os.path.join(a.out_dir, "step_h200.json"), "step", R.records, R.bw, method, dense_path=dense_path, **R.doc,
                              workspace=R.workspace, coverage=R.coverage)
    meta = {"date": doc["environment"]["date"], "git_revision": doc["environment"]["git_revision"], "layers": R.cfg.layers, "kv_len": a.kv_len,
            "handle_bytes": R.doc["setup"].get("handle_bytes")}
    glue = R.doc["setup"].get("glue", {})
    meta["note"] = ("Framework path, per bucket (dense projections: `bf16`, or `fp8:` the groups multiplied block-scaled FP8 at that "
                    "bucket's row count, then `group=form` where a BF16 group's cuBLAS call is not the default, as measured by "
                    "model.tune_dense): " + ", ".join(
                        f"{r['contract'].replace('step_', '')} {r['shape']['batch']}: {r.get('dense_path')}" for r in R.records) +
                    f". Attention glue and activation quantization: {'fused Triton kernels' if glue.get('fused') else 'torch'} "
                    f"({glue.get('why', 'not selected')}).")
    with open(a.coverage or os.path.join(a.out_dir, "step-coverage.md"), "w") as f:
        f.write(plan.coverage_markdown(R.coverage, R.workspace, meta, summaries) + "\n")


def headline_child(a):
    """One fresh process: the 40-layer model, netra's graph replay of each headline bucket (median
    of --reps); prints one JSON line."""
    cfg = plan.ModelConfig(layers=a.layers)
    t0 = time.perf_counter()
    ops.prepare()
    glue = model.select_glue("cuda") if a.glue == "fused" else {"fused": False}
    table = load_or_tune_dense(cfg, a)
    w = model.Weights(cfg, "cuda", seed=a.seed, fp8_rows=model.fp8_rows_of(table), forms=plan.dense_forms_of(table))
    p = model.Pools(cfg, "cuda", requests=max(B for _, B in HEADLINE), kv_len=a.kv_len, seed=a.seed + 1)
    net, gen, out = model.Step(w, p), torch.Generator().manual_seed(a.seed), []
    setup_s = time.perf_counter() - t0
    for phase, B in HEADLINE:
        b = model.Batch(p, phase, B)
        b.set(list(range(B)), torch.randint(0, cfg.vocab, (B * b.T,), generator=gen).tolist(), [a.kv_len] * B,
              accepted=plan.accepted_lengths(B, seed=B) if phase == "verify" else None)
        snap = p.snapshot(b.gdn_slots)
        g = model.capture(net, b)[0]
        us, _ = replay_us(g, a.reps)
        out.append({"phase": phase, "batch": B, "netra_graph_us": us})
        p.restore(snap)
        del g
    print(json.dumps({"layers": cfg.layers, "kv_len": a.kv_len, "seed": a.seed, "setup_s": setup_s, "glue_fused": glue["fused"],
                      "dense_fp8_rows": {g: sorted(ms) for g, ms in w.fp8_rows.items()},
                      "dense_forms": {g: {str(m): f for m, f in fs.items()} for g, fs in w.forms.items()}, "buckets": out}))


def merge_fresh(a):
    """Adds the fresh processes' headline times to <out-dir>/step_h200.json: per bucket every
    process's median and their median (median of medians) on the matching record."""
    path = os.path.join(a.out_dir, "step_h200.json")
    with open(path) as f:
        doc = json.load(f)
    runs = []
    for name in a.merge_fresh.split(","):
        try:
            with open(name) as f:
                lines = [ln for ln in f.read().splitlines() if ln.startswith("{")]
            runs.append(json.loads(lines[-1]) if lines else {"error": f"{name}: no result line"})
        except OSError as e:
            runs.append({"error": f"{name}: {e}"})
    doc["fresh_processes"] = runs
    for r in doc["records"]:
        key = (r["contract"].replace("step_", ""), r["shape"]["batch"])
        meds = [b["netra_graph_us"] for run in runs for b in run.get("buckets", []) if (b["phase"], b["batch"]) == key]
        if meds:
            r["fresh_process_graph_us"] = meds
            r["fresh_median_of_medians_us"] = statistics.median(meds)
            if r.get("roofline_us"):
                r["fresh_ratio_to_floor"] = r["fresh_median_of_medians_us"] / r["roofline_us"]
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    log(json.dumps([{k: r.get(k) for k in ("contract", "shape", "netra_graph_us", "fresh_process_graph_us", "fresh_median_of_medians_us",
                                           "fresh_ratio_to_floor")} for r in doc["records"] if "fresh_process_graph_us" in r]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=40)
    ap.add_argument("--kv-len", type=int, default=8192)
    ap.add_argument("--buckets", default=",".join(map(str, plan.DECODE_BUCKETS)))
    ap.add_argument("--verify-buckets", default=",".join(map(str, plan.VERIFY_BUCKETS)))
    ap.add_argument("--forced", default="decode:16,decode:64,verify:4", help="phase:B of the all-layer teacher-forced oracle")
    ap.add_argument("--profile-buckets", default="decode:1,decode:64,verify:64", help="phase:B of the per-family profiles")
    ap.add_argument("--isolated-buckets", default="decode:64,decode:1",
                    help="phase:B where each netra family's ops are replayed alone beside the step's profile (a --profile-buckets entry)")
    ap.add_argument("--toggle-buckets", default="64")
    ap.add_argument("--divergence-bucket", type=int, default=0, help="decode bucket of the per-layer divergence trace (0: none)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=180)
    ap.add_argument("--reserve", type=float, default=15, help="seconds kept for writing results")
    ap.add_argument("--hash-replays", type=int, default=1000)
    ap.add_argument("--headline-child", action="store_true")
    ap.add_argument("--merge-fresh", default=None, help="comma-separated outputs of --headline-child")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dense", choices=("tuned", "bf16", "fp8"), default="tuned", help="the dense projections' path (tuned: per group and M)")
    ap.add_argument("--dense-table", default=None, help="JSON of model.tune_dense: read when it exists, else measured and written")
    ap.add_argument("--dense-seconds", type=float, default=40, help="time budget of the dense measurement")
    ap.add_argument("--tune-dense-only", action="store_true", help="measure the dense path into --dense-table and stop")
    ap.add_argument("--glue", choices=("fused", "torch"), default="fused", help="the attention glue (fused: where it agrees with torch's)")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--coverage", default=None, help="default: <out-dir>/step-coverage.md")
    a = ap.parse_args()
    a.buckets = [int(x) for x in a.buckets.split(",") if x]
    a.verify_buckets = [int(x) for x in a.verify_buckets.split(",") if x]
    if a.headline_child:
        return headline_child(a)
    if a.merge_fresh:
        return merge_fresh(a)
    if a.tune_dense_only:
        if not a.dense_table:
            raise SystemExit("--tune-dense-only needs --dense-table")
        ops.prepare()
        if a.glue == "fused":  # the FP8 candidate quantizes its activations with the glue the step will use
            model.select_glue("cuda")
        load_or_tune_dense(plan.ModelConfig(layers=a.layers), a)
        return None
    R = Runner(a)
    R.setup()
    R.doc["errors"] = []

    def attempt(what, fn, *args, need=10):
        """fn(*args) within the time left; a failure is recorded (the others still run, the
        results are written); returns the error text or None."""
        if R.clock.left() < a.reserve + need:
            R.doc["skipped"].append(f"{what} (time)")
            return None
        try:
            fn(*args)
            return None
        except Exception as e:
            import traceback
            log(f"!! {what} failed:\n{traceback.format_exc()}")
            R.doc["errors"].append(f"{what}: {type(e).__name__}: {str(e)[:600]}")
            torch.cuda.synchronize()
            return str(e)
        finally:
            try:
                write(R, a)
            except Exception as e:  # noqa: BLE001  (the run goes on; the next write may succeed)
                log(f"!! writing the results failed: {type(e).__name__}: {e}")

    forced = [(x.split(":")[0], int(x.split(":")[1])) for x in a.forced.split(",") if x]
    if forced:  # the first all-layer oracle before the buckets, the others after them
        attempt(f"teacher-forced {forced[0][0]} B={forced[0][1]}", R.teacher_forced, *forced[0], need=20)
    for phase, buckets in (("decode", a.buckets), ("verify", a.verify_buckets)):
        for B in buckets:
            err = attempt(f"{phase} B={B}", R.bucket, phase, B)
            if err is not None and "moe" in err.lower():  # still measure the bucket, the MoE on torch, and say so
                attempt(f"{phase} B={B} with the moe family on torch", R.bucket, phase, B, ("moe",))
    for phase, P in [(x.split(":")[0], int(x.split(":")[1])) for x in a.profile_buckets.split(",") if x]:
        attempt(f"profile {phase} B={P}", R.profile, phase, P, need=15)
    for phase, P in [(x.split(":")[0], int(x.split(":")[1])) for x in a.isolated_buckets.split(",") if x]:
        attempt(f"isolated {phase} B={P}", R.isolated, phase, P, need=15)
    for B in [int(x) for x in a.toggle_buckets.split(",") if x]:
        attempt(f"ABBA B={B}", R.abba, B, need=15)
        attempt(f"toggles B={B}", R.toggles, B, need=20)
    attempt("invariants", R.invariants, min(8, max(a.buckets)), a.hash_replays, need=20)
    for phase, B in forced[1:]:
        attempt(f"teacher-forced {phase} B={B}", R.teacher_forced, phase, B, need=20)
    if a.divergence_bucket:
        attempt(f"divergence B={a.divergence_bucket}", R.divergence, a.divergence_bucket, need=20)
    write(R, a)
    if R.records:
        common.print_table([{k: r.get(k) for k in ("contract", "netra_graph_us", "best_peer_graph_us", "roofline_us", "ratio_to_floor", "correct")}
                            | {"B": r["shape"]["batch"]} for r in R.records],
                           ["contract", "B", "netra_graph_us", "best_peer_graph_us", "roofline_us", "ratio_to_floor", "correct"])


if __name__ == "__main__":
    main()
