#!/usr/bin/env bash
# GPU side of a variant comparison: times the decode block with each library in turn, PASSES
# times over (passes alternate the libraries, so that drift shows), then the timeline of each
# library named in TIMELINES. Writes NAME.PASS.json and tl_NAME.json under OUTDIR for
# lab/collect.py.
# usage: TOKENS=8,12,16 PASSES=2 TIMELINES="base aq1" lab/run_block.sh OUTDIR NAME=LIBDIR ...
#   (LIBDIR holds the variant's libnetra.so, from lab/build.sh)
set -u
out=$1; shift
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/python" NETRA_CACHE_DIR="${NETRA_CACHE_DIR:-/tmp/netra-cache}"
for pass in $(seq "${PASSES:-2}"); do
  for pair in "$@"; do
    name=${pair%%=*} dir=${pair#*=}
    NETRA_LIBRARY=$dir/libnetra.so timeout 150 python3 bench/moe_block.py --tokens "${TOKENS:-8,12,16}" --compile-tokens "" \
      --out "$out/$name.$pass.json" > "$out/$name.$pass.txt" 2>&1
    echo "$name pass $pass rc $?"
  done
done
for pair in "$@"; do
  name=${pair%%=*} dir=${pair#*=}
  case " ${TIMELINES:-} " in *" $name "*) ;; *) continue ;; esac
  NETRA_LIBRARY=$dir/libnetra.so timeout 150 python3 bench/moe_block_timeline.py --tokens "${TIMELINE_TOKENS:-16}" \
    --out "$out/tl_$name.json" > "$out/tl_$name.txt" 2>&1
  echo "timeline $name rc $?"
done
