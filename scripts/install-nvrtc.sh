#!/usr/bin/env bash
# Installs NVRTC (libnvrtc.so.13 and its builtins) and the CUDA headers (cuda_fp16.h,
# cuda_bf16.h, ...) from NVIDIA's PyPI wheels into DIR, so lazyfuse can compile CUDA
# kernels on a machine with no CUDA toolkit (CI does this). Idempotent: a second run with
# the same DIR installs nothing. Prints the export lines that make lazyfuse find them:
#
#   eval "$(scripts/install-nvrtc.sh ~/.cache/lazyfuse/nvrtc)"
#
# Only the export lines go to stdout (so eval works); progress goes to stderr.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR   (installs NVRTC 13.0 and the CUDA headers into DIR)" >&2
  exit 2
fi

# One version for both wheels: the GPU machines run the 13.0 toolkit, and NVRTC's
# builtins and headers must match the NVRTC library.
version=13.0.88
dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
lib="$dir/nvidia/cu13/lib"
include="$dir/nvidia/cu13/include"

# Each wheel is checked by a file it installs, so a partial earlier run is completed.
need=()
if ! ls "$lib"/libnvrtc.so.13* > /dev/null 2>&1 || ! ls "$lib"/libnvrtc-builtins.so.13* > /dev/null 2>&1 \
  || ! ls "$dir"/nvidia_cuda_nvrtc-"$version".dist-info > /dev/null 2>&1; then
  need+=("nvidia-cuda-nvrtc==$version")
fi
if [ ! -f "$include/cuda_fp16.h" ] || [ ! -f "$include/cuda_bf16.h" ] \
  || ! ls "$dir"/nvidia_cuda_runtime-"$version".dist-info > /dev/null 2>&1; then
  need+=("nvidia-cuda-runtime==$version")
fi

if [ ${#need[@]} -gt 0 ]; then
  echo "install-nvrtc: installing ${need[*]} into $dir" >&2
  # --no-deps: the wheels' dependencies are other CUDA wheels we do not need.
  # --upgrade: replace what an interrupted run left half-written.
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --target "$dir" "${need[@]}" >&2
else
  echo "install-nvrtc: NVRTC $version already in $dir" >&2
fi

# Verify where the files landed: a wheel that moved them would otherwise give a
# silent "NVRTC not found" later.
for f in "$lib/libnvrtc.so.13" "$include/cuda_fp16.h" "$include/cuda_bf16.h"; do
  if [ ! -e "$f" ]; then
    echo "install-nvrtc: expected $f after the install, it is missing" >&2
    exit 1
  fi
done
if ! ls "$lib"/libnvrtc-builtins.so.13* > /dev/null 2>&1; then
  echo "install-nvrtc: expected $lib/libnvrtc-builtins.so.13.* after the install, it is missing" >&2
  exit 1
fi

echo "export LD_LIBRARY_PATH=\"$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
echo "export LAZYFUSE_CUDA_INCLUDE=\"$include\""
