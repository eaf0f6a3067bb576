#!/usr/bin/env bash
# Makes sure Debian's chromium is installed, for the dashboard's browser test
# (test/node/dashboard.browser.test.ts). Does nothing when it already is.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is missing; as root run: apt-get update && apt-get install -y chromium" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Another install may hold dpkg's lock for a while; wait for it rather than fail.
apt-get -o DPkg::Lock::Timeout=600 update
apt-get -o DPkg::Lock::Timeout=600 install -y chromium
