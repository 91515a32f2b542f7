"""The synthetic step's pure logic (python/netra/step/plan.py) under plain python3, no torch, no GPU
(ctest: step_plan, tests/step.cmake): the model's layer pattern and shapes, bucket choice and
sentinel padding, accepted lengths, the bytes floor's parts against hand-computed values, explain
parsing and the generated coverage table."""
import importlib.util
import pathlib
import sys
import unittest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "python" / "netra" / "step" / "plan.py"
_spec = importlib.util.spec_from_file_location("netra_step_plan", _PATH)
plan = importlib.util.module_from_spec(_spec)
sys.modules["netra_step_plan"] = plan
_spec.loader.exec_module(plan)


class Model(unittest.TestCase):
    def test_layer_pattern(self):
        cfg = plan.ModelConfig()
        kinds = cfg.layer_kinds()
        self.assertEqual(len(kinds), 40)
        self.assertEqual(kinds[:4], ["gdn", "gdn", "gdn", "attention"])
        self.assertEqual((cfg.attention_layers, cfg.gdn_layers), (10, 30))
        self.assertEqual(plan.TEST_CONFIG.layer_kinds(), ["gdn", "gdn", "gdn", "attention"])
        self.assertEqual(cfg.gdn_channels, 8192)
        self.assertEqual(cfg.dense_shapes("attention")["q_proj"], (8192, 2048))  # q and its output gate
        self.assertEqual(cfg.dense_shapes("gdn")["out_proj"], (2048, 4096))


class DenseForms(unittest.TestCase):
    def test_candidates_per_row_count(self):
        self.assertEqual(plan.bf16_forms(1), tuple(f for f in plan.BF16_FORMS if f != "split_k4"))
        self.assertEqual(plan.bf16_forms(1, 2048), ("default", "lt", "lt_no_split_k", "swap", "swap_lt_no_split_k", "gemv_bn4", "gemv_bn8"))
        self.assertEqual(plan.bf16_forms(64, 2048), ("default", "lt", "lt_no_split_k", "split_k4"))  # the one-row calls only at M = 1
        self.assertEqual(plan.bf16_forms(64, 12416), ("default", "lt", "lt_no_split_k"))  # split_k4 to N 4096
        self.assertEqual(plan.bf16_forms(8, 2048), ("default", "lt", "lt_no_split_k", "split_k4"))
        self.assertEqual(plan.bf16_forms(8), ("default", "lt", "lt_no_split_k", "split_k4"))  # N not given: not limited
        self.assertEqual(plan.bf16_forms(192), ("default", "lt", "lt_no_split_k"))
        self.assertEqual(plan.form_parts("split_k4")[0], "split")
        with self.assertRaises(ValueError):
            plan.bf16_forms(0)
        self.assertEqual(plan.form_parts("default"), ("mm", None, True))
        self.assertEqual(plan.form_parts("lt"), ("mm", "cublaslt", True))
        self.assertEqual(plan.form_parts("lt_no_split_k"), ("mm", "cublaslt", False))
        self.assertEqual(plan.form_parts("swap"), ("swap", None, True))
        self.assertEqual(plan.form_parts("swap_lt_no_split_k"), ("swap", "cublaslt", False))
        self.assertEqual(plan.form_parts("gemv_bn8"), ("gemv", None, True))
        with self.assertRaises(ValueError):
            plan.form_parts("gemv")

    def test_choice_needs_correct_and_faster_by_the_margin(self):
        t = {"default": {"us": 9.3, "ok": True}, "lt": {"us": 9.2, "ok": True}, "lt_no_split_k": {"us": 6.1, "ok": True},
             "swap": {"us": 5.0, "ok": False}, "swap_lt_no_split_k": {"error": "RuntimeError: refused"}}
        self.assertEqual(plan.choose_form(t), "lt_no_split_k")  # swap is faster but outside its bound
        self.assertEqual(plan.choose_form({"default": {"us": 9.3, "ok": True}, "lt": {"us": 9.1, "ok": True}}), "default")  # within 3 %
        self.assertEqual(plan.choose_form({"lt": {"us": 1.0, "ok": True}}), "default")  # no default time: nothing to beat
        table = {"gdn_out": {"1": {"bf16_form": "swap"}, "64": {"bf16_form": "lt_no_split_k"}, "768": {"bf16_form": "default"}},
                 "gdn_in": {"1": {"chosen": "bf16"}}}
        self.assertEqual(plan.dense_forms_of(table), {"gdn_out": {1: "swap", 64: "lt_no_split_k"}})

    def test_bf16_bound(self):
        rel, env = plan.dense_bf16_bound(4096)
        self.assertEqual(rel, 2.0 ** -8)
        self.assertTrue(4095 * 2.0 ** -24 < env < 4095 * 2.0 ** -24 * (1 + 2.0 ** -11))  # gamma_4095 = 4095 u / (1 - 4095 u)


