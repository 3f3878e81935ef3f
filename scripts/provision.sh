#!/usr/bin/env bash
# Provisions the real servers the tests need: Debian's redis-server, PostgreSQL 15 and chromium.
# Installs what is missing with apt-get when running as root; otherwise stops with the command to run.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql)

# Debian starts a system PostgreSQL cluster (port 5432) after installing it; the tests start their
# own clusters on free ports, so a system cluster only holds memory and a port: stop it.
stop_system_postgres() {
  if command -v systemctl >/dev/null 2>&1; then systemctl disable --now postgresql >/dev/null 2>&1 || true; fi
  service postgresql stop >/dev/null 2>&1 || true
}

if [ "${#missing[@]}" -eq 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then stop_system_postgres; fi
  exit 0
fi

cmd="apt-get update && apt-get install -y ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "The tests need ${missing[*]}, which this machine lacks. Install it, then run the tests again:" >&2
  echo "  sudo sh -c '$cmd'" >&2
  exit 1
fi

echo "==> installing ${missing[*]} (the tests run a real Redis, a real PostgreSQL and a real Chromium): $cmd"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
# Debian starts a system redis-server on 6379 after the install; the tests start their own.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now redis-server >/dev/null 2>&1 || true; fi
service redis-server stop >/dev/null 2>&1 || true
stop_system_postgres
echo "==> installed: $(redis-server --version | cut -d' ' -f1-3); $(/usr/lib/postgresql/15/bin/postgres --version); $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
