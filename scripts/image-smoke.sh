#!/usr/bin/env bash
# Replays the Dockerfile's two stages without Docker (no daemon, no base image here) and proves the
# runtime stage starts: the COPY lists come from the Dockerfile itself (scripts/dockerfile-stages.ts),
#   build:   the build context's files into a temp dir, `npm run build` (node_modules linked: same lock);
#   runtime: package.json + lock, `npm ci --omit=dev`, dist/ from the build dir, config/;
# then runs the runtime stage's command (`node <start:prod flags> dist/bin/start.js`; tini left out) as a
# non-root uid (setpriv, uid 1000 like the image's `node` user), every service in one process (SERVICES
# unset, the zero-setup start: embedded PostgreSQL), and checks it with the Dockerfile's own HEALTHCHECK
# command, then SIGTERM → exit 0. Prints the runtime tree's size (du) and the image size estimate.
# Usage: bash scripts/image-smoke.sh [--keep]   (needs the npm registry for npm ci; ~1–2 min)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
log() { printf '[image-smoke] %s\n' "$*"; }
KEEP=0
[ "${1:-}" = "--keep" ] && KEEP=1

T=$(mktemp -d /tmp/msa-image-smoke.XXXXXX)
chmod 755 "$T"
PID=""
cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -TERM "$PID" 2>/dev/null || true; sleep 3; kill -KILL "$PID" 2>/dev/null || true; fi
  if [ "$KEEP" = 1 ]; then log "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

stage_copies() { npx --no-install tsx scripts/dockerfile-stages.ts copies "$1"; }
# copy_stage <stage> <dir>: the stage's COPY instructions from the build context (--from ones are printed)
copy_stage() {
  node -e '
    const [dir, repo] = process.argv.slice(1), path = require("node:path"), fs = require("node:fs");
    for (const c of JSON.parse(fs.readFileSync(0, "utf8"))) {
      if (c.from) { console.log(`FROM ${c.from} ${c.sources.join(" ")} ${c.dest}`); continue; }
      for (const s of c.sources) {
        const dest = c.dest.endsWith("/") || c.sources.length > 1 ? path.join(dir, c.dest, path.basename(s)) : path.join(dir, c.dest);
        fs.cpSync(path.join(repo, s), dest, { recursive: true });
      }
    }' "$2" "$REPO" < <(stage_copies "$1")
}

log "build stage → $T/build"
mkdir -p "$T/build"
copy_stage build "$T/build" >/dev/null
ln -s "$REPO/node_modules" "$T/build/node_modules" # npm ci of the same lock (dev dependencies included)
(cd "$T/build" && npm run -s build)

log "runtime stage → $T/app"
mkdir -p "$T/app"
while read -r kw from src dest; do
  [ "$kw" = FROM ] || continue
  [ "$from" = build ] && [ "$src" = /app/dist ] || { log "unexpected COPY --from=$from $src"; exit 1; }
  cp -r "$T/build/dist" "$T/app/$dest"
done < <(copy_stage runtime "$T/app")
(cd "$T/app" && NODE_ENV=production npm ci --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
[ -d "$T/app/dist/bin" ] && [ -f "$T/app/config/dev-users.json" ] || { log "dist/ or config/ missing"; exit 1; }
if [ -e "$T/app/node_modules/tsx" ] || [ -e "$T/app/node_modules/typescript" ]; then
  log "FAIL: a compiler (tsx/typescript) is in the runtime tree"; exit 1
fi
mkdir -p "$T/app/.data" "$T/home"
chown 1000:1000 "$T/app/.data" "$T/home"

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
PORT=$(free_port); PGP=$(free_port); SIM=$(free_port); MET=$(free_port)
mapfile -t CMD < <(npx --no-install tsx scripts/dockerfile-stages.ts cmd | node -e 'for (const w of JSON.parse(require("fs").readFileSync(0,"utf8"))) console.log(w)')
[ "${CMD[0]}" = /usr/bin/tini ] && CMD=("${CMD[@]:2}") # tini is the image's PID 1, not installed here
[ "${CMD[0]}" = node ] || { log "runtime command is not node: ${CMD[*]}"; exit 1; }
CMD[0]=$(command -v node)
AS=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then AS=(setpriv --reuid=1000 --regid=1000 --clear-groups); fi
log "starting ${AS[*]:-as uid $(id -u)}: ${CMD[*]} (all services, zero-setup, PORT=$PORT)"
(cd "$T/app" && exec env -i PATH="$PATH" HOME="$T/home" NODE_ENV=production PORT="$PORT" EMBEDDED_PG_PORT="$PGP" \
  SANDBOX_COURIER_PORT="$SIM" SANDBOX_COURIER_URL="http://127.0.0.1:$SIM" METRICS_PORT="$MET" LOGLEVEL=warn \
  "${AS[@]}" "${CMD[@]}") >"$T/app.log" 2>&1 &
PID=$!

mapfile -t HC < <(npx --no-install tsx scripts/dockerfile-stages.ts healthcheck | node -e 'for (const w of JSON.parse(require("fs").readFileSync(0,"utf8"))) console.log(w)')
ok=0
for _ in $(seq 1 120); do
  kill -0 "$PID" 2>/dev/null || { log "FAIL: the process exited"; tail -40 "$T/app.log"; exit 1; }
  if env -i PATH="$PATH" PORT="$PORT" "${HC[@]}"; then ok=1; break; fi
  sleep 1
done
[ "$ok" = 1 ] || { log "FAIL: the HEALTHCHECK never passed"; tail -40 "$T/app.log"; exit 1; }
log "HEALTHCHECK passed: $(curl -s "http://127.0.0.1:$PORT/ready")"
log "process: uid $(stat -c %u "/proc/$PID"), $(tr '\0' ' ' <"/proc/$PID/cmdline")"

kill -TERM "$PID"
code=0; wait "$PID" || code=$?
PID=""
[ "$code" = 0 ] || { log "FAIL: exit code $code after SIGTERM"; tail -40 "$T/app.log"; exit 1; }
log "SIGTERM → exit 0"

rm -rf "$T/app/.data" "$T/home"
size=$(du -sm "$T/app" | cut -f1)
log "runtime tree (what the runtime stage adds to node:24-slim): ${size} MB; largest node_modules entries:"
(cd "$T/app/node_modules" && du -sm -- * | sort -rn >"$T/du.txt") && sed -n '1,6s/^/    /p' "$T/du.txt"
log "image size estimate: ~$((size + 220)) MB uncompressed (node:24-slim ≈ 220 MB uncompressed / 75 MB compressed + ${size} MB + tini ≈ 1 MB); an estimate, no image was built"
log "OK"
