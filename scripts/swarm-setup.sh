#!/usr/bin/env bash
# Makes this machine a single-node Docker Swarm for `slipway server --backend swarm`: starts
# dockerd when nothing answers on its socket, makes the node a swarm manager, and starts an
# image registry on loopback that the node pulls slipway's images from. Safe to re-run: each
# piece is left alone when it is already in place. Needs root and the Debian packages
# docker.io and docker-registry (scripts/debian-packages.txt).
#
# Choices, all overridable from the environment:
#   SLIPWAY_DOCKERD_LOG      where dockerd writes (default /var/log/slipway-dockerd.log)
#   SLIPWAY_SWARM_ADDR_POOL  where Swarm takes its own networks from (default 172.30.0.0/16):
#                            away from the 10.x/16 networks slipway's local instances use
#   SLIPWAY_REGISTRY_ADDR    the registry's listen address (default 127.0.0.1:5000)
set -euo pipefail

log() { printf 'swarm-setup: %s\n' "$*" >&2; }

DOCKERD_LOG=${SLIPWAY_DOCKERD_LOG:-/var/log/slipway-dockerd.log}
ADDR_POOL=${SLIPWAY_SWARM_ADDR_POOL:-172.30.0.0/16}
REGISTRY_ADDR=${SLIPWAY_REGISTRY_ADDR:-127.0.0.1:5000}
REGISTRY_DIR=${SLIPWAY_REGISTRY_DIR:-/var/lib/slipway-registry}

# Where the swarm cannot be made, the exit status says so: setup.sh reports it, and fails under CI.
if [[ $(id -u) -ne 0 ]]; then
  log "not root: no Docker Swarm set-up (slipway server --backend swarm needs it)"
  exit 1
fi
if ! command -v dockerd >/dev/null || ! command -v docker-registry >/dev/null; then
  log "dockerd or docker-registry is missing (Debian packages docker.io, docker-registry): no swarm set-up"
  exit 1
fi

docker_answers() { docker info --format '{{.ServerVersion}}' >/dev/null 2>&1; }

start_dockerd() {
  if docker_answers; then return; fi
  local attempt
  for attempt in 1 2; do
    log "starting dockerd (log in $DOCKERD_LOG)"
    # --iptables=false: slipway's own nftables firewall stays the only one on this machine.
    # --bridge=none: no docker0; tasks use the network slipway creates.
    setsid dockerd --iptables=false --ip-masq=false --bridge=none </dev/null >>"$DOCKERD_LOG" 2>&1 &
    for _ in $(seq 1 120); do
      docker_answers && return
      sleep 0.5
      # On a busy machine dockerd can give up waiting for its containerd and exit: start it again.
      pgrep -x dockerd >/dev/null || break
    done
    pkill -x dockerd 2>/dev/null && sleep 2
    log "dockerd did not answer within 60 s (attempt $attempt of 2); see $DOCKERD_LOG"
  done
  exit 1
}

init_swarm() {
  local state
  state=$(docker info --format '{{.Swarm.LocalNodeState}}')
  if [[ $state == active ]]; then return; fi
  log "making this node a single-node swarm manager"
  docker swarm init --advertise-addr 127.0.0.1 --listen-addr 127.0.0.1:2377 \
    --default-addr-pool "$ADDR_POOL" --default-addr-pool-mask-length 24 >/dev/null
}

start_registry() {
  if curl -fsS -o /dev/null "http://$REGISTRY_ADDR/v2/" 2>/dev/null; then return; fi
  mkdir -p "$REGISTRY_DIR" /etc/slipway
  local config=/etc/slipway/registry.yml
  cat >"$config" <<EOF
version: 0.1
storage:
  filesystem:
    rootdirectory: $REGISTRY_DIR
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
EOF
  log "starting docker-registry on $REGISTRY_ADDR"
  setsid docker-registry serve "$config" </dev/null >>/var/log/slipway-registry.log 2>&1 &
  for _ in $(seq 1 40); do
    curl -fsS -o /dev/null "http://$REGISTRY_ADDR/v2/" 2>/dev/null && return
    sleep 0.25
  done
  log "the registry did not answer within 10 s; see /var/log/slipway-registry.log"
  exit 1
}

start_dockerd
init_swarm
start_registry
log "Docker Swarm ready: node is a manager, registry on $REGISTRY_ADDR"