class Buckets(unittest.TestCase):
    def test_bucket_for(self):
        self.assertEqual([plan.bucket_for(n) for n in (1, 2, 3, 16, 17, 65, 81, 128)], [1, 2, 4, 16, 32, 80, 96, 128])
        self.assertEqual(plan.bucket_for(5, plan.VERIFY_BUCKETS), 16)
        for bad in (0, 129):
            with self.assertRaises(ValueError):
                plan.bucket_for(bad)
        with self.assertRaises(ValueError):
            plan.bucket_for(65, plan.VERIFY_BUCKETS)

    def test_pad_slots(self):
        self.assertEqual(plan.pad_slots([4, 1, 7], 8, 128), [4, 1, 7] + [128] * 5)
        self.assertEqual(plan.pad_slots([3], 1, 9), [3])
        with self.assertRaises(ValueError):
            plan.pad_slots([1, 2, 3], 2, 9)
        with self.assertRaises(ValueError):
            plan.pad_slots([1, 9], 4, 9)  # a live request on the sentinel

    def test_accepted_lengths(self):
        a = plan.accepted_lengths(64, seed=3)
        self.assertEqual(a, plan.accepted_lengths(64, seed=3))
        self.assertNotEqual(a, plan.accepted_lengths(64, seed=4))
        self.assertTrue(all(1 <= x <= 12 for x in a))
        self.assertGreater(len(set(a)), 6)


