#!/usr/bin/env bash
# llama.cpp's own llama-bench, built from the very source perch-llm vendors (llama-cpp-sys-2's
# copy in cargo's registry) with the same backend and CPU options (.cargo/config.toml): the peer
# of `cargo bench -p perch-llm --bench gpu`. Prints the binary's path; a second run only prints it.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${CARGO_TARGET_DIR:-$root/target}/llama-bench"
manifest=$(cd "$root" && cargo metadata --format-version 1 --locked 2>/dev/null |
  python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "llama-cpp-sys-2"))')
src="$(dirname "$manifest")/llama.cpp"
bin="$out/bin/llama-bench"
if [[ ! -x "$bin" || "$src" -nt "$bin" ]]; then
  "$root/scripts/vulkan-headers.sh"
  cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DGGML_VULKAN=ON -DVulkan_INCLUDE_DIR="$root/target/vulkan-sdk/include" \
    -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_OPENMP=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF >&2
  cmake --build "$out" --target llama-bench -j "$(nproc)" >&2
fi
echo "$bin"
