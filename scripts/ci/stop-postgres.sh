#!/usr/bin/env bash
# Stops a server started by scripts/ci/start-postgres.sh and removes its directory.
#
#   scripts/ci/stop-postgres.sh [DIR]   # DIR defaults to $TEST_POSTGRES_DIR
#
# Safe to call twice, and when start failed half-way.
set -euo pipefail

log() { echo "stop-postgres: $*" >&2; }

dir="${1:-${TEST_POSTGRES_DIR:-}}"
if [ -z "$dir" ]; then log "usage: stop-postgres.sh DIR (or set TEST_POSTGRES_DIR)"; exit 2; fi
if [ ! -d "$dir" ]; then log "$dir does not exist; nothing to stop"; exit 0; fi
data="$dir/data"

bin="${PG_BIN_DIR:-}"
if [ -z "$bin" ] && [ -f "$data/PG_VERSION" ] && [ -x "/usr/lib/postgresql/$(cat "$data/PG_VERSION")/bin/pg_ctl" ]; then
  bin="/usr/lib/postgresql/$(cat "$data/PG_VERSION")/bin"
fi
if [ -z "$bin" ]; then
  pg_ctl_path="$(command -v pg_ctl || true)"
  if [ -n "$pg_ctl_path" ]; then bin="$(dirname "$(readlink -f "$pg_ctl_path")")"; fi
fi

if [ -f "$data/postmaster.pid" ] && [ -n "$bin" ]; then
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$bin/pg_ctl" -D "$data" -m fast -w -t 30 stop >&2 || log "pg_ctl stop failed"
  else
    "$bin/pg_ctl" -D "$data" -m fast -w -t 30 stop >&2 || log "pg_ctl stop failed"
  fi
fi

# Remove only what start-postgres.sh made: a directory holding a data dir (or empty).
if [ -f "$data/PG_VERSION" ] || [ -z "$(ls -A "$dir")" ]; then
  rm -rf "$dir"
else
  log "$dir does not look like a start-postgres.sh directory; left in place"
fi
