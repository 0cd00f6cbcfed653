#!/bin/sh
# Starts the server from its embedded configuration template, filled from the environment (docker-compose.yml).
# With BIND_ON_IP 0.0.0.0 the services still need an address the others can reach: this container's own.
set -eu
self="$(getent hosts "$(hostname)" | awk '{ print $1; exit }')"
: "${BIND_ON_IP:=$self}"
if [ "$BIND_ON_IP" = 0.0.0.0 ] || [ "$BIND_ON_IP" = '::0' ]; then
  : "${TEMPORAL_BROADCAST_ADDRESS:=$self}"
  export TEMPORAL_BROADCAST_ADDRESS
fi
export BIND_ON_IP
exec temporal-server start
