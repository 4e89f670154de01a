#!/usr/bin/env bash
# Installs what the tests need beyond `pip install -e '.[test]'`, from the distribution's packages:
#   - Chromium at /usr/bin/chromium, with a font for the pages' symbols (the browser tests,
#     tests/helpers/browser.py, drive it with Playwright; no browser is ever downloaded otherwise);
#   - PostgreSQL's server binaries (the storage tests start a throwaway server, tests/helpers/pg.py);
#   - redis-server (the cluster tests start a throwaway one, tests/helpers/redis_server.py);
#   - caddy (the proxy tests put a throwaway one with its internal CA in front of a server, tests/helpers/caddy.py,
#     and check the shipped deploy/Caddyfile).
# It also installs the playwright package if the Python in use lacks it. Safe to run again: it only
# installs what is missing, and says what it does. Run as root, or as a user who may sudo.
#
#   bash tests/install-test-deps.sh
#   PYTHON=python3.11 bash tests/install-test-deps.sh
set -euo pipefail

PYTHON="${PYTHON:-python}"
say() { echo "install-test-deps: $*"; }

if "$PYTHON" -c "import playwright.async_api" 2>/dev/null; then
  say "playwright is installed"
else
  say "installing playwright with $PYTHON -m pip"
  "$PYTHON" -m pip install --quiet "playwright>=1.40"
fi

packages=()
if [ -x /usr/bin/chromium ]; then
  say "chromium is installed: $(/usr/bin/chromium --version 2>/dev/null | head -n 1)"
else
  packages+=(chromium fonts-dejavu-core)
fi
if compgen -G "/usr/lib/postgresql/*/bin/postgres" > /dev/null || command -v postgres > /dev/null; then
  say "PostgreSQL's server is installed: $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -n 1)"
else
  packages+=(postgresql)
fi

if command -v redis-server > /dev/null || [ -x /usr/bin/redis-server ]; then
  say "redis-server is installed: $(redis-server --version 2>/dev/null | head -n 1)"
else
  packages+=(redis-server)
fi

if command -v caddy > /dev/null; then
  say "caddy is installed: $(caddy version 2>/dev/null | head -n 1)"
else
  packages+=(caddy)
fi

if [ "${#packages[@]}" -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  say "installing from apt: ${packages[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}"
fi
say "ready (CI sets KALAH_REQUIRE_BROWSER=1 and KALAH_REQUIRE_SERVICES=1 so these tests fail, not skip)"
