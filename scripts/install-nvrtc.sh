#!/usr/bin/env bash
# Installs NVRTC (libnvrtc.so.13 and its builtins) and the CUDA headers (cuda_fp16.h,
# cuda_bf16.h, ...) from NVIDIA's PyPI wheels into DIR, so lazyfuse can compile CUDA
# kernels on a machine with no CUDA toolkit (CI does this). Idempotent: a second run with
# the same DIR installs nothing. Prints the export lines that make lazyfuse find them:
#
#   eval "$(scripts/install-nvrtc.sh ~/.cache/lazyfuse/nvrtc)"
#
# Only the export lines go to stdout (so eval works); progress goes to stderr.
# DIR should be a directory of its own: a repair reinstalls its whole `nvidia/` tree.
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

# Installed when every file lazyfuse needs and both wheels' records are there.
installed() {
  ls "$lib"/libnvrtc.so.13 "$lib"/libnvrtc-builtins.so.13* "$include/cuda_fp16.h" "$include/cuda_bf16.h" \
    "$dir/nvidia_cuda_nvrtc-$version.dist-info" "$dir/nvidia_cuda_runtime-$version.dist-info" > /dev/null 2>&1
}

if installed; then
  echo "install-nvrtc: NVRTC $version already in $dir" >&2
else
  echo "install-nvrtc: installing nvidia-cuda-nvrtc==$version nvidia-cuda-runtime==$version into $dir" >&2
  # Both wheels in one call, always: they share the top-level `nvidia/` directory, and
  # `pip install --target --upgrade` replaces a top-level directory whole, so
  # installing one of them alone would delete the other's files.
  # --no-deps: the wheels' dependencies are other CUDA wheels we do not need.
  # --upgrade: replace what an interrupted run left half-written.
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --upgrade --target "$dir" "nvidia-cuda-nvrtc==$version" "nvidia-cuda-runtime==$version" >&2
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

# %q: a path with spaces or quotes still evaluates to itself.
# shellcheck disable=SC2016 # the ${…} is for the shell that evals the line
printf 'export LD_LIBRARY_PATH=%q"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"\n' "$lib"
printf 'export LAZYFUSE_CUDA_INCLUDE=%q\n' "$include"
