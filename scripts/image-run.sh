#!/usr/bin/env bash
# Runs the built image (scripts/image-build.sh) where no container engine can start it (issue 30;
# docs/decisions/0112-image-build-offline.md): its root file system, from containers-storage, under chroot in
# fresh mount and PID namespaces, as the image's USER, with the image's ENTRYPOINT + CMD, WORKDIR and ENV, plus
# what a runtime adds (/proc, /dev, a /tmp, /etc/hosts with localhost, the host's /etc/resolv.conf) and the host's
# network (as `--network host`). Each run starts from a fresh working container (the image's files, writable).
#
# Why: on this machine `podman run` cannot start a container. crun refuses the cgroup v1/v2 hybrid ("cgroups in
# hybrid mode not supported, drop all controllers from cgroupv2"). With --cgroups=disabled, crun and runc both fail
# to set the default rlimits ("setrlimit `RLIMIT_NOFILE` / `RLIMIT_NPROC`: Operation not permitted"), even to the
# host's own values.
#
#   bash scripts/image-run.sh -e HOST=127.0.0.1 -e PORT=3000     the zero-setup container (embedded PostgreSQL)
#   IMAGE=msa:1.0.0 bash scripts/image-run.sh -e SERVICES=rates,pincode -e DATABASE_URL=… -e TRANSPORTER=…
# SIGTERM / SIGINT to this script reach the image's PID 1 (tini) and stop it; the working container is removed and
# the script exits with the container's exit code (0 after a graceful stop).
# IMAGE_RUN_STATE=<file>: while the container runs, that file holds what `scripts/image-exec.sh <file> …` needs to
# run a command inside it (as `docker exec`), e.g. the image's HEALTHCHECK.
set -euo pipefail

IMAGE=${IMAGE:-merchant-shipping-api:dev}
envs=()
while [ $# -gt 0 ]; do
  case "$1" in
    -e) envs+=("$2"); shift 2 ;;
    *) echo "usage: $0 [-e NAME=value]…" >&2; exit 2 ;;
  esac
done

# the image's config: user, workdir, env, entrypoint + cmd
config=$(podman image inspect "$IMAGE" | node -e '
  const c = JSON.parse(require("fs").readFileSync(0, "utf8"))[0].Config;
  const q = (s) => `'"'"'${String(s).replace(/'"'"'/g, `'"'"'\\'"'"''"'"'`)}'"'"'`;
  console.log(`USER=${q(c.User || "root")}`);
  console.log(`WORKDIR=${q(c.WorkingDir || "/")}`);
  console.log(`ENVS=(${(c.Env || []).map(q).join(" ")})`);
  console.log(`ARGV=(${[...(c.Entrypoint || []), ...(c.Cmd || [])].map(q).join(" ")})`);
')
eval "$config"

ctr=$(buildah from --quiet "$IMAGE")
mnt=$(buildah mount "$ctr")
cleanup() { buildah umount "$ctr" >/dev/null 2>&1 || true; buildah rm "$ctr" >/dev/null 2>&1 || true; }
trap cleanup EXIT

printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' > "$mnt/etc/hosts"
cp /etc/resolv.conf "$mnt/etc/resolv.conf"
uid=$(chroot "$mnt" id -u "$USER")
gid=$(chroot "$mnt" id -g "$USER")
home=$(chroot "$mnt" sh -c "getent passwd $USER | cut -d: -f6")

# inside fresh mount + PID namespaces: the mounts a runtime makes, then the image's process as its user
unshare --mount --pid --fork --propagation private -- sh -c '
  set -e
  mnt=$1; shift
  mount -t proc proc "$mnt/proc"
  mount --rbind /dev "$mnt/dev"
  mount -t tmpfs tmpfs "$mnt/tmp"
  exec "$@"
' sh "$mnt" chroot --userspec="$uid:$gid" "$mnt" /usr/bin/env -i HOME="$home" "${ENVS[@]}" "${envs[@]}" \
  /bin/sh -c 'cd "$0" && exec "$@"' "$WORKDIR" "${ARGV[@]}" &
child=$!
if [ -n "${IMAGE_RUN_STATE:-}" ]; then
  # the namespace's PID 1 is unshare's child: wait until it exists
  for _ in $(seq 1 50); do pid1=$(pgrep -P "$child" | head -1 || true); [ -n "$pid1" ] && break; sleep 0.1; done
  {
    printf 'IMAGE=%q\nPID1=%q\nMNT=%q\nCUSER=%q\nCHOME=%q\nCWORKDIR=%q\n' "$IMAGE" "$pid1" "$mnt" "$uid:$gid" "$home" "$WORKDIR"
    all=("${ENVS[@]}" "${envs[@]}")
    printf 'CENV=('; [ ${#all[@]} -eq 0 ] || printf '%q ' "${all[@]}"; printf ')\n'
  } > "$IMAGE_RUN_STATE"
fi
# unshare does not forward signals: they go to the namespace's PID 1 (tini, unshare's child), as a runtime sends them
trap 'pkill -TERM -P "$child" 2>/dev/null || true' TERM INT
set +e
wait "$child"
code=$?
# a trapped signal interrupts `wait` (128 + signal) while the container is still stopping: wait for its own code
while [ "$code" -gt 128 ] && kill -0 "$child" 2>/dev/null; do
  wait "$child"
  code=$?
done
[ -n "${IMAGE_RUN_STATE:-}" ] && rm -f "$IMAGE_RUN_STATE"
exit "$code"
