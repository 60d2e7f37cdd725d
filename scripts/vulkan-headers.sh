#!/usr/bin/env bash
# The Vulkan headers ggml's Vulkan backend compiles against (llama.cpp in perch-llm, whisper.cpp
# in the app), into target/vulkan-sdk, where .cargo/config.toml points VULKAN_SDK (CMake's
# FindVulkan looks there first).
#
# ggml needs Vulkan 1.3.275 or newer (VK_EXT_layer_settings); Debian 12 ships 1.3.239. Headers
# only: Debian 13's libvulkan-dev, checksum pinned, unpacked, nothing installed. The binaries
# link no Vulkan library at all: they open the system's loader at run time (perch_gpu::loader).
# Idempotent: a second run finds the headers and returns at once.
set -euo pipefail

VERSION=1.4.309.0-1
SHA256=8d329d465e16168afff58b1bd0dd6db46aac2cc3f56054a481b25a04e90b345a
URL="http://deb.debian.org/debian/pool/main/v/vulkan-loader/libvulkan-dev_${VERSION}_amd64.deb"

root="$(cd "$(dirname "$0")/.." && pwd)"
sdk="${1:-$root/target/vulkan-sdk}"
stamp="$sdk/.perch-$VERSION"
[[ -f "$stamp" ]] && exit 0

# The system's headers serve where they are new enough (Debian 13, Ubuntu 24.10 and later).
system=/usr/include/vulkan/vulkan_core.h
if [[ -f "$system" ]] && (( $(sed -n 's/^#define VK_HEADER_VERSION \([0-9]*\)$/\1/p' "$system") >= 275 )) \
    && [[ -f /usr/include/vulkan/vulkan.hpp ]]; then
  mkdir -p "$sdk/lib"
  ln -sfn /usr/include "$sdk/include"
  touch "$stamp"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "Fetching the Vulkan $VERSION headers (Debian's libvulkan-dev, 1.6 MB)"
curl -fsSL --retry 3 -o "$work/headers.deb" "$URL"
echo "$SHA256  $work/headers.deb" | sha256sum -c --quiet -
dpkg-deb -x "$work/headers.deb" "$work/root"
rm -rf "$sdk"
mkdir -p "$sdk/lib"
cp -r "$work/root/usr/include" "$sdk/include"
touch "$stamp"
