# bench/moe_device_step.sh — sourced by the MoE device scripts (bench/moe_device.sh in its modes,
# and the others that source it): their environment, and step LOG LIMIT COMMAND..., which runs COMMAND
# for at most LIMIT seconds (less when the script's BUDGET is nearly spent), appending its output and
# exit status to $out/LOG. Needs $build, $out, $budget set.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export NETRA_LIBRARY="$build/libnetra.so" PYTHONPATH="$PWD/python" NETRA_CACHE_DIR=/tmp/netra-cache
start=$(date +%s)
step() {
  local log=$out/$1 limit=$2
  shift 2
  local left=$(( budget - ($(date +%s) - start) ))
  [ "$left" -lt "$limit" ] && limit=$left
  echo "== $* (limit ${limit} s)" >> "$log"
  if [ "$limit" -le 5 ]; then echo "skipped: the budget is spent" >> "$log"; return; fi
  timeout "$limit" "$@" >> "$log" 2>&1
  echo "rc=$? after $(( $(date +%s) - start )) s" >> "$log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