class Floor(unittest.TestCase):
    def test_expert_bytes(self):
        cfg = plan.ModelConfig()
        self.assertEqual(plan.expert_bytes(cfg), 1024 * 2048 + 8 * 16 * 4 + 2048 * 512 + 16 * 4 * 4)

    def test_distinct_experts(self):
        self.assertAlmostEqual(plan.expected_distinct_experts(1), 8.0)
        self.assertLess(plan.expected_distinct_experts(128), 256)
        self.assertGreater(plan.expected_distinct_experts(128), 250)

    def test_decode_parts(self):
        cfg = plan.ModelConfig()
        b = plan.step_bytes(cfg, 1, 8192, "decode", dense_bytes_per_weight=1)
        self.assertEqual(b["experts"], 40 * 9 * plan.expert_bytes(cfg))  # 8 routed + the shared expert per layer
        self.assertEqual(b["kv"], 10 * 8193 * 2 * 2 * 256)
        self.assertEqual(b["gdn_state"], 30 * (32 * 128 * 128 * 4 * 2 + 2 * 8192 * 3 * 2))
        self.assertEqual(b["logits"], 2 * 248320 * 4)
        self.assertEqual(b["total"], sum(v for k, v in b.items() if k != "total"))
        bf16 = plan.step_bytes(cfg, 1, 8192, "decode", dense_bytes_per_weight=2)
        self.assertGreater(bf16["dense"], b["dense"])
        measured = plan.step_bytes(cfg, 1, 8192, distinct_experts=[8] * 40)
        self.assertEqual(measured["experts"], b["experts"])
        # per dense group: every group FP8 = the all-FP8 figure, none = the all-BF16 one, one group in between
        every = {g for k in ("gdn", "attention") for g in cfg.dense_groups(k)}
        self.assertEqual(plan.step_bytes(cfg, 1, 8192, fp8_groups=every)["dense"], b["dense"])
        self.assertEqual(plan.step_bytes(cfg, 1, 8192, fp8_groups=set())["dense"], bf16["dense"])
        mixed = plan.step_bytes(cfg, 1, 8192, fp8_groups={"gdn_in"})["dense"]
        qkv_z = 30 * (8192 + 4096) * 2048
        self.assertEqual(bf16["dense"] - mixed, qkv_z - 30 * (96 * 16) * 4)  # one byte saved a weight, its scales added

    def test_dense_groups(self):
        cfg = plan.ModelConfig()
        for kind in ("gdn", "attention"):
            names = [n for g in cfg.dense_groups(kind).values() for n in g]
            self.assertEqual(sorted(names), sorted(cfg.dense_shapes(kind)))  # every projection in exactly one group
            for names_ in cfg.dense_groups(kind).values():
                self.assertEqual(len({cfg.dense_shapes(kind)[n][1] for n in names_}), 1)  # one input width per group
        self.assertEqual(cfg.dense_rows(), (1, 2, 4, 8, 12, 16, 32, 48, 64, 80, 96, 112, 128, 192, 768))

    def test_flops_and_the_compute_floor(self):
        cfg = plan.ModelConfig()
        gdn = 8192 * 2048 + 4096 * 2048 + 2048 * 4096 + 64 * 2048
        att = 8192 * 2048 + 2 * 512 * 2048 + 2048 * 4096
        f = plan.step_flops(cfg, 64, "verify")
        self.assertEqual(f["dense"], 2 * 768 * (30 * gdn + 10 * att))
        self.assertEqual(f["lm_head"], 2 * 768 * 248320 * 2048)
        self.assertEqual(plan.step_flops(cfg, 1)["lm_head"], 2 * 248320 * 2048)
        parts = {"experts": 4e6, "dense": 2e6, "lm_head": 1e6, "kv": 0, "total": 7e6}
        # bytes at 1e12 B/s: 4 + 2 + 1 us; flops at 1e15 /s: dense 2e12 -> 2000 us, lm_head 1e6 -> 0.001 us (bytes win)
        self.assertAlmostEqual(plan.floor_with_compute_us(parts, {"dense": 2e12, "lm_head": 1e6}, 1e12, 1e15), 4 + 2000 + 1)
        self.assertAlmostEqual(plan.floor_with_compute_us(parts, {"dense": 0, "lm_head": 0}, 1e12, 1e15), 7)

    def test_verify_parts(self):
        cfg = plan.ModelConfig()
        v = plan.step_bytes(cfg, 4, 1000, "verify")
        self.assertEqual(v["kv"], 10 * 4 * 1012 * 1024)
        self.assertEqual(v["gdn_state"], 30 * 4 * (32 * 128 * 128 * 4 * 3 + 2 * 8192 * 3 * 2))
        self.assertEqual(v["logits"], 2 * 48 * 248320 * 4)


EXPLAIN = """[0] netra::contracts::argmax<netra::sm90a, 248320, 320, 128> (strict; this call is in its promoted domain): admitted
[1] netra::contracts::argmax<netra::sm90a, 32768, 256, 8> (strict elsewhere): refused: cols must be 32768, got 248320
=> tactic [0]"""


