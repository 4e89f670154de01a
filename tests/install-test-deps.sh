#!/usr/bin/env bash
# Installs what the browser tests (tests/test_web_browser.py) need beyond `pip install -e '.[test]'`:
# the playwright package (if it is missing) and Debian's Chromium at /usr/bin/chromium (only if it is
# missing), with a font for the pages' symbols. Never downloads a browser of its own (`playwright install`).
# Safe to run again: it only installs what is missing, and says what it does.
#
#   bash tests/install-test-deps.sh          # as root, or a user who may sudo
#   PYTHON=python3.11 bash tests/install-test-deps.sh
set -euo pipefail

PYTHON="${PYTHON:-python}"
say() { echo "install-test-deps: $*"; }

if "$PYTHON" -c "import playwright.async_api" 2>/dev/null; then
  say "playwright is installed ($("$PYTHON" -m pip show playwright 2>/dev/null | sed -n 's/^Version: //p'))"
else
  say "installing playwright with $PYTHON -m pip"
  "$PYTHON" -m pip install --quiet "playwright>=1.40"
fi

if [ -x /usr/bin/chromium ]; then
  say "/usr/bin/chromium is installed: $(/usr/bin/chromium --version 2>/dev/null | head -n 1)"
else
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  say "installing chromium and fonts-dejavu-core from apt"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
  say "installed: $(/usr/bin/chromium --version 2>/dev/null | head -n 1)"
fi

say "ready: KALAH_REQUIRE_BROWSER=1 python -m pytest tests/test_web_browser.py runs the browser tests"
