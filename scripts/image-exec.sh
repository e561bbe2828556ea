#!/usr/bin/env bash
# Runs a command inside a container started by scripts/image-run.sh with IMAGE_RUN_STATE=<file>, as `docker exec`
# does (issue 30): in the container's mount and PID namespaces (nsenter), under chroot into its root file system, as
# the image's USER, in its WORKDIR, with the container's environment (the image's ENV plus the run's -e values).
#
#   bash scripts/image-exec.sh <state-file> id -u            any command
#   bash scripts/image-exec.sh <state-file> --healthcheck    the image's own HEALTHCHECK command (exit 0 = healthy)
# Exits with the command's exit code.
set -euo pipefail

state=${1:?usage: $0 <state-file> (--healthcheck | command…)}
shift
# shellcheck source=/dev/null
. "$state"

if [ "${1:-}" = "--healthcheck" ]; then
  # Config.Healthcheck.Test of the image: ["CMD", argv…] or ["CMD-SHELL", "command"] (Docker's format)
  mapfile -d '' argv < <(podman image inspect "$IMAGE" | node -e '
    const i = JSON.parse(require("fs").readFileSync(0, "utf8"))[0];
    const h = i.Healthcheck || (i.Config || {}).Healthcheck;
    if (!h || !h.Test || h.Test[0] === "NONE") { console.error("the image has no HEALTHCHECK"); process.exit(2); }
    const argv = h.Test[0] === "CMD-SHELL" ? ["/bin/sh", "-c", h.Test[1]] : h.Test.slice(1);
    process.stdout.write(argv.map((a) => a + "\0").join(""));
  ')
  set -- "${argv[@]}"
fi
[ $# -gt 0 ] || { echo "usage: $0 <state-file> (--healthcheck | command…)" >&2; exit 2; }

exec nsenter --target "$PID1" --mount --pid -- chroot --userspec="$CUSER" "$MNT" /usr/bin/env -i HOME="$CHOME" \
  "${CENV[@]}" /bin/sh -c 'cd "$0" && exec "$@"' "$CWORKDIR" "$@"
