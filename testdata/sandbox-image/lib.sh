# Shared by build.sh and build-public.sh (sourced, not run): the steps both
# offline test images take. Each image is a Debian root filesystem made by
# mmdebstrap from the Debian archive (the one network source CI machines
# reach besides the Go module proxy), plus the host's Go toolchain, loaded
# with `docker import`: no registry is needed.

suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
goroot=${GOROOT_FOR_IMAGE:-/usr/local/go}
label=org.patchwright.inputs

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

# need_host_tools installs mmdebstrap when it is missing (a fresh Debian CI
# machine has apt) and checks the rest of what a build needs.
need_host_tools() {
	[ "$(id -u)" = 0 ] || die "must run as root: mmdebstrap builds the root filesystem with real owners"
	if ! command -v mmdebstrap >/dev/null 2>&1; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
	fi
	[ -x "$goroot/bin/go" ] || die "no Go toolchain at $goroot (set GOROOT_FOR_IMAGE)"
	docker info >/dev/null 2>&1 || die "the Docker engine does not answer"
}

# inputs_hash PACKAGES... prints the hash of everything the image is made
# from: the scripts, the Debian suite and mirrors,
# the package list and the Go version. The archive's own updates are not
# in it (reading them costs an apt update): --force picks them up.
inputs_hash() {
	{
		cat "$0" "${BASH_SOURCE[0]}"
		printf '%s\n' "$@" "$suite" "$mirror" "$security_mirror"
		"$goroot/bin/go" version
	} | sha256sum | cut -c1-32
}

# is_current IMAGE HASH succeeds when IMAGE exists with that inputs label.
is_current() {
	[ "$(docker image inspect -f "{{index .Config.Labels \"$label\"}}" "$1" 2>/dev/null || true)" = "$2" ]
}

# debian_rootfs DIR PACKAGE... makes DIR a Debian root filesystem: the
# Essential packages and the ones named, with their dependencies but not
# their recommendations, without documentation, man pages and translations.
# Maintainer scripts run, so alternatives (java, mvn) and certificates are
# set up as on a real system.
debian_rootfs() {
	local dir=$1
	shift
	local include
	include=$(IFS=,; echo "$*")
	# openjdk's postinst links its man page into /usr/share/man/man1 and
	# fails when the directory is missing, as it is with man pages excluded.
	mmdebstrap --variant=essential --quiet \
		--aptopt='Acquire::Retries "3"' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--setup-hook='mkdir -p "$1/usr/share/man/man1"' \
		--include="$include" \
		"$suite" "$dir" \
		"deb $mirror $suite main" \
		"deb $mirror $suite-updates main" \
		"deb $security_mirror $suite-security main"
}

# add_go DIR copies the host's Go toolchain to DIR/usr/local/go, without
# its own test suite and docs (about 30 MB less).
add_go() {
	local base
	base=$(basename "$goroot")
	mkdir -p "$1/usr/local"
	tar -C "$(dirname "$goroot")" \
		--exclude="$base/test" --exclude="$base/doc" --exclude="$base/api" --exclude="$base/misc" \
		-cf - "$base" | tar -C "$1/usr/local" -xf -
	[ "$base" = go ] || mv "$1/usr/local/$base" "$1/usr/local/go"
}

# git_system_config DIR: the workspace is owned by whoever cloned it on the
# host, so git must not refuse it as "dubious ownership".
git_system_config() {
	cat >"$1/etc/gitconfig" <<'GITCONFIG'
[safe]
	directory = *
[init]
	defaultBranch = main
GITCONFIG
}

# import_rootfs DIR IMAGE CHANGE... loads DIR as IMAGE, keeping the owners
# the files have in DIR, with the Dockerfile instructions given. The image
# IMAGE named before is removed unless something still uses it: each one is
# well over a gigabyte.
import_rootfs() {
	local dir=$1 image=$2
	shift 2
	local changes=() old new
	for c in "$@"; do changes+=(--change "$c"); done
	old=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)
	# /proc, /sys and /dev are mount points in a container; mmdebstrap
	# leaves device nodes there that docker import does not need.
	new=$(tar -C "$dir" --numeric-owner --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* -cf - . |
		docker import "${changes[@]}" - "$image")
	if [ -n "$old" ] && [ "$old" != "$new" ]; then
		docker rmi "$old" >/dev/null 2>&1 || true
	fi
}
