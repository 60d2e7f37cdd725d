#!/usr/bin/env bash
# Installs what building, running and testing Perch needs on Debian/Ubuntu.
# Idempotent: packages already present are skipped, so a second run takes a second.
set -euo pipefail

# Build: WebKitGTK/GTK for the window, the tray, and the C libraries of the -sys crates.
BUILD_PKGS=(
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libssl-dev pkg-config build-essential libxdo-dev libasound2-dev cmake clang libclang-dev
  libdbus-1-dev libx11-dev libxi-dev libxtst-dev libxrandr-dev curl file
  # Screen capture (xcap): PipeWire and SPA through bindgen, Wayland, EGL, GBM/DRM, XCB.
  libpipewire-0.3-dev libspa-0.2-dev libwayland-dev libegl-dev libegl1-mesa-dev libgbm-dev
  libdrm-dev libxcb1-dev libxcb-randr0-dev libxcb-shm0-dev libxcb-xfixes0-dev
  # `make app-release` reads the .rpm it builds as Fedora's tools do (scripts/check-rpm.sh) and
  # unpacks it to check its metadata (rpm2cpio, cpio).
  rpm cpio
  # ggml's Vulkan backend (llama.cpp, whisper.cpp): its shaders are compiled with glslc; the
  # headers come newer than Debian 12's from scripts/vulkan-headers.sh (below). llama.cpp's
  # Vulkan CMake also asks for SPIRV-Headers' CMake package (`find_package(... CONFIG
  # REQUIRED)`): a fresh machine without it fails to configure llama-cpp-sys-2.
  glslc libvulkan-dev spirv-headers
)
# Tests: a virtual display, a window manager and X tools, WebKit's WebDriver, a keyring, and
# speech to dictate (espeak-ng speaks known sentences, sox converts rates and channels).
TEST_PKGS=(
  xvfb openbox xdotool x11-utils x11-apps imagemagick webkit2gtk-driver
  gnome-keyring libsecret-tools dbus dbus-x11 procps
  # Screenshot tests: paint the root window, split the screen into monitors.
  x11-xserver-utils
  espeak-ng sox
  # Mesa's software Vulkan device (lavapipe): the local model and whisper run on the Vulkan
  # backend in the tests with no graphics card.
  mesa-vulkan-drivers
  # Window specs read the placement the app saved from its database.
  sqlite3
  # The terminal bench's peer: per-command start-up under bubblewrap beside perch-sandbox.
  bubblewrap
  # Dictate-anywhere types into a real GTK text field (tests/support/text_field.py).
  python3-gi gir1.2-gtk-3.0
  # The only fonts the end-to-end tests lay the UI out with (tests/e2e/fonts.conf): Latin,
  # Arabic and the rest from DejaVu, Japanese from IPAGothic.
  fonts-dejavu-core fonts-ipafont-gothic
  # The Wayland lane (tests/e2e/desktops/sway.sh): sway headless with XWayland, its portal
  # backends (wlr takes screenshots with grim; GTK answers Access), PipeWire, a virtual keyboard.
  sway xwayland grim wtype pipewire xdg-desktop-portal xdg-desktop-portal-wlr xdg-desktop-portal-gtk
  # The GNOME lane (tests/e2e/desktops/gnome.sh): GNOME Shell headless, its portal backend, the
  # session manager for PipeWire it expects.
  gnome-shell xdg-desktop-portal-gnome wireplumber
  # The validators software centres and desktops hold the package's metadata and the
  # autostart entry to (scripts/check-metadata.sh, perch-foundation's autostart tests).
  desktop-file-utils appstream
  # The clean-system install test (scripts/test-install.sh): a Debian root, entered with
  # bubblewrap (above), the app's window on Xvfb taken with ImageMagick (above).
  debootstrap
)

# Benchmarks: Chromium as the Electron stand-in, on the same virtual display.
BENCH_PKGS=(xvfb x11-utils chromium python3-venv imagemagick espeak-ng sox bubblewrap mesa-vulkan-drivers)
# The Python venv for tests and benchmarks.
PYTHON_PKGS=(python3 python3-venv)

want=("${BUILD_PKGS[@]}")
case "${1:-}" in
  --test) want+=("${TEST_PKGS[@]}") ;;
  --bench) want+=("${BENCH_PKGS[@]}") ;;
  --python) want=("${PYTHON_PKGS[@]}") ;;
  "") ;;
  *) echo "usage: $0 [--test|--bench|--python]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if ! command -v apt-get >/dev/null; then
    echo "error: apt-get not found. Install these packages with your package manager: ${missing[*]}" >&2
    exit 1
  fi
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "error: not root and no sudo. Run as root: apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  echo "==> installing system packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Vulkan headers every build of ggml needs (not with --python: nothing is built there).
[[ "${1:-}" == --python ]] || "$(dirname "$0")/vulkan-headers.sh"

# Rust and Node.js come from their own installers, not apt: check them and say how.
"$(dirname "$0")/check-toolchain.sh"
