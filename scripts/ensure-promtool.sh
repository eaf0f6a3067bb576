#!/usr/bin/env bash
# promtool (Debian's prometheus package, binaries only: its service is never
# started), for the alert rules' unit tests (test/node/alert-rules.promtool.test.ts).
exec bash "$(dirname "$0")/ensure-debian-package.sh" promtool prometheus --no-install-recommends
