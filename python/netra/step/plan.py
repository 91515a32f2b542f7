"""The synthetic step's pure logic, importable without torch or a GPU (tests/step/test_plan.py runs it
under plain python3 in CI): the model's shapes, the graph buckets and their padding, the bytes floor
of a step, the coverage table's rows and text, and the parsing of netra's explain text.

Nothing here imports netra or torch; netra.step.model builds the tensors from these numbers.
"""
from __future__ import annotations

import dataclasses
import math
import re

DECODE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 80, 96, 112, 128)
VERIFY_BUCKETS = (1, 4, 16, 64)
DRAFT_TOKENS = 12  # tokens per request in a verify step
E4M3_BYTES, BF16_BYTES, FP32_BYTES = 1, 2, 4


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Qwen3.6-35B-A3B-FP8's shapes. Layer i is full attention when (i + 1) % 4 == 0 (three GDN
    layers, then one attention layer), every layer ends in the MoE block."""

    layers: int = 40
    hidden: int = 2048
    vocab: int = 248320
    attention_interval: int = 4
    q_heads: int = 16
    kv_heads: int = 2
    head_dim: int = 256
    rotary_dim: int = 64
    gdn_qk_heads: int = 16
    gdn_v_heads: int = 32
    gdn_head_dim: int = 128
    conv_taps: int = 4
    experts: int = 256
    top_k: int = 8
    expert_intermediate: int = 512
    rms_eps: float = 1e-6
    gdn_state_bytes: int = FP32_BYTES  # the recurrent state pool's element size (float32)

    def layer_kinds(self) -> list[str]:
        return ["attention" if (i + 1) % self.attention_interval == 0 else "gdn" for i in range(self.layers)]

    @property
    def attention_layers(self) -> int:
        return self.layer_kinds().count("attention")

    @property
    def gdn_layers(self) -> int:
        return self.layers - self.attention_layers

    @property
    def gdn_channels(self) -> int:  # q | k | v of the conv
        return 2 * self.gdn_qk_heads * self.gdn_head_dim + self.gdn_v_heads * self.gdn_head_dim

    @property
    def gdn_value_width(self) -> int:
        return self.gdn_v_heads * self.gdn_head_dim

    def dense_shapes(self, kind: str) -> dict[str, tuple[int, int]]:
        """[out, in] of each FP8 block-scaled projection of a layer of `kind` (the checkpoint's
        128 x 128 weight blocks; in_proj_ba is BF16: 64 rows are not a whole block)."""
        h = self.hidden
        if kind == "attention":
            return {"q_proj": (2 * self.q_heads * self.head_dim, h), "k_proj": (self.kv_heads * self.head_dim, h),
                    "v_proj": (self.kv_heads * self.head_dim, h), "o_proj": (h, self.q_heads * self.head_dim)}
        return {"in_proj_qkv": (self.gdn_channels, h), "in_proj_z": (self.gdn_value_width, h), "out_proj": (h, self.gdn_value_width)}

    def dense_groups(self, kind: str) -> dict[str, tuple[str, ...]]:
        """The projections of a layer that read one input, multiplied as one GEMM (their weights
        concatenated along the output dimension; the GDN's in_proj_ba rides along in BF16)."""
        if kind == "attention":
            return {"attn_in": ("q_proj", "k_proj", "v_proj"), "attn_out": ("o_proj",)}
        return {"gdn_in": ("in_proj_qkv", "in_proj_z"), "gdn_out": ("out_proj",)}

    def dense_rows(self) -> tuple[int, ...]:
        """Every GEMM row count M the step's buckets give the dense projections (decode B, verify 12 B)."""
        return tuple(sorted(set(DECODE_BUCKETS) | {DRAFT_TOKENS * b for b in VERIFY_BUCKETS}))


TEST_CONFIG = ModelConfig(layers=4)


# ---- the dense path's BF16 GEMM forms ---------------------------------------------------------------
# One BF16 product y = x W^T, asked of cuBLAS in different ways; each form is a step option chosen per
# dense group and row count M by measurement (model.tune_dense), never by name. At M = 1..64 with
# N = 2048 (the out projections) torch's default call gets a split-K kernel plus its reduce.
BF16_FORMS = {
    "default": "x @ W^T as torch issues it (the process's BLAS backend and its heuristic)",
    "lt": "x @ W^T on the cuBLASLt backend (torch.backends.cuda.preferred_blas_library('cublaslt'))",
    "lt_no_split_k": "x @ W^T on cuBLASLt with split-K refused (allow_bf16_reduced_precision_reduction = (False, False))",
    "swap": "M = 1: W x^T (N as the GEMM's row count, a GEMV-shaped call), viewed as the [1, N] row",
    "swap_lt_no_split_k": "M = 1: W x^T on cuBLASLt with split-K refused",
    "gemv_bn4": "M = 1: the step's Triton GEMV (netra.step.dense_triton), 4 output columns a program",
    "gemv_bn8": "M = 1: the step's Triton GEMV, 8 output columns a program",
    "split_k4": "2..128 rows, N <= 4096: the step's Triton split-K GEMM, 4 K-slices reduced by the last in one launch",
}
CALLS = ("swap", "gemv", "split")  # a form's first word when it is not a plain x @ W^T
FORM_DOMAIN = {"swap": (1, 1, None), "swap_lt_no_split_k": (1, 1, None), "gemv_bn4": (1, 1, None), "gemv_bn8": (1, 1, None),
               "split_k4": (2, 128, 4096)}  # (rows from, rows to, N at most): W x^T is the row itself only at M = 1


def bf16_forms(m: int, n: int | None = None) -> tuple[str, ...]:
    """The candidate forms at M rows (and N columns, when given) within each form's FORM_DOMAIN."""
    if m < 1:
        raise ValueError(f"a GEMM needs at least one row, got {m}")

    def inside(f):
        lo, hi, max_n = FORM_DOMAIN.get(f, (1, None, None))
        return lo <= m and (hi is None or m <= hi) and (n is None or max_n is None or n <= max_n)
    return tuple(f for f in BF16_FORMS if inside(f))


def form_parts(form: str) -> tuple[str, str | None, bool]:
    """(call: "mm" | "swap" | "gemv" | "split", BLAS backend to prefer or None for the process's
    own, split-K allowed: the cuBLAS calls') of a form."""
    if form not in BF16_FORMS:
        raise ValueError(f"unknown BF16 GEMM form {form!r} (known: {', '.join(BF16_FORMS)})")
    words = form.split("_")
    call = words[0] if words[0] in CALLS else "mm"
    return call, ("cublaslt" if "lt" in words else None), not form.endswith("no_split_k")


def choose_form(forms: dict[str, dict], margin: float = 0.97) -> str:
    """The measured choice among {form: {us, ok} | {error}}: the fastest form that is correct and
    below margin x the default's time, else "default" (also when the default was not timed)."""
    base = forms.get("default", {}).get("us")
    if base is None:
        return "default"
    best, best_us = "default", base
    for f, e in forms.items():
        if f != "default" and e.get("ok") and e.get("us") is not None and e["us"] < margin * base and e["us"] < best_us:
            best, best_us = f, e["us"]
    return best


def dense_forms_of(table: dict) -> dict[str, dict[int, str]]:
    """{group: {M: form}} of a tuned dense table (model.tune_dense), the rows whose BF16 choice is
    not the default (rows chosen FP8 keep their form for the BF16 tail only if any: none here)."""
    out = {}
    for group, entries in table.items():
        forms = {int(m): e["bf16_form"] for m, e in entries.items() if e.get("bf16_form", "default") != "default"}
        if forms:
            out[group] = forms
    return out


def dense_bf16_bound(k: int) -> tuple[float, float]:
    """(relative, envelope) coefficients of a BF16 GEMM output against the FP64 product of the same
    BF16 operands: |y - ref| <= 2^-8 |ref| + gamma_{k-1} E (E = |x| |W|^T). Every BF16 x BF16 product
    is exact in FP32; K of them summed in any order (any split of K, any tile order) is within
    gamma_{k-1} E; the one BF16 rounding of the output adds 2^-9 |y|, taken as 2^-8 |ref|. The forms
    differ in order, not in operands. Derived for IEEE FP32 additions; a tensor core's accumulation
    (its alignment and truncation of the products inside one MMA are not specified to that level)
    is held to the same bound by measurement: model.tune_dense checks every form before timing it."""
    return 2.0 ** -8, gamma(k - 1)


# ---- buckets --------------------------------------------------------------------------------------

def bucket_for(live: int, buckets=DECODE_BUCKETS) -> int:
    """The smallest captured bucket that holds `live` requests (ValueError outside 1..max)."""
    if live < 1:
        raise ValueError(f"a step needs at least one live request, got {live}")
    for b in sorted(buckets):
        if live <= b:
            return b
    raise ValueError(f"{live} live requests exceed the largest bucket {max(buckets)}")


def pad_slots(live_slots: list[int], bucket: int, sentinel: int) -> list[int]:
    """The live requests' slots padded up to the bucket with the sentinel slot (never written)."""
    if len(live_slots) > bucket:
        raise ValueError(f"{len(live_slots)} live requests do not fit a bucket of {bucket}")
    if any(s == sentinel for s in live_slots):
        raise ValueError("a live request holds the sentinel slot")
    return list(live_slots) + [sentinel] * (bucket - len(live_slots))


def accepted_lengths(batch: int, seed: int, tokens: int = DRAFT_TOKENS) -> list[int]:
    """Deterministic pseudo-random accepted prefix lengths in 1..tokens (a verify step accepts at
    least the target's own token), from a small LCG so host and device draw the same numbers."""
    out, x = [], (seed * 2654435761 + 12345) & 0xFFFFFFFF
    for _ in range(batch):
        x = (1103515245 * x + 12345) & 0x7FFFFFFF
        out.append(1 + (x >> 8) % tokens)
    return out


# ---- the bytes floor ------------------------------------------------------------------------------

def expected_distinct_experts(tokens: int, experts: int = 256, top_k: int = 8) -> float:
    """E[distinct routed experts] when each token picks top_k distinct experts uniformly."""
    return experts * (1.0 - (1.0 - top_k / experts) ** tokens)


def expert_bytes(cfg: ModelConfig) -> int:
    """One expert's weights as the MoE kernels read them: E4M3 w13 [1024, 2048] and w2 [2048, 512]
    with their float32 128 x 128 block scales."""
    h, i = cfg.hidden, cfg.expert_intermediate
    w13 = 2 * i * h * E4M3_BYTES + (2 * i // 128) * (h // 128) * FP32_BYTES
    w2 = h * i * E4M3_BYTES + (h // 128) * (i // 128) * FP32_BYTES
    return w13 + w2


def dense_bytes(cfg: ModelConfig, kind: str, dense_bytes_per_weight: float, fp8_groups=None) -> int:
    """A layer's non-expert weights: projections in the format the framework path reads
    (1 byte + block scales for FP8, 2 for BF16; with `fp8_groups` given, FP8 for the projections
    of those dense groups and BF16 for the others), router, shared gate, norms, conv, gates."""
    shapes = cfg.dense_shapes(kind)
    if fp8_groups is None:
        fp8 = set(shapes) if dense_bytes_per_weight == 1 else set()
    else:
        fp8 = {n for g, names in cfg.dense_groups(kind).items() if g in fp8_groups for n in names}
    proj = sum(o * i * (E4M3_BYTES if n in fp8 else BF16_BYTES) for n, (o, i) in shapes.items()) if fp8_groups is not None else \
        sum(o * i for o, i in shapes.values()) * dense_bytes_per_weight
    scales = sum((o // 128) * (i // 128) for n, (o, i) in shapes.items() if n in fp8) * FP32_BYTES
    h = cfg.hidden
    small = cfg.experts * h * BF16_BYTES + h * BF16_BYTES + 2 * h * BF16_BYTES  # router, shared gate, two norms
    if kind == "attention":
        small += 2 * cfg.head_dim * BF16_BYTES  # q_norm, k_norm
    else:
        small += 2 * cfg.gdn_v_heads * h * BF16_BYTES + cfg.gdn_channels * cfg.conv_taps * BF16_BYTES + 2 * cfg.gdn_v_heads * FP32_BYTES
        small += cfg.gdn_head_dim * BF16_BYTES
    return int(proj + scales + small)


def step_bytes(cfg: ModelConfig, batch: int, kv_len: int, phase: str = "decode", dense_bytes_per_weight: float = 1,
               distinct_experts: list[float] | None = None, fp8_groups=None) -> dict[str, int]:
    """The compulsory traffic of one step, by part, in the formats the step reads and writes:
    weights once (routed experts: the distinct experts the step's routes touch, per layer, plus the
    shared expert; `distinct_experts` per layer when measured, else the expectation), the KV cache
    (every context token read, new tokens written), the GDN state (read and written once; the
    verify step reads it twice, K0 and the replay), the conv history, the LM head and the FP32
    logits (written by the LM head, read by argmax). Activations between kernels are not counted."""
    tokens = batch * (DRAFT_TOKENS if phase == "verify" else 1)
    kinds = cfg.layer_kinds()
    if distinct_experts is None:
        distinct_experts = [expected_distinct_experts(tokens, cfg.experts, cfg.top_k)] * cfg.layers
    experts = int(sum((d + 1) * expert_bytes(cfg) for d in distinct_experts))
    dense = sum(dense_bytes(cfg, k, dense_bytes_per_weight, fp8_groups) for k in kinds)
    new = tokens // batch
    kv_token = 2 * cfg.kv_heads * cfg.head_dim * E4M3_BYTES
    kv = cfg.attention_layers * batch * (kv_len + new) * kv_token  # the new tokens are appended, then read
    state = cfg.gdn_v_heads * cfg.gdn_head_dim * cfg.gdn_head_dim * cfg.gdn_state_bytes
    conv = cfg.gdn_channels * (cfg.conv_taps - 1) * BF16_BYTES
    state_passes = 3 if phase == "verify" else 2
    gdn = cfg.gdn_layers * batch * (state * state_passes + 2 * conv)
    head = cfg.vocab * cfg.hidden * BF16_BYTES + tokens * cfg.hidden * BF16_BYTES  # LM head, embedding rows
    logits = 2 * tokens * cfg.vocab * FP32_BYTES
    parts = {"experts": experts, "dense": dense, "kv": kv, "gdn_state": gdn, "lm_head": head, "logits": logits}
    parts["total"] = sum(parts.values())
    return parts


def step_flops(cfg: ModelConfig, batch: int, phase: str = "decode") -> dict[str, int]:
    """The framework path's matrix work of one step (2 flops a multiply-add): the dense projections
    (every layer's, in_proj_ba included) and the LM head, over the step's GEMM rows (B, or 12 B in
    a verify step). At a verify bucket these are compute-bound, which the bytes floor ignores."""
    tokens = batch * (DRAFT_TOKENS if phase == "verify" else 1)
    params = 0
    for kind in cfg.layer_kinds():
        params += sum(o * i for o, i in cfg.dense_shapes(kind).values())
        if kind == "gdn":
            params += 2 * cfg.gdn_v_heads * cfg.hidden
    return {"dense": 2 * tokens * params, "lm_head": 2 * tokens * cfg.vocab * cfg.hidden}


def floor_with_compute_us(parts: dict, flops: dict, bandwidth: float, matrix_rate: float) -> float:
    """The bytes floor (µs) with the dense and LM-head parts each taken at max(bytes / bandwidth,
    flops / matrix_rate) (a measured BF16 GEMM rate): a part cannot finish before either."""
    us = {k: v / bandwidth * 1e6 for k, v in parts.items() if k != "total"}
    for k in ("dense", "lm_head"):
        us[k] = max(us[k], flops[k] / matrix_rate * 1e6)
    return sum(us.values())


# ---- explain text and the coverage table -----------------------------------------------------------

_SELECTED = re.compile(r"^=> tactic \[(\d+)\]")
_LINE = re.compile(r"^\[(\d+)\] (.*?)(?: \(strict[^)]*\))?: (.*)$")


def served_tactic(explain_text: str) -> str | None:
    """The contract spelling of the tactic an explain text selected, or None (fallback / error).
    A text of several stages (the MoE block) yields the stages' tactics joined by ' + '."""
    chosen, names = [], {}
    for line in explain_text.splitlines():
        line = line.strip()
        m = _LINE.match(line)
        if m:
            names[m.group(1)] = m.group(2)
            continue
        m = _SELECTED.match(line)
        if m:
            chosen.append(names.get(m.group(1), f"tactic [{m.group(1)}]"))
            names = {}
        elif line.startswith("=>"):
            return None
    return " + ".join(chosen) if chosen else None


def coverage_markdown(rows: list[dict], workspace: list[dict], meta: dict, oracle: list[tuple[dict, dict]] = ()) -> str:
    """docs/step-coverage.md from the device run's rows ({phase, bucket, op, served, detail}) and
    workspace rows ({phase, bucket, step_buffers_bytes, graph_pool_bytes, replay_alloc_bytes})."""
    out = ["# Step coverage: which implementation served each op in each graph bucket", "",
           "Generated by `bench/step.py` (netra.step.plan.coverage_markdown) from the H200 run "
           f"{meta.get('date', '?')} at revision `{str(meta.get('git_revision', '?'))[:12]}`, "
           f"{meta.get('layers', '?')} layers, KV length {meta.get('kv_len', '?')}. Do not edit by hand.", "",
           "`netra`: a netra tactic served the call (its contract, from netra's explain); `fallback`: no netra "
           "tactic admits the call and the framework's torch implementation ran (the reason is netra's refusal). "
           "The dense projections, embedding and LM head are the framework path by design and not listed.", ""]
    if meta.get("note"):
        out += [meta["note"], ""]
    phases = sorted({r["phase"] for r in rows}, key=lambda p: (p != "decode", p))
    for phase in phases:
        ops = []
        for r in rows:
            if r["phase"] == phase and r["op"] not in ops:
                ops.append(r["op"])
        buckets = sorted({r["bucket"] for r in rows if r["phase"] == phase})
        cell = {(r["op"], r["bucket"]): r for r in rows if r["phase"] == phase}
        out += [f"## {phase}", "", "| op | " + " | ".join(f"B={b}" for b in buckets) + " |", "|---|" + "---|" * len(buckets)]
        for op in ops:
            out.append(f"| {op} | " + " | ".join(cell[(op, b)]["served"] if (op, b) in cell else "–" for b in buckets) + " |")
        out += ["", "Per op, what served it (the same text across buckets listed once; shapes elided):", ""]
        for op in ops:
            seen = {}
            for b in buckets:
                r = cell.get((op, b))
                if r:
                    seen.setdefault(f"{r['served']}: {_shapeless(r['detail'])}", []).append(b)
            for text, bs in seen.items():
                out.append(f"- `{op}` B ∈ {{{', '.join(map(str, bs))}}} — {_one_line(text)}")
        out.append("")
    if workspace:
        out += ["## Memory per bucket", "",
                "step buffers: the bucket's static inputs and intermediates, allocated before capture; graph pool: what "
                "torch's allocator reserved while capturing (framework-path temporaries; – where not measured); replay: bytes "
                "allocated by 10 replays (must be 0).", "",
                "| phase | B | step buffers B | graph pool B | replay alloc B |", "|---|---|---|---|---|"]
        for w in workspace:
            pool = "–" if w["graph_pool_bytes"] is None else w["graph_pool_bytes"]
            out.append(f"| {w['phase']} | {w['bucket']} | {w['step_buffers_bytes']} | {pool} | {w['replay_alloc_bytes']} |")
        pools = [w["graph_pool_bytes"] for w in workspace if w["graph_pool_bytes"] is not None]
        out += ["", f"Total over buckets: step buffers {sum(w['step_buffers_bytes'] for w in workspace)} B, graph pools "
                f"{sum(pools) if pools else '–'} B; netra handles' device memory (workspaces, code): "
                f"{meta.get('handle_bytes', '?')} B, shared by every bucket.", ""]
    for summary, m in oracle:
        out.append(oracle_markdown(summary, m))
    return "\n".join(out)


_SHAPE = re.compile(r"shape \[[^\]]*\] strides \[[^\]]*\]")


def _shapeless(text: str) -> str:
    """A refusal's text with each tensor's shape and strides elided (they vary with the bucket)."""
    return _SHAPE.sub("shape [..]", text)


def _one_line(text: str, limit: int = 400) -> str:
    t = " ".join(text.split()).replace("|", "\\|")
    return t if len(t) <= limit else t[:limit - 1] + "…"


def ratio(measured_us: float | None, floor_us: float | None) -> float | None:
    if not measured_us or not floor_us or math.isnan(measured_us):
        return None
    return measured_us / floor_us


# ---- the teacher-forced oracle's bounds (derivations: docs/step.md) --------------------------------

U32 = 2.0 ** -24  # the FP32 unit roundoff


def gamma(n: int) -> float:
    """gamma_n = n u / (1 - n u), u = 2^-24: the relative bound of n FP32 roundings in a product of
    (1 + delta_i) factors; a sum of products evaluated in any order is within gamma_n * (the same
    sum on magnitudes) of the exact value, n the roundings on its longest path."""
    return n * U32 / (1 - n * U32)


def gdn_roundings(T: int, what: str, head_dim: int = 128) -> int:
    """Roundings on the longest path of the gated delta rule over T tokens: per token the decay
    product, the K-term dot S k, the subtraction from v, the beta product, the k product and the
    state add (K + 5); the output adds the K-term dot S q."""
    per_token = head_dim + 5
    return T * per_token + (head_dim if what == "out" else 0)


def decay_bound_rel(g: float, x: float) -> float:
    """The relative bound of netra's decay = exp(g), g = -exp(a_log) softplus(x), against torch's:
    per side g is within (|x| + 8) 2^-24 relative (the add, softplus <= 4 ulp with its relative
    sensitivity |x| + 1 for x < 0, exp(a_log) <= 2 ulp, the product), exp turns that into |g| times
    it, plus its own 2 ulp; two sides; x2 margin on the ulp counts (docs/step.md)."""
    return 2.0 ** -22 * (abs(g) * (abs(x) + 8) + 2)


BOUNDS = {
    # relative bounds of netra's FP32 precompute against torch's (derivations in docs/step.md):
    # q, k 140 roundings' worth each side -> 2^-16.9, checked at 2^-16; beta 2^-21, checked at 2^-20
    "gdn_precompute": {"qk_rel": 2.0 ** -16, "beta_rel": 2.0 ** -20},
    "moe_block": {
        "router_exact_rel": gamma(2048),  # exact FP32 router: 2048 exact products summed, vs FP64 (x sum |h w|)
        "router_matrix_rel": 2.0 ** -11,  # matrix router's contract bound (x sum |h w|)
        "gemm_env": 2.0 ** -15,  # the expert GEMMs' policy: 2^-8 |ref| + 2^-15 E + 2^-120
        "down_env_decode": 2.0 ** -15,
        "down_env_grouped": 2.0 ** -10,  # grouped route sum, KParts 2: + 2^-10 E + 2^-23 W
        "act_rel": 2.0 ** -3 + 2.0 ** -5,  # two half E4M3 steps + one BF16 step of y (x max |deq|), + 2^-9 scale
    },
}

POLICIES = {
    "rms_norm": "out: one BF16 step (FP32 values within 2^-13 relative, rounded once each)",
    "add_rms_norm": "out: one BF16 step; residual bf16(x + r): bitwise",
    "gated_rms_norm": "out: one BF16 step",
    "attention_gqa8": "out vs FP64 softmax of the dequantized cache: the contract's bound",
    "gdn_conv": "y: one BF16 step + 2.2 gamma_5 sum|w x| + 2^-20 |y|; conv history / windows: bitwise",
    "gdn_precompute": "q, k: 2^-16 relative; decay: 2^-22 (|g| (|x| + 8) + 2) relative; beta: 2^-20 relative",
    "gdn_m16": "out: one BF16 step + 2 gamma_m E_out; state: 2 gamma_m E_state (E: the rule on magnitudes); other slots bitwise",
    "gdn_verify": "out: as gdn_m16 over 12 tokens; state pool untouched (bitwise)",
    "gdn_replay": "state of the accepted prefix: 2 gamma_m E_state; conv history bitwise; other slots bitwise",
    "moe_block": "routes admissible vs FP64 logits; weights, shared gate, gate_up, down vs FP64 within the contracts' "
                 "bounds; act codes within two half E4M3 steps + one BF16 step of act_quant on netra's gate_up",
    "argmax": "bitwise (torch.argmax on the same logits)",
}


def oracle_markdown(summary: dict, meta: dict) -> str:
    """The teacher-forced oracle's table (per op: calls served by netra, calls within every bound,
    the worst measured / bound per check, the MoE's flip counts) for the coverage page."""
    out = [f"## Oracle under teacher forcing ({meta.get('what', '')})", "",
           "Every netra op fed the torch reference path's own inputs at every layer; measured: the worst "
           "|err| / bound over the layers (<= 1 passes; bitwise checks: mismatching elements). Bounds and "
           "derivations: docs/step.md.", "",
           "| op | calls | netra served | within bound | checks (worst / bound) | policy |", "|---|---|---|---|---|---|"]
    for op, s in summary.items():
        checks = "; ".join(f"{n} {c['worst']:.3g}" + ("" if c["bound"] == 1.0 else f" / {c['bound']}") for n, c in s["checks"].items())
        out.append(f"| {op} | {s['calls']} | {s['served_netra']} | {s['ok']} | {checks} | {POLICIES.get(op, '')} |")
    moe = summary.get("moe_block", {}).get("flips")
    if moe:
        out += ["", f"MoE flips (reported, each inside the bounds above): {moe['route_flips']} of {moe['rows']} token-layers routed to "
                f"another expert set than the torch path (every netra route admissible against FP64); E4M3 codes of act differing from "
                f"act_quant on netra's own gate_up: at most {moe['code_flip_rate_act_quant_max']:.2%} of a layer's codes; from the torch "
                f"path's codes (rows with the same routes): at most {moe['code_flip_rate_vs_torch_path_max']:.2%}."]
    return "\n".join(out + [""])


# ---- the divergence trace -------------------------------------------------------------------------

TRACE_COLUMNS = ("mixer", "norm", "moe", "residual")


def divergence_table(rows: list[dict], flips: list[float] | None = None) -> str:
    """A text table of model.trace_divergence rows: one line per layer with the relative L2 of its
    mixer output (the layer's kind named), add + norm, MoE output and residual stream, and the
    fraction of rows whose routed experts differ (flips, per layer); the logits last."""
    by_layer: dict[int, dict] = {}
    for r in rows:
        what = "mixer" if r["what"] in ("attention", "gdn") else r["what"]
        cell = by_layer.setdefault(r["layer"], {})
        cell[what] = r["rel_l2"]
        if what == "mixer":
            cell["kind"] = r["what"]
    lines = ["layer kind       " + " ".join(f"{c:>9}" for c in TRACE_COLUMNS) + "  route_flips"]
    for layer in sorted(by_layer):
        cell = by_layer[layer]
        if "logits" in cell:
            lines.append(f"{'logits':<16} {cell['logits']:9.3e}")
            continue
        vals = " ".join(f"{cell[c]:9.3e}" if c in cell else f"{'–':>9}" for c in TRACE_COLUMNS)
        flip = f"{flips[layer]:11.3f}" if flips is not None and layer < len(flips) else ""
        lines.append(f"{layer:5d} {cell.get('kind', '?'):<10} {vals}  {flip}")
    return "\n".join(lines)


def first_local_error(rows: list[dict], family: str) -> dict | None:
    """In a run where only `family` is on netra (every other family on torch, so every input up to
    that family's first op is identical), the relative L2 of that first op's output: the op's local
    error, free of compounding. family: "gdn", "attention", "moe" (their op outputs) or "norm" (the
    first add + norm). None when the trace has no such op."""
    what = {"gdn": "gdn", "attention": "attention", "moe": "moe", "norm": "norm"}.get(family)
    for r in sorted(rows, key=lambda r: r["layer"]):
        if r["what"] == what:
            return r
    return None
