#!/usr/bin/env bash
# Builds what a GPU machine runs into target/gpu/ (our GPU machines have CUDA but no
# Rust): the CUDA test binaries, the conformance runner, and run.sh, which runs them
# all with the GPU required. Carry target/gpu to the machine (the device tool's
# `carry`) and run `bash target/gpu/run.sh` in the repository root there. (The
# bundle is ~47 MB stripped: where it and the tree pass the tool's 64 MiB, carry
# it as a gzipped tar in an ignored folder and unpack it into target/ there.)
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/gpu
rm -rf "$out"
mkdir -p "$out"

# The test binary cargo built for `--test NAME` (its path is on cargo's stderr).
test_binary() {
  local pkg=$1 name=$2
  cargo test --release -p "$pkg" --test "$name" --no-run 2>&1 |
    sed -n "s|.*Executable tests/$name.rs (\(.*\))|\1|p" | tail -n 1
}

cargo build --release --example conformance --example bench_report
cp target/release/examples/conformance target/release/examples/bench_report "$out/"
for t in cuda_nvrtc cuda_device; do
  cp "$(test_binary lazyfuse-runtime "$t")" "$out/$t"
done
for t in cuda_backend cuda_compile_check cuda_tensors; do
  cp "$(test_binary lazyfuse "$t")" "$out/$t"
done
strip "$out"/* 2>/dev/null || true

cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On a GPU machine, in the repository root: every CUDA check, the GPU required.
set -uo pipefail
here=$(dirname "$0")
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
export LAZYFUSE_CUDA_INCLUDE=${LAZYFUSE_CUDA_INCLUDE:-/usr/local/cuda/include}
export LAZYFUSE_REQUIRE_GPU=1 LAZYFUSE_REQUIRE_NVRTC=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
status=0
for t in cuda_nvrtc cuda_device cuda_backend cuda_compile_check cuda_tensors; do
  echo "== $t"
  "$here/$t" --test-threads=1 2>&1 | tail -n 15 || status=1
done
echo "== conformance on tensors of cuda:0"
"$here/conformance" tests/data/conformance --device cuda | tail -n 3 || status=1
"$here/conformance" tests/data/conformance_supplement --device cuda | tail -n 1 || status=1
echo "== conformance with CPU tensors, each kernel run on cuda:0"
"$here/conformance" tests/data/conformance --backend cuda | tail -n 1 || status=1
echo "== a second process compiles nothing (the disk cache): NVRTC lines of a rerun"
LAZYFUSE_DEBUG=1 "$here/conformance" tests/data/conformance_supplement --device cuda 2>&1 |
  grep "^nvrtc:" | sed -E 's/^nvrtc: (compiled|.*from disk cache).*/\1/' | sort | uniq -c
echo "== bench_report on cuda:0"
"$here/bench_report" --device cuda || status=1
exit $status
RUN
chmod +x "$out/run.sh"
du -sh "$out"
