#!/usr/bin/env bash
# Builds a Node 24 base image without any image registry: Debian bookworm from Debian's own
# packages (mmdebstrap), plus the Node binary the project pins (node_modules/node) and the
# machine's npm and extra certificate authorities. Usage: deploy/base/build.sh [TAG]   (default localhost/petstore-node-base:24)
# Then: podman build --build-arg BASE_IMAGE=localhost/petstore-node-base:24 -t petstore .
set -euo pipefail
cd "$(dirname "$0")/../.."
tag=${1:-localhost/petstore-node-base:24}
node_bin=$(readlink -f node_modules/node/bin/node)
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[ -x "$node_bin" ] || { echo "run npm ci first: node_modules/node/bin/node is missing" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! podman image exists localhost/petstore-debian:bookworm; then
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$work/rootfs.tar"
  podman import --quiet "$work/rootfs.tar" localhost/petstore-debian:bookworm >/dev/null
fi
mkdir -p "$work/context"
cp "$node_bin" "$work/context/node"
cp -r "$npm_dir" "$work/context/npm"
# The machine's own extra certificate authorities (a TLS-inspecting proxy's, say), so that
# npm in the build reaches the registry the way the machine does.
mkdir -p "$work/context/ca"
cp /usr/local/share/ca-certificates/*.crt "$work/context/ca/" 2>/dev/null || true
cat > "$work/context/Containerfile" <<'CONTAINERFILE'
FROM localhost/petstore-debian:bookworm
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca /usr/local/share/ca-certificates
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN update-ca-certificates >/dev/null 2>&1 \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
CMD ["node"]
CONTAINERFILE
podman build --quiet --network=host -t "$tag" "$work/context" >/dev/null
echo "$tag"
