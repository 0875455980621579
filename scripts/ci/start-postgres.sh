#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for CI: initdb + pg_ctl on a temporary
# directory, listening on 127.0.0.1 only, trust authentication.
#
#   pg_env="$(scripts/ci/start-postgres.sh [DIR])"   # fails (set -e) if the server does not start
#   eval "$pg_env"                                   # sets TEST_DATABASE_URL, TEST_POSTGRES_DIR
#   trap 'scripts/ci/stop-postgres.sh "$TEST_POSTGRES_DIR"' EXIT
#   ...                                              # tests create their own databases in it
#
# (A bare `eval "$(…)"` would hide a failed start: eval of nothing succeeds.)
# DIR must be reachable by the postgres user when run as root; default: mktemp -d.
#
# Only the `export` lines go to stdout (so `eval` is safe); progress and errors
# go to stderr. initdb refuses to run as root, so as root the server runs as the
# `postgres` user in a directory it owns.
# Environment: PG_BIN_DIR (default: newest /usr/lib/postgresql/*/bin, else initdb on PATH).
set -euo pipefail

log() { echo "start-postgres: $*" >&2; }

dir="${1:-}"
if [ -z "$dir" ]; then dir="$(mktemp -d "${TMPDIR:-/tmp}/gs-ci-pg-XXXXXX")"; fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
data="$dir/data"
logfile="$dir/postgres.log"

bin="${PG_BIN_DIR:-}"
if [ -z "$bin" ]; then
  bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n | tail -n 1 || true)"
fi
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  initdb_path="$(command -v initdb || true)"
  # pg_ctl finds `postgres` next to itself: use the real directory, not a symlink's.
  if [ -n "$initdb_path" ]; then bin="$(dirname "$(readlink -f "$initdb_path")")"; fi
fi
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
  log "initdb/pg_ctl not found: install the PostgreSQL server binaries or set PG_BIN_DIR"
  exit 1
fi

if [ "$(id -u)" = 0 ]; then
  chown -R postgres:postgres "$dir"
  as_owner() { runuser -u postgres -- "$@"; }
  if ! as_owner test -w "$dir"; then
    log "the postgres user cannot write $dir (is a parent directory private?)"
    exit 1
  fi
else
  as_owner() { "$@"; }
fi

if [ ! -f "$data/PG_VERSION" ]; then
  log "initdb in $data"
  as_owner "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-locale --no-sync --no-instructions >&2
  # Trust, but only on loopback and on the private socket directory.
  printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' | as_owner tee "$data/pg_hba.conf" >/dev/null
fi

free_port() {
  if command -v node >/dev/null 2>&1; then
    node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
  else
    echo $((20000 + RANDOM % 40000))
  fi
}

port=""
for attempt in 1 2 3 4 5; do
  candidate="$(free_port)"
  # Durability is pointless for a throwaway server; turning it off keeps CI fast.
  if as_owner "$bin/pg_ctl" -D "$data" -l "$logfile" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $candidate -k '$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >&2; then
    port="$candidate"
    break
  fi
  log "start on port $candidate failed (attempt $attempt)"
done
if [ -z "$port" ]; then
  log "PostgreSQL did not start; log tail:"
  tail -n 40 "$logfile" >&2 || true
  exit 1
fi

# pg_ctl -w waited for the postmaster; make sure it takes TCP connections too.
for _ in $(seq 1 100); do
  if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres; then break; fi
  sleep 0.1
done
if ! "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres; then
  log "PostgreSQL is not accepting connections on 127.0.0.1:$port"
  exit 1
fi
log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port, data in $data"

echo "export TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$port/postgres"
echo "export TEST_POSTGRES_DIR=$(printf '%q' "$dir")"
