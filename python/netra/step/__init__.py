"""The integrated step: a synthetic Qwen3.6-35B-A3B-FP8 decode and verify step on netra's custom
ops (netra.torch_ops), captured per graph bucket, and the same model on the pure torch path.

It lives in the package (not examples/) because the benchmark (bench/step.py), the GPU tests
(tests/python/test_step.py) and a serving engine's adapter all import it. netra.step.plan holds the
pure logic (shapes, buckets, padding, bytes floor, coverage table) with no torch import: CI tests it
under plain python3 (tests/step/test_plan.py). netra.step.model holds the torch parts.
"""
