#!/usr/bin/env bash
# Debian's chromium, for the browser tests (test/node/*.browser.test.ts).
exec bash "$(dirname "$0")/ensure-debian-package.sh" chromium chromium
