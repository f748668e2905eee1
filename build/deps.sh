#!/usr/bin/env bash
# build/deps.sh — set up a fresh Debian/Ubuntu machine to build Ember with its
# Fyne UI (cgo: OpenGL + X11 through GLFW), then download the Go modules.
#
#   build/deps.sh          build dependencies only
#   build/deps.sh --test   also what the UI screenshot tests under Xvfb need
#
# Idempotent: each package is checked with dpkg first, and apt-get (with its
# network access) runs only when something is missing, so a second run is fast
# and works offline. Servers that build with -tags nogui need none of the
# system packages, only Go.
set -euo pipefail

usage() {
	sed -n '2,11s/^# \{0,1\}//p' "$0"
}

want_test=0
for arg in "$@"; do
	case "$arg" in
	--test) want_test=1 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "deps.sh: unknown argument: $arg" >&2; usage >&2; exit 2 ;;
	esac
done

# What Fyne v2's cgo build needs on Linux (X11 GLFW backend):
#   gcc, pkg-config          the cgo toolchain
#   libgl1-mesa-dev          GL headers and libGL
#   libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev
#   libxxf86vm-dev           the X11 libraries GLFW compiles and links against
#                            (the part of xorg-dev it uses, without the rest)
#   libxkbcommon-dev         keyboard handling
pkgs=(
	gcc pkg-config
	libgl1-mesa-dev
	libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev
	libxkbcommon-dev
)
# Screenshot tests of a real window: a virtual X server, and xauth for xvfb-run
# (only recommended by the xvfb package, and we install without recommends).
if [ "$want_test" = 1 ]; then
	pkgs+=(xvfb xauth)
	# The CPU kernels' C must also build with clang (macOS's compiler; it rejects some
	# things GCC accepts, such as a loop variable as an intrinsic's immediate).
	pkgs+=(clang)
	# The NEON kernels' tests, cross-compiled and run under qemu (build/test-arm64.sh).
	if [ "$(uname -m)" = x86_64 ]; then
		pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
	fi
	# The API tests drive the server with the official openai npm client.
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		pkgs+=(nodejs npm)
	fi
fi

installed() {
	dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed$'
}

if command -v dpkg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	missing=()
	for p in "${pkgs[@]}"; do
		installed "$p" || missing+=("$p")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		sudo=()
		if [ "$(id -u)" -ne 0 ]; then
			if ! command -v sudo >/dev/null 2>&1; then
				echo "deps.sh: need root or sudo to install: ${missing[*]}" >&2
				exit 1
			fi
			sudo=(sudo)
		fi
		echo "deps.sh: installing ${missing[*]}"
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "${missing[@]}"
	else
		echo "deps.sh: system packages already installed"
	fi
else
	echo "deps.sh: not a Debian/Ubuntu system; install the equivalents of: ${pkgs[*]}" >&2
fi

if ! command -v go >/dev/null 2>&1; then
	echo "deps.sh: go not found in PATH (need Go as named in go.mod)" >&2
	exit 1
fi
cd "$(dirname "$0")/.."
go mod download
if [ "$want_test" = 1 ]; then
	# Pinned by build/npm/package-lock.json; only the npm registry is needed.
	(cd build/npm && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "deps.sh: done"
