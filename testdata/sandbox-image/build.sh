#!/usr/bin/env bash
# Builds the sandbox test image (default patchwright-sandbox-test:latest)
# OFFLINE, shaped like our shipped image (deploy/sandbox/Dockerfile): a
# Debian root filesystem from the Debian archive with the toolchains every
# detected check needs (Go, Python with pytest and venv, Node.js with npm,
# Rust with cargo, Java with Maven, Gradle and a JDK, Ruby with bundler,
# rake, RSpec and minitest, PHP with Composer and PHPUnit, C and C++ with
# g++, make, CMake, Meson and Ninja), the sandbox user 1000 with
# HOME /home/agent, and a warm Go standard-library cache owned by it.
# No registry is reached; see lib.sh.
#
# Maven reads /etc/maven/settings.xml, which makes Debian's
# /usr/share/maven-repo its local repository, offline: the plugins and
# libraries Debian packages (surefire 2.22.3 with JUnit 4.13.2, compiler
# 3.10.1, resources 3.3.0), so `mvn test` runs with no network when a POM
# pins those versions. That repository is read-only: `mvn install` fails.
# MAVEN_OPTS gives Maven's own JVM the quick JIT tier and the serial
# collector, as deploy/sandbox/Dockerfile does (about 40% less CPU a run).
#
# What the issue 27 toolchains add (installed sizes, measured on this
# image's dpkg status): Ruby 31 MB, PHP 45 MB, C/C++ 102 MB (g++ mostly),
# Gradle 90 MB; the image grew from 1.73 GB to 2.0 GB. Gradle's first run
# in a container takes about 30 s (its daemon starting).
#
# It is idempotent: the image carries a label with a hash of its inputs and
# nothing is rebuilt while that hash matches.
#
# Usage: bash testdata/sandbox-image/build.sh [--force]
# Env:   PATCHWRIGHT_TEST_IMAGE (image name), GOROOT_FOR_IMAGE (default
#        /usr/local/go), DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR, DEBIAN_SUITE
set -euo pipefail
[ -z "${BUILD_TRACE:-}" ] || set -x
# shellcheck source=testdata/sandbox-image/lib.sh
. "$(dirname "$0")/lib.sh"

image=${PATCHWRIGHT_TEST_IMAGE:-patchwright-sandbox-test:latest}
force=${1:-}

packages=(
	bash ca-certificates git procps
	python3 python-is-python3 python3-pytest python3-venv
	nodejs npm
	cargo
	default-jdk-headless maven junit4 libsurefire-java
	libmaven-compiler-plugin-java libmaven-resources-plugin-java
	ruby ruby-rspec ruby-minitest bundler rake
	php-cli php-xml php-mbstring phpunit composer
	g++ make cmake meson ninja-build
	gradle
)

need_host_tools
hash=$(inputs_hash "${packages[@]}")
if is_current "$image" "$hash" && [ "$force" != --force ]; then
	echo "$image is current ($hash)"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root

# A warm Go build cache for the part of the standard library the tests' Go
# code imports, built while mmdebstrap downloads: the sandbox mounts a
# fresh volume at $HOME/.cache and Docker fills a new volume from the
# image, so no container compiles it again (about 80 s of CPU each for all
# of std). Not all of std: every sandbox with a read-only cache copies the
# whole cache in, and all of std is 170 MB where this is 67 MB (2026-12-03);
# a package outside the list is compiled where it is used. CGO_ENABLED=0 as
# in the image's environment; same GOROOT path, so the same keys.
warm_std=(testing testing/internal/testdeps fmt strings strconv reflect
	unicode/utf8 time sync sync/atomic os os/exec os/signal net container/list
	bufio encoding/json regexp path/filepath errors bytes io io/fs sort slices
	maps math math/rand context flag crypto/sha256 encoding/hex encoding/xml
	runtime log)
mkdir -p "$work/cache/go-build"
GOCACHE="$work/cache/go-build" CGO_ENABLED=0 GOFLAGS= GOTOOLCHAIN=local \
	"$goroot/bin/go" build "${warm_std[@]}" &
gobuild=$!

debian_rootfs "$root" "${packages[@]}"
add_go "$root"
git_system_config "$root"
wait "$gobuild" || die "go build std failed"

echo 'agent:x:1000:1000:agent:/home/agent:/bin/bash' >>"$root/etc/passwd"
echo 'agent:x:1000:' >>"$root/etc/group"
mkdir -p "$root/workspace" "$root/home/agent"
mv "$work/cache" "$root/home/agent/.cache"
chown -R 1000:1000 "$root/home/agent"

cat >"$root/etc/maven/settings.xml" <<'SETTINGS'
<?xml version="1.0" encoding="UTF-8"?>
<!-- Debian's packaged plugins and libraries are the local repository,
     read-only, and Maven never reaches a network: `mvn test` and
     `mvn -o test` both work for a POM that pins the versions Debian has. -->
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <localRepository>/usr/share/maven-repo</localRepository>
  <offline>true</offline>
</settings>
SETTINGS

import_rootfs "$root" "$image" \
	"LABEL $label=$hash" \
	'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	'ENV CGO_ENABLED=0' \
	'ENV GOTOOLCHAIN=local' \
	'ENV LANG=C.UTF-8' \
	'ENV MAVEN_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"' \
	'USER 1000:1000' \
	'WORKDIR /workspace' \
	'CMD ["sleep", "infinity"]'
echo "built $image ($hash)"