class Explain(unittest.TestCase):
    def test_served_tactic(self):
        self.assertEqual(plan.served_tactic(EXPLAIN), "netra::contracts::argmax<netra::sm90a, 248320, 320, 128>")
        self.assertIsNone(plan.served_tactic("[0] x: refused: rows\n=> fallback: no tactic admits the call; the caller runs its own"))
        two = "router:\n[0] a<1>: admitted\n=> tactic [0]\ngate_up:\n[0] b<2>: refused\n[1] c<3>: admitted\n=> tactic [1]"
        self.assertEqual(plan.served_tactic(two), "a<1> + c<3>")
        self.assertIsNone(plan.served_tactic(""))

    def test_coverage_markdown(self):
        rows = [{"phase": "decode", "bucket": 1, "op": "argmax", "served": "netra", "detail": "argmax<248320>"},
                {"phase": "decode", "bucket": 2, "op": "argmax", "served": "netra", "detail": "argmax<248320>"},
                {"phase": "decode", "bucket": 1, "op": "gdn_m16", "served": "fallback", "detail": "NOT_SUPPORTED: batch | tokens"},
                {"phase": "verify", "bucket": 16, "op": "argmax", "served": "fallback", "detail": "rows 192"},
                {"phase": "decode", "bucket": 1, "op": "attention", "served": "fallback", "detail": "q bfloat16 shape [80, 16] strides [16, 1] on"},
                {"phase": "decode", "bucket": 2, "op": "attention", "served": "fallback", "detail": "q bfloat16 shape [96, 16] strides [16, 1] on"}]
        ws = [{"phase": "decode", "bucket": 1, "step_buffers_bytes": 10, "graph_pool_bytes": 20, "replay_alloc_bytes": 0},
              {"phase": "decode", "bucket": 2, "step_buffers_bytes": 5, "graph_pool_bytes": None, "replay_alloc_bytes": 0}]
        md = plan.coverage_markdown(rows, ws, {"date": "2026-12-01", "git_revision": "abcdef1234567", "layers": 40, "kv_len": 8192,
                                               "handle_bytes": 99})
        self.assertIn("| argmax | netra | netra |", md)
        self.assertIn("| gdn_m16 | fallback | – |", md)
        self.assertIn("`argmax` B ∈ {1, 2} — netra: argmax<248320>", md)
        self.assertIn("NOT_SUPPORTED: batch \\| tokens", md)  # table-safe
        self.assertIn("## verify", md)
        self.assertIn("`attention` B ∈ {1, 2} — fallback: q bfloat16 shape [..] on", md)  # shapes elided: one line
        self.assertIn("| decode | 1 | 10 | 20 | 0 |", md)
        self.assertIn("99 B", md)
        self.assertIn("| decode | 2 | 5 | – | 0 |", md)
        self.assertIn("step buffers 15 B, graph pools 20 B", md)
        self.assertLess(md.index("## decode"), md.index("## verify"))

    def test_ratio(self):
        self.assertAlmostEqual(plan.ratio(150.0, 100.0), 1.5)
        self.assertIsNone(plan.ratio(None, 100.0))
        self.assertIsNone(plan.ratio(10.0, None))

class Divergence(unittest.TestCase):
    ROWS = [{"layer": 0, "what": "gdn", "rel_l2": 1e-3}, {"layer": 0, "what": "norm", "rel_l2": 2e-3}, {"layer": 0, "what": "moe", "rel_l2": 5e-3},
            {"layer": 0, "what": "residual", "rel_l2": 4e-3}, {"layer": 1, "what": "attention", "rel_l2": 0.25},
            {"layer": 1, "what": "residual", "rel_l2": 0.125}, {"layer": 2, "what": "logits", "rel_l2": 0.5}]

    def test_table(self):
        text = plan.divergence_table(self.ROWS, [0.0, 0.5])
        lines = text.splitlines()
        self.assertEqual(len(lines), 4)  # header, two layers, logits
        self.assertIn("mixer", lines[0])
        self.assertTrue(lines[1].split()[:2] == ["0", "gdn"])
        self.assertIn("1.000e-03", lines[1])
        self.assertIn("5.000e-03", lines[1])
        self.assertIn("0.000", lines[1])
        self.assertIn("attention", lines[2])
        self.assertIn("–", lines[2])  # no norm / moe traced for layer 1 here
        self.assertIn("0.500", lines[2])
        self.assertTrue(lines[3].startswith("logits"))
        self.assertIn("5.000e-01", lines[3])

    def test_first_local_error(self):
        self.assertEqual(plan.first_local_error(self.ROWS, "attention")["layer"], 1)
        self.assertEqual(plan.first_local_error(self.ROWS, "moe")["rel_l2"], 5e-3)
        self.assertEqual(plan.first_local_error(self.ROWS, "gdn")["layer"], 0)
        self.assertIsNone(plan.first_local_error(self.ROWS[:1], "moe"))
        self.assertIsNone(plan.first_local_error(self.ROWS, "argmax"))


