#!/usr/bin/env bash
# Makes this machine a single-node Docker Swarm for `slipway server --backend swarm`: starts
# dockerd when nothing answers on its socket, makes the node a swarm manager, and starts an
# image registry on loopback that the node pulls slipway's images from, over TLS and with a
# password. Safe to re-run: each piece is left alone when it is already in place, and a registry
# that runs otherwise (an earlier version's, plain HTTP) is reconfigured and restarted. Needs root and the Debian packages
# docker.io and docker-registry (scripts/debian-packages-swarm.txt).
#
# Choices, all overridable from the environment:
#   SLIPWAY_DOCKERD_LOG      where dockerd writes (default /var/log/slipway-dockerd.log)
#   SLIPWAY_SWARM_ADDR_POOL  where Swarm takes its own networks from (default 172.30.0.0/16):
#                            away from the 10.x/16 networks slipway's local instances use
#   SLIPWAY_REGISTRY_ADDR    the registry's listen address (default 127.0.0.1:5000)
#   SLIPWAY_REGISTRY_USER    the registry's user (default slipway)
#   SLIPWAY_REGISTRY_PASSWORD_FILE  where its password is kept (default /etc/slipway/registry-password)
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

REGISTRY_HOST=${REGISTRY_ADDR%:*}
REGISTRY_PIDFILE=/run/slipway-registry.pid
REGISTRY_CONFIG=/etc/slipway/registry.yml
# The registry's TLS: a CA of this machine's own (kept in /etc/slipway/registry-ca, its key
# root-only), a server certificate it signs for the listen address, and the CA installed where the
# Docker engine looks for the registry's (/etc/docker/certs.d/<host:port>/ca.crt).
REGISTRY_CA_DIR=/etc/slipway/registry-ca
REGISTRY_TLS_DIR=/etc/slipway/registry-tls
DOCKER_CA=/etc/docker/certs.d/$REGISTRY_ADDR/ca.crt
# Its authentication: htpasswd with bcrypt, one user, the password in a root-only file that
# `slipway server` reads (--registry-user, --registry-password-file; docs/swarm.md).
REGISTRY_USER=${SLIPWAY_REGISTRY_USER:-slipway}
REGISTRY_PASSWORD_FILE=${SLIPWAY_REGISTRY_PASSWORD_FILE:-/etc/slipway/registry-password}
REGISTRY_HTPASSWD=/etc/slipway/registry.htpasswd

ensure_registry_ca() {
  install -d -m 0700 "$REGISTRY_CA_DIR"
  if [[ -s $REGISTRY_CA_DIR/ca.key && -s $REGISTRY_CA_DIR/ca.crt ]]; then return; fi
  log "making the registry's CA in $REGISTRY_CA_DIR"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj '/CN=slipway swarm registry CA' \
    -addext 'basicConstraints=critical,CA:TRUE,pathlen:0' -addext 'keyUsage=critical,keyCertSign,cRLSign' \
    -keyout "$REGISTRY_CA_DIR/ca.key" -out "$REGISTRY_CA_DIR/ca.crt" 2>/dev/null
  chmod 0600 "$REGISTRY_CA_DIR/ca.key"
  chmod 0644 "$REGISTRY_CA_DIR/ca.crt"
}

# A server certificate for the listen address, made again when it is missing, not of this CA,
# not for this address, or due within 30 days.
ensure_registry_certificate() {
  local cert=$REGISTRY_TLS_DIR/cert.pem key=$REGISTRY_TLS_DIR/key.pem check san ext
  install -d -m 0700 "$REGISTRY_TLS_DIR"
  if [[ $REGISTRY_HOST =~ ^[0-9.]+$ ]]; then check=(-checkip "$REGISTRY_HOST"); else check=(-checkhost "$REGISTRY_HOST"); fi
  if [[ -s $cert && -s $key ]] &&
    openssl verify -CAfile "$REGISTRY_CA_DIR/ca.crt" "$cert" >/dev/null 2>&1 &&
    openssl x509 -in "$cert" -noout "${check[@]}" 2>/dev/null | grep -q ' does match' &&
    openssl x509 -in "$cert" -noout -checkend $((30 * 86400)) >/dev/null; then
    return
  fi
  log "making the registry's certificate for $REGISTRY_HOST"
  san="DNS:localhost,IP:127.0.0.1"
  if [[ $REGISTRY_HOST =~ ^[0-9.]+$ ]]; then san="$san,IP:$REGISTRY_HOST"; else san="$san,DNS:$REGISTRY_HOST"; fi
  ext=$(mktemp)
  printf 'subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' \
    "$san" >"$ext"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$REGISTRY_HOST" \
    -keyout "$key" -out "$REGISTRY_TLS_DIR/cert.csr" 2>/dev/null
  openssl x509 -req -in "$REGISTRY_TLS_DIR/cert.csr" -CA "$REGISTRY_CA_DIR/ca.crt" -CAkey "$REGISTRY_CA_DIR/ca.key" \
    -CAcreateserial -days 825 -extfile "$ext" -out "$cert" 2>/dev/null
  rm -f "$ext" "$REGISTRY_TLS_DIR/cert.csr"
  chmod 0600 "$key"
}

