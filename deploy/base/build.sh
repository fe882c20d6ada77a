#!/usr/bin/env bash
# Builds the two base images ./Containerfile takes, without any image registry, from Debian
# bookworm's own packages (mmdebstrap) and the Node binary the project pins (node_modules/node):
#   localhost/petstore-debian-slim:bookworm  BASE_IMAGE, the runtime: Debian minbase and CA
#       certificates, without documentation, manual pages, translations or Perl beyond
#       perl-base; no Node and no npm: the image takes node from the build stage
#   localhost/petstore-node-build:VERSION  BUILD_IMAGE, the build stage: that, with the pinned
#       node (VERSION is its version, 24.21.0 say), the machine's npm and its extra certificate
#       authorities
# Usage: deploy/base/build.sh; it prints the --build-arg flags that name them to podman build.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=localhost/petstore-debian-slim:bookworm
node_bin=$(readlink -f node_modules/node/bin/node)
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[ -x "$node_bin" ] || { echo "run npm ci first: node_modules/node/bin/node is missing" >&2; exit 1; }
node_version=$("$node_bin" --version)
build=localhost/petstore-node-build:${node_version#v}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! podman image exists "$base"; then
  # usrmerge has done its work once the system is installed; it alone brought in Perl beyond
  # perl-base (which dpkg and debconf keep).
  cat > "$work/slim.sh" <<'HOOK'
#!/bin/sh
set -e
chroot "$1" sh -c 'apt-get purge --quiet --yes usrmerge perl $(dpkg-query -W -f "\${Package} " "libperl5*" "perl-modules-*") >/dev/null'
HOOK
  chmod +x "$work/slim.sh"
  # As Debian's own slim images do: what no one reads in a container stays out, but the licences.
  mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --customize-hook="$work/slim.sh" \
    bookworm "$work/rootfs.tar"
  podman import --quiet "$work/rootfs.tar" "$base" >/dev/null
fi
mkdir -p "$work/context"
cp "$node_bin" "$work/context/node"
cp -r "$npm_dir" "$work/context/npm"
# The machine's own extra certificate authorities (a TLS-inspecting proxy's, say), so that
# npm in the build reaches the registry the way the machine does.
mkdir -p "$work/context/ca"
cp /usr/local/share/ca-certificates/*.crt "$work/context/ca/" 2>/dev/null || true
cat > "$work/context/Containerfile" <<CONTAINERFILE
FROM $base
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca /usr/local/share/ca-certificates
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN update-ca-certificates >/dev/null 2>&1 \\
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
CMD ["node"]
CONTAINERFILE
podman build --quiet --network=host -t "$build" "$work/context" >/dev/null
echo "--build-arg BASE_IMAGE=$base --build-arg BUILD_IMAGE=$build --build-arg NODE_VERSION=${node_version#v}"