class OracleBounds(unittest.TestCase):
    def test_gamma(self):
        self.assertAlmostEqual(plan.gamma(1), 2.0 ** -24 / (1 - 2.0 ** -24))
        self.assertGreater(plan.gamma(2048), 2048 * 2.0 ** -24)
        self.assertLess(plan.gamma(2048), 2.0 ** -13 * 1.001)
        self.assertLess(plan.gamma(100), plan.gamma(101))

    def test_gdn_roundings(self):
        self.assertEqual(plan.gdn_roundings(1, "state"), 133)
        self.assertEqual(plan.gdn_roundings(1, "out"), 261)
        self.assertEqual(plan.gdn_roundings(12, "state"), 12 * 133)
        self.assertEqual(plan.gdn_roundings(12, "out"), 12 * 133 + 128)

    def test_decay_bound(self):
        self.assertEqual(plan.decay_bound_rel(0.0, 0.0), 2.0 ** -21)  # exp's own ulps only
        self.assertAlmostEqual(plan.decay_bound_rel(-2.0, -3.0), 2.0 ** -22 * (2 * 11 + 2))
        self.assertGreater(plan.decay_bound_rel(1.0, 10.0), plan.decay_bound_rel(1.0, 1.0))

    def test_bounds_are_the_documented_ones(self):
        b = plan.BOUNDS["moe_block"]
        self.assertEqual(b["router_exact_rel"], plan.gamma(2048))
        self.assertEqual(b["router_matrix_rel"], 2.0 ** -11)
        self.assertEqual((b["gemm_env"], b["down_env_decode"], b["down_env_grouped"]), (2.0 ** -15, 2.0 ** -15, 2.0 ** -10))
        self.assertEqual(b["act_rel"], 2.0 ** -3 + 2.0 ** -5)
        self.assertEqual(plan.BOUNDS["gdn_precompute"], {"qk_rel": 2.0 ** -16, "beta_rel": 2.0 ** -20})
        self.assertEqual(set(plan.POLICIES), {"rms_norm", "add_rms_norm", "gated_rms_norm", "attention_gqa8", "gdn_conv", "gdn_precompute",
                                              "gdn_m16", "gdn_verify", "gdn_replay", "moe_block", "argmax"})

    def test_oracle_markdown(self):
        summary = {"add_rms_norm": {"calls": 8, "ok": 8, "served_netra": 8, "checks": {"out": {"worst": 0.5, "bound": 1.0, "beyond": 0},
                                                                                      "residual": {"worst": 0, "bound": 0, "beyond": 0}}},
                   "moe_block": {"calls": 4, "ok": 3, "served_netra": 4, "checks": {"out": {"worst": 1.25, "bound": 1.0, "beyond": 2}},
                                 "flips": {"route_flips": 3, "rows": 64, "code_flip_rate_act_quant_max": 0.0125,
                                           "code_flip_rate_vs_torch_path_max": 0.05}}}
        md = plan.oracle_markdown(summary, {"what": "decode B=16, all 40 layers"})
        self.assertIn("## Oracle under teacher forcing (decode B=16, all 40 layers)", md)
        self.assertIn("| add_rms_norm | 8 | 8 | 8 | out 0.5; residual 0 / 0 |", md)
        self.assertIn("| moe_block | 4 | 4 | 3 | out 1.25 |", md)
        self.assertIn("3 of 64 token-layers", md)
        self.assertIn("1.25%", md)
        self.assertIn("5.00%", md)
        page = plan.coverage_markdown([], [], {}, [(summary, {"what": "x"})])
        self.assertIn("## Oracle under teacher forcing (x)", page)


if __name__ == "__main__":
    unittest.main()