# The password (random, kept when present) and its bcrypt line in the htpasswd file, written
# again when it does not hold this user and password. bcrypt comes from perl's crypt(), which is
# libxcrypt's on Debian: nothing to install beyond perl-base.
ensure_registry_password() {
  local salt line
  if [[ ! -s $REGISTRY_PASSWORD_FILE ]]; then
    log "writing the registry's password to $REGISTRY_PASSWORD_FILE (root only)"
    (umask 077 && openssl rand -hex 24 >"$REGISTRY_PASSWORD_FILE")
  fi
  chown root:root "$REGISTRY_PASSWORD_FILE"
  chmod 0600 "$REGISTRY_PASSWORD_FILE"
  if [[ -s $REGISTRY_HTPASSWD ]] && perl -e '
      open my $f, "<", $ARGV[0] or exit 1; my $pw = <$f>; chomp $pw;
      open my $h, "<", $ARGV[1] or exit 1; my $line = <$h>; chomp $line;
      my ($user, $hash) = split /:/, $line, 2;
      exit(($user eq $ARGV[2] && crypt($pw, $hash) eq $hash) ? 0 : 1);' \
    "$REGISTRY_PASSWORD_FILE" "$REGISTRY_HTPASSWD" "$REGISTRY_USER"; then
    return
  fi
  # 21 random characters of bcrypt's alphabet, and a last one whose unused bits are zero.
  salt=$(openssl rand -base64 48 | tr -dc 'A-Za-z0-9')
  salt="${salt:0:21}O"
  line=$(perl -e 'open my $f, "<", $ARGV[0] or die; my $pw = <$f>; chomp $pw; print crypt($pw, "\$2b\$10\$$ARGV[1]")' \
    "$REGISTRY_PASSWORD_FILE" "$salt")
  if [[ $line != '$2b$10$'* || ${#line} -ne 60 ]]; then
    log "this system's crypt() makes no bcrypt hash: cannot write $REGISTRY_HTPASSWD"
    exit 1
  fi
  (umask 077 && printf '%s:%s\n' "$REGISTRY_USER" "$line" >"$REGISTRY_HTPASSWD")
}

registry_config() {
  cat <<EOF
version: 0.1
storage:
  filesystem:
    rootdirectory: $REGISTRY_DIR
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
  tls:
    certificate: $REGISTRY_TLS_DIR/cert.pem
    key: $REGISTRY_TLS_DIR/key.pem
auth:
  htpasswd:
    realm: slipway-registry
    path: $REGISTRY_HTPASSWD
EOF
}

# Serving as configured: over TLS from the CA, anonymous requests refused, the credential taken.
registry_serves() {
  local anonymous
  anonymous=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$REGISTRY_CA_DIR/ca.crt" "https://$REGISTRY_ADDR/v2/" 2>/dev/null) ||
    return 1
  [[ $anonymous == 401 ]] || return 1
  curl -fsS -o /dev/null --cacert "$REGISTRY_CA_DIR/ca.crt" -K - "https://$REGISTRY_ADDR/v2/" 2>/dev/null <<EOF
user = "$REGISTRY_USER:$(cat "$REGISTRY_PASSWORD_FILE")"
EOF
}

# The registry this script started (its pid file), or one an earlier version of it started
# without a pid file (found by its exact command line).
stop_registry() {
  local pid=""
  [[ -s $REGISTRY_PIDFILE ]] && pid=$(cat "$REGISTRY_PIDFILE")
  if [[ -z $pid ]] || ! kill -0 "$pid" 2>/dev/null; then pid=$(pgrep -xf "docker-registry serve $REGISTRY_CONFIG" || true); fi
  rm -f "$REGISTRY_PIDFILE"
  [[ -z $pid ]] && return
  log "stopping the registry (pid $pid) to start it with its current configuration"
  # shellcheck disable=SC2086 # one pid, or several when an earlier run started more than one
  kill $pid 2>/dev/null || true
  for _ in $(seq 1 40); do
    # shellcheck disable=SC2086
    kill -0 $pid 2>/dev/null || return 0
    sleep 0.25
  done
}

start_registry() {
  local config
  mkdir -p "$REGISTRY_DIR" /etc/slipway
  ensure_registry_ca
  ensure_registry_certificate
  ensure_registry_password
  install -D -m 0644 "$REGISTRY_CA_DIR/ca.crt" "$DOCKER_CA"
  config=$(registry_config)
  if [[ -f $REGISTRY_CONFIG && $(cat "$REGISTRY_CONFIG") == "$config" ]] && registry_serves; then return; fi
  printf '%s\n' "$config" >"$REGISTRY_CONFIG"
  stop_registry
  log "starting docker-registry on https://$REGISTRY_ADDR"
  setsid docker-registry serve "$REGISTRY_CONFIG" </dev/null >>/var/log/slipway-registry.log 2>&1 &
  echo $! >"$REGISTRY_PIDFILE"
  for _ in $(seq 1 40); do
    registry_serves && return
    sleep 0.25
  done
  log "the registry did not answer over TLS with authentication within 10 s; see /var/log/slipway-registry.log"
  exit 1
}

start_dockerd
init_swarm
start_registry
log "Docker Swarm ready: node is a manager, registry on https://$REGISTRY_ADDR (user $REGISTRY_USER, password in $REGISTRY_PASSWORD_FILE)"
