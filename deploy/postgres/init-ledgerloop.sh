#!/bin/sh
# First start of the compose PostgreSQL (docker-entrypoint-initdb.d): the `ledgerloop` role and database that hold
# the workers' shared model transcripts (LEDGERLOOP_TRANSCRIPT_URL). The local cluster creates the same in
# lab/cluster/postgres.ts. The password comes from LEDGERLOOP_DB_PASSWORD and never appears on a command line.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -v pw="$LEDGERLOOP_DB_PASSWORD" <<'SQL'
CREATE ROLE ledgerloop LOGIN PASSWORD :'pw';
CREATE DATABASE ledgerloop OWNER ledgerloop;
SQL
