#!/usr/bin/env bash
# Installs what slipway needs and builds it. Safe to re-run: only missing pieces are installed.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

log() { printf 'setup: %s\n' "$*" >&2; }

install_debian_packages() {
  local wanted=() pkg
  while read -r pkg; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || wanted+=("$pkg")
  done < scripts/debian-packages.txt
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
  npm ci --no-audit --no-fund >&2
  touch "$stamp"
}

# The ACME tests run a real ACME server (Pebble) and its DNS test server, built from the Go module
# proxy into GOPATH/bin; the tests look for them there.
PEBBLE_VERSION=v2.7.0
install_pebble() {
  if ! command -v go >/dev/null; then
    log "Go is missing: the ACME tests will be skipped (install Go, then re-run setup)"
    return
  fi
  local bin
  bin="$(go env GOPATH)/bin"
  for tool in pebble pebble-challtestsrv; do
    if [[ -x $bin/$tool ]] && go version -m "$bin/$tool" 2>/dev/null | grep -qE "pebble/v2[[:space:]]+$PEBBLE_VERSION"; then continue; fi
    log "installing $tool $PEBBLE_VERSION"
    go install "github.com/letsencrypt/pebble/v2/cmd/$tool@$PEBBLE_VERSION" >&2
  done
}

build() {
  log "building"
  npx tsc -p tsconfig.json
  npx tsc -p tsconfig.console.json
}

install_debian_packages
install_npm_packages
install_pebble
build
# dockerd, a single-node swarm and a registry on loopback, for --backend swarm and its tests.
# Not fatal: without it, --backend swarm refuses to start and its tests are skipped, saying why.
bash scripts/swarm-setup.sh || log "the Docker Swarm set-up failed (see above): slipway server --backend swarm and its tests cannot run here"

