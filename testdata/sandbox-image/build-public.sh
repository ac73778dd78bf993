#!/usr/bin/env bash
# Builds the second sandbox test image (default
# patchwright-sandbox-public-test:latest) OFFLINE, shaped like the public
# `golang` image rather than ours, so that tests show the sandbox works on
# the images repositories name with `image:` in .github/agent.yml:
#
#   - every file is root's: no user 1000 in /etc/passwd, no /home/agent,
#     nothing owned by the sandbox user, no warm caches;
#   - USER is root and HOME is not set (Docker gives root /root);
#   - Go at /usr/local/go, GOPATH=/go with /go/src and /go/bin mode 1777,
#     and the PATH golang's Dockerfile sets: /go/bin:/usr/local/go/bin
#     before the system directories.
#
# Debian bookworm with git, like golang's bookworm variant minus its C
# compiler. See lib.sh for how it is built; like build.sh it is idempotent
# (an inputs hash label) and rebuilt only when its inputs change.
#
# Usage: bash testdata/sandbox-image/build-public.sh [--force]
# Env:   PATCHWRIGHT_TEST_PUBLIC_IMAGE (image name), GOROOT_FOR_IMAGE,
#        DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR, DEBIAN_SUITE
set -euo pipefail
[ -z "${BUILD_TRACE:-}" ] || set -x
# shellcheck source=testdata/sandbox-image/lib.sh
. "$(dirname "$0")/lib.sh"

image=${PATCHWRIGHT_TEST_PUBLIC_IMAGE:-patchwright-sandbox-public-test:latest}
force=${1:-}

packages=(bash ca-certificates git procps)

need_host_tools
hash=$(inputs_hash "${packages[@]}")
if is_current "$image" "$hash" && [ "$force" != --force ]; then
	echo "$image is current ($hash)"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root

debian_rootfs "$root" "${packages[@]}"
add_go "$root"
git_system_config "$root"
mkdir -p "$root/go/src" "$root/go/bin"
chmod -R 1777 "$root/go"
if grep -q ':1000:' "$root/etc/passwd" || [ -e "$root/home/agent" ]; then
	die "the root filesystem has a user 1000 or /home/agent; this image must not"
fi

import_rootfs "$root" "$image" \
	"LABEL $label=$hash" \
	"ENV GOLANG_VERSION=$("$goroot/bin/go" env GOVERSION | sed 's/^go//')" \
	'ENV GOTOOLCHAIN=local' \
	'ENV GOPATH=/go' \
	'ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	'WORKDIR /go' \
	'CMD ["bash"]'
echo "built $image ($hash)"
