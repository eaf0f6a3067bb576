#!/usr/bin/env bash
# Makes sure promtool (Debian's prometheus package) is installed, for the
# alert rules' unit tests (test/node/alert-rules.promtool.test.ts). Does
# nothing when it already is.
set -euo pipefail

if command -v promtool >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "promtool is missing; as root run: apt-get update && apt-get install -y --no-install-recommends prometheus" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update
# Only the package's binaries are needed: its service is not started (no init system runs here).
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends prometheus
