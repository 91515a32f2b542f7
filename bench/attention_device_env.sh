# bench/attention_device_env.sh — sourced by bench/attention*_device.sh after they set carry, build
# and out: makes the output and build folders, the device's environment (CUDA on PATH, NCCL / torch
# multicast off, unbuffered Python), links $build/code_objects (the test binaries'
# NETRA_CODE_OBJECT_DIR) to the carried objects — on the device only (ON_DEVICE=1): a local build's
# own folder is never replaced — and defines step (run a command, record a failure in $status).
mkdir -p "$out" "$build"
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
if [ -d "$build/code_objects" ] && [ ! -L "$build/code_objects" ]; then
  [ "${ON_DEVICE:-0}" = 1 ] || { echo "refusing to replace $build/code_objects (a local build's folder): set ON_DEVICE=1 on the device"; exit 2; }
  rm -rf "$build/code_objects"
fi
ln -sfn "$PWD/$carry/code_objects" "$build/code_objects"
status=0
step() { echo "== $*"; "$@" || { echo "!! FAILED ($?): $*"; status=1; }; }
