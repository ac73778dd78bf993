#!/usr/bin/env bash
# Builds the sandbox test image (default patchwright-sandbox-test:latest)
# OFFLINE: no registry can be reached on CI machines, so the image is a small
# root filesystem assembled from the host's own binaries (a shell, coreutils,
# grep, sed, findutils, git and the Go toolchain, with the shared libraries
# ldd names) and loaded with `docker import`.
#
# It is idempotent: the image carries a label with a hash of its inputs (this
# script, the Debian package versions, the Go version) and nothing is rebuilt
# while that hash matches.
#
# Usage: bash testdata/sandbox-image/build.sh [--force]
# Env:   PATCHWRIGHT_TEST_IMAGE (image name), GOROOT_FOR_IMAGE (default /usr/local/go)
set -euo pipefail
[ -z "${BUILD_TRACE:-}" ] || set -x

image=${PATCHWRIGHT_TEST_IMAGE:-patchwright-sandbox-test:latest}
goroot=${GOROOT_FOR_IMAGE:-/usr/local/go}
force=${1:-}
label=org.patchwright.inputs

packages=(bash dash coreutils grep sed findutils git util-linux ca-certificates libc6)
commands=(sh bash dash grep egrep sed find xargs git setsid)

die() { echo "build.sh: $*" >&2; exit 1; }

# A fresh Debian machine may lack git; install what is missing when we can.
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing Debian packages: ${missing[*]} (run as root or install them)"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ -x "$goroot/bin/go" ] || die "no Go toolchain at $goroot (set GOROOT_FOR_IMAGE)"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer"

hash=$(
	{
		cat "$0"
		echo "$image"
		dpkg-query -W -f '${Package} ${Version}\n' "${packages[@]}"
		"$goroot/bin/go" version
	} | sha256sum | cut -c1-32
)
current=$(docker image inspect -f "{{index .Config.Labels \"$label\"}}" "$image" 2>/dev/null || true)
if [ "$current" = "$hash" ] && [ "$force" != --force ]; then
	echo "$image is current ($hash)"
	exit 0
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

# Debian 12 has merged /usr: keep the same layout so that the paths ldd
# prints (/lib/..., /lib64/...) resolve inside the image as on the host.
mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{etc,tmp,workspace,home/agent,root,proc,sys,dev}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
chmod 1777 "$root/tmp"

# Every file to copy, collected first and copied in one tar pass: a fork per
# file is what made this slow. The paths go through /usr (merged /usr), and
# symlinks are copied both as links and as their targets.
executables=()
for c in "${commands[@]}"; do
	executables+=("$(command -v "$c")")
done
while read -r f; do
	[ -f "$f" ] && executables+=("$f")
done < <(dpkg -L coreutils | grep -E '^(/usr)?/s?bin/')
for f in /usr/lib/git-core/*; do
	[ -f "$f" ] && executables+=("$f")
done
# ldd fails on scripts and static binaries: they have no libraries to add.
libraries=$({ ldd "${executables[@]}" 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u)
list=$(
	printf '%s\n' "${executables[@]}" $libraries /etc/ssl/certs/ca-certificates.crt | sort -u |
		sed -E 's#^/(bin|sbin|lib|lib64)/#/usr/\1/#'
)
{
	echo "$list"
	# shellcheck disable=SC2086 # one path per line, no spaces in them
	readlink -f $list
} | sort -u | sed 's#^/##' >"$root.list"
[ -d /usr/share/git-core ] && echo usr/share/git-core >>"$root.list"
tar -C / -cf - --files-from "$root.list" | tar -C "$root" -xf -
rm -f "$root.list"

# The Go toolchain without its own test suite and docs (about 30 MB less).
mkdir -p "$root/usr/local"
tar -C "$(dirname "$goroot")" \
	--exclude="$(basename "$goroot")/test" --exclude="$(basename "$goroot")/doc" \
	--exclude="$(basename "$goroot")/api" --exclude="$(basename "$goroot")/misc" \
	-cf - "$(basename "$goroot")" | tar -C "$root/usr/local" -xf -
[ "$(basename "$goroot")" = go ] || mv "$root/usr/local/$(basename "$goroot")" "$root/usr/local/go"

cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
agent:x:1000:1000:agent:/home/agent:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
agent:x:1000:
nogroup:x:65534:
GROUP
# The workspace is owned by whoever cloned it on the host; git must not
# refuse it as "dubious ownership".
cat >"$root/etc/gitconfig" <<'GITCONFIG'
[safe]
	directory = *
[init]
	defaultBranch = main
GITCONFIG

# A warm Go build cache for the standard library, owned by the sandbox user:
# the sandbox mounts a fresh volume at $HOME/.cache, and Docker fills a new
# volume from the image, so no container compiles the standard library again
# (about 80 s of CPU each on this machine's kind). CGO_ENABLED=0 as in the
# image, where there is no C compiler; same GOROOT path, so the same keys.
cache=$(mktemp -d)
trap 'rm -rf "$root" "$root.tar" "$cache"' EXIT
mkdir -p "$cache/home/agent/.cache/go-build"
GOCACHE="$cache/home/agent/.cache/go-build" CGO_ENABLED=0 GOFLAGS= GOTOOLCHAIN=local \
	"$goroot/bin/go" build std

tar -C "$root" --numeric-owner --owner=0 --group=0 -cf "$root.tar" .
tar -C "$cache" --numeric-owner --owner=1000 --group=1000 -rf "$root.tar" home/agent/.cache
docker import \
		--change "LABEL $label=$hash" \
		--change 'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'ENV CGO_ENABLED=0' \
		--change 'ENV GOTOOLCHAIN=local' \
		--change 'USER 1000:1000' \
		--change 'WORKDIR /workspace' \
		--change 'CMD ["sleep", "infinity"]' \
		"$root.tar" "$image" >/dev/null
rm -f "$root.tar"
echo "built $image ($hash)"
