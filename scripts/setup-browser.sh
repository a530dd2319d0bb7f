#!/usr/bin/env bash
# Installs the browser that the web board's tests drive (python/tests/test_web.py): Debian's
# `chromium` package, headless, through Playwright (the Python package, pinned in
# python/requirements-dev.txt). Playwright's own browser download is not used: it needs a network
# this project does not assume.
#
# Does nothing when chromium is already there ($ZERTZ_CHROMIUM, or `chromium` on the PATH).
# Otherwise needs apt-get and root (or sudo without a password).
set -euo pipefail

if [ -n "${ZERTZ_CHROMIUM:-}" ] && [ -x "$ZERTZ_CHROMIUM" ]; then
    echo "setup-browser: $ZERTZ_CHROMIUM"
    exit 0
fi
if command -v chromium >/dev/null 2>&1; then
    echo "setup-browser: $(command -v chromium)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: no chromium and no apt-get: install chromium, or set ZERTZ_CHROMIUM to one" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then
        sudo="sudo -n"
    else
        echo "error: installing chromium needs root: run 'apt-get install chromium' as root" >&2
        exit 1
    fi
fi
echo "setup-browser: installing Debian's chromium (apt-get)"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
echo "setup-browser: $(command -v chromium)"
