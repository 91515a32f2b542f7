#!/usr/bin/env bash
# bench/attention_extend_device.sh — what GQA4 extend needs the H200 for, in one command: the extend
# GPU tests (pair view and native plan: bitwise, bounded incl. adversarial, refusals), the C ABI and
# Python tests when libnetra is carried, compute-sanitizer memcheck on the native plan's cases, after
# bench/attention_extend.py (both plans, the native grid's floor, slice sweep and parts, every SDPA
# peer). Built binaries come in $CARRY (default .carry-extend/: the test binaries, optionally
# libnetra.so, and the sm90a extend cubins under code_objects/); logs and the results JSON go to
# $OUT. Each step is time-limited.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${CARRY:-.carry-extend}
build=${BUILD:-build-extend}
out=${OUT:-/tmp/attention-extend-out}
. bench/attention_device_env.sh
export NETRA_LIBRARY="$PWD/$carry/libnetra.so" NETRA_CACHE_DIR=/tmp/netra-cache LD_LIBRARY_PATH="$PWD/$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
# The bench first (its shapes in order of what they decide; it starts no new shape after BENCH_S s), then the tests.
[ -f bench/results/attention_h200.json ] && cp bench/results/attention_h200.json "$out/attention_h200.json"
step timeout $((${BENCH_S:-55} + 30)) python3 bench/attention_extend.py --budget-s ${BENCH_S:-55} --objects "$carry/code_objects" \
  --out "$out/attention_h200.json" ${BENCH_ARGS:-} > "$out/bench.txt" 2>&1
cut -c1-300 "$out/bench.txt" | tail -n 12
# The native plan's cases (the served plan; its stage-two forms against the served bits), then the pair view's
# stage-two forms case; the host oracles take most of the time, so each step has its own limit.
step timeout ${TEST_S:-40} "$carry/test_attention_extend_gpu" -tc="*<native>,*<warpgroup*,extend: the native plan*" > "$out/extend_gpu.txt" 2>&1
[ "${PAIR_S:-10}" != 0 ] && step timeout ${PAIR_S:-10} "$carry/test_attention_extend_gpu" -tc="extend: every stage-two form*<pair view>" >> "$out/extend_gpu.txt" 2>&1
grep -E "MESSAGE|test cases|assertions|ERROR|FAILED" -A1 "$out/extend_gpu.txt" | grep -vE "^--$|MESSAGE" | cut -c1-160 | tail -n 40
if [ -f "$carry/libnetra.so" ]; then  # the C ABI and Python steps need libnetra
step timeout 20 "$carry/test_attention_extend_c_abi_gpu" > "$out/c_abi.txt" 2>&1
grep -E "test cases|FAILED|ERROR" "$out/c_abi.txt"
if python3 -c "import pytest" 2>/dev/null; then
  step timeout 40 python3 -m pytest -q -x tests/python/test_attention.py tests/python/test_attention_extend.py > "$out/python.txt" 2>&1
else  # no pytest there: run the test functions with the few pytest names they use
  mkdir -p /tmp/shim && cat > /tmp/shim/pytest.py <<'PY'
import contextlib, importlib, sys
class _Mark:
    def parametrize(self, names, values):
        def wrap(f):
            f.__dict__.setdefault("params", []).insert(0, ([n.strip() for n in names.split(",")], values)); return f
        return wrap
mark = _Mark()
def importorskip(name, reason=""): return importlib.import_module(name)
def fixture(scope=None):
    def wrap(f): f.is_fixture = True; return f
    return wrap
class _Info: value = None
@contextlib.contextmanager
def raises(kind):
    info = _Info()
    try:
        yield info
    except kind as e:
        info.value = e; return
    raise AssertionError(f"did not raise {kind}")
PY
  cat > /tmp/shim/run.py <<'PY'
import itertools, sys, traceback
sys.path[:0] = ["/tmp/shim", "python", "tests/python"]
failed = 0
for path in sys.argv[1:]:
    mod = {"__name__": path}; exec(compile(open(path).read(), path, "exec"), mod)
    fixtures = {k: v() for k, v in mod.items() if getattr(v, "is_fixture", False)}
    for name, f in list(mod.items()):
        if not name.startswith("test_") or not callable(f): continue
        grids = [[dict(zip(n, v if len(n) > 1 else (v,))) for v in vals] for n, vals in getattr(f, "params", [])]
        for combo in itertools.product(*grids) if grids else [()]:
            kw = {k: fixtures[k] for k in f.__code__.co_varnames[:f.__code__.co_argcount] if k in fixtures}
            for d in combo: kw.update(d)
            try:
                f(**kw); print("PASS", path, name, [str(v)[:40] for v in kw.values() if not hasattr(v, "_handle")])
            except Exception:
                failed += 1; print("FAIL", path, name); traceback.print_exc()
print("python tests failed:", failed); sys.exit(1 if failed else 0)
PY
  step timeout 40 python3 /tmp/shim/run.py tests/python/test_attention.py tests/python/test_attention_extend.py > "$out/python.txt" 2>&1
fi
grep -E "FAIL|passed|failed|Error" "$out/python.txt" | head -n 12
else
  echo "!! skipped: the C ABI and Python tests ($carry/libnetra.so not carried)"
fi
step timeout ${MEMCHECK_S:-20} compute-sanitizer --tool memcheck --error-exitcode 9 "$carry/test_attention_extend_gpu" \
  -tc="extend: a request whose extent*,extend: a refused call*,extend: every stage-two form*" -tc-exclude="*<pair view>" > "$out/memcheck.txt" 2>&1
tail -n 2 "$out/memcheck.txt"
# The warpgroup form's LDS hand-offs (ring, widened pieces, slot table, staged o) under racecheck.
step timeout ${RACECHECK_S:-30} compute-sanitizer --tool racecheck --error-exitcode 9 "$carry/test_attention_extend_gpu" \
  -tc="extend: the same input gives*" -tc-exclude="*<pair view>,*<native>" > "$out/racecheck.txt" 2>&1
tail -n 2 "$out/racecheck.txt"
exit $status
