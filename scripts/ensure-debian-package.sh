#!/usr/bin/env bash
# Usage: ensure-debian-package.sh BINARY PACKAGE [apt-get install options...]
# Makes sure BINARY is on the PATH, installing Debian's PACKAGE when it is
# not. Does nothing when it already is.
set -euo pipefail
binary="$1"
package="$2"
shift 2

if command -v "$binary" >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "$binary is missing; as root run: apt-get update && apt-get install -y $* $package" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Another install may hold dpkg's lock for a while; wait for it rather than fail.
apt-get -o DPkg::Lock::Timeout=600 update
apt-get -o DPkg::Lock::Timeout=600 install -y "$@" "$package"
