#!/usr/bin/env bash
# Installs Debian's chromium for the browser test when it is missing (never a browser downloaded by a test tool).
set -u
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
  echo "chromium is missing and this user cannot install it: the browser test will be skipped" >&2; exit 0; fi
echo "installing Debian chromium for the browser test..." >&2
$SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq chromium >/dev/null \
  || echo "could not install chromium: the browser test will be skipped" >&2
exit 0
