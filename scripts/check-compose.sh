#!/usr/bin/env bash
# CI check of the compose deployment (docker-compose.yml + Dockerfile); no Docker engine needed.
#
# 1. `docker compose config -q` when the compose plugin runs here (it needs no engine for that);
# 2. always, a structural check with Python's yaml module: the expected services, pinned images, the codec
#    endpoint wiring, worker replicas and keys, references that resolve, and every search attribute of
#    src/domain/search-attributes.ts created by the temporal-setup service;
# 3. the trust model (docs/operations.md, "Trust model: codec server and transport"): ports published on loopback
#    only, secrets required (`${VAR:?}`, no defaults for passwords, tokens or keys), separate frontend and backend
#    networks (the database on backend only), mTLS between the workers and Temporal with certificates from
#    scripts/gen-certs.sh, the strict codec on, a codec server with a token and without --insecure-dev, and no key
#    material tracked by git;
# 4. authorization at the frontend (docs/operations.md, "Who may call what at the Temporal frontend"): Temporal is
#    our server main built from lab/cluster/server by deploy/temporal/Dockerfile (the go.mod version is the
#    deployment's), fed the identity issuers, with the internal frontend and an internode CA of its own; the UI's
#    certificate is the viewer's; the workers and temporal-setup send tokens from secret files;
# 5. no leaks: .dockerignore keeps .env files, keys and certificates out of the image; each container mounts only
#    its own certificate and key, one file at a time; the capability signing key is a secret file, not a variable;
#    and scripts/gen-certs.sh, run into a scratch folder, leaves every key mode 0600.
# Without python3 + yaml only the search-attribute check runs (with grep), and the script says so.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
COMPOSE_FILE="docker-compose.yml"
SA_FILE="src/domain/search-attributes.ts"

[[ -f "$COMPOSE_FILE" ]] || { echo "check-compose: $COMPOSE_FILE is missing" >&2; exit 1; }

if docker compose version >/dev/null 2>&1; then
  secret="$(mktemp)"
  trap 'rm -f "$secret"' EXIT
  echo 'k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' >"$secret"
  LEDGERLOOP_CODEC_KEYS_PATH="$secret" POSTGRES_PASSWORD=check LEDGERLOOP_CODEC_TOKEN=check \
    LEDGERLOOP_DB_PASSWORD=check LEDGERLOOP_CAPABILITY_KEYS=check docker compose -f "$COMPOSE_FILE" config -q
  echo 'check-compose: docker compose config: ok'
else
  echo 'check-compose: `docker compose` is not available here; validating with Python instead'
fi

if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' >/dev/null 2>&1; then
  python3 - "$COMPOSE_FILE" "$SA_FILE" <<'PY'
import os
import re
import sys

import yaml

compose_path, sa_path = sys.argv[1], sys.argv[2]
errors = []


def check(cond, message):
    if not cond:
        errors.append(message)


with open(compose_path) as f:
    doc = yaml.safe_load(f)
services = doc.get("services") or {}

required = ["postgresql", "temporal-schema", "temporal", "temporal-setup", "temporal-ui", "codec-server", "wallet", "worker"]
for name in required:
    check(name in services, f"service {name} is missing")


def env_of(svc):
    env = svc.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return env


def as_text(value):
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value or "")


def defaults(text):
    """`${VAR:-default}` -> default, for paths."""
    return re.sub(r"\$\{[A-Za-z0-9_]+:?-([^}]*)\}", r"\1", str(text))


def volume_source(v):
    if isinstance(v, dict):
        return defaults(v.get("source", ""))
    return defaults(v).split(":", 1)[0]


def volume_target(v):
    if isinstance(v, dict):
        return str(v.get("target", ""))
    parts = defaults(v).split(":")
    return parts[1] if len(parts) > 1 else ""


# Images: every service names one; third-party images carry an explicit version tag.
for name, svc in services.items():
    image = svc.get("image")
    check(bool(image), f"{name}: no image")
    if not image:
        continue
    if "build" in svc:
        continue  # our own image, built from the Dockerfile
    repo, _, tag = image.rpartition(":") if ":" in image.split("/")[-1] else (image, "", "")
    check(tag != "" or "@sha256:" in image, f"{name}: image {image} is not pinned to a tag")
    check(tag != "latest", f"{name}: image {image} uses :latest")
    check(bool(re.search(r"\d", tag)) or "@sha256:" in image, f"{name}: image {image} has no version in its tag")

# References resolve.
defined_secrets = set((doc.get("secrets") or {}).keys())
defined_volumes = set((doc.get("volumes") or {}).keys())
for name, svc in services.items():
    deps = svc.get("depends_on") or []
    for dep in deps if isinstance(deps, list) else deps.keys():
        check(dep in services, f"{name}: depends_on unknown service {dep}")
    for s in svc.get("secrets") or []:
        check((s if isinstance(s, str) else s.get("source")) in defined_secrets, f"{name}: unknown secret {s}")
    for v in svc.get("volumes") or []:
        source = volume_source(v)
        if source.startswith("./.data/"):
            pass  # generated before `up` (codec keys, scripts/gen-certs.sh); git-ignored
        elif source.startswith((".", "/")):
            check(os.path.exists(source), f"{name}: bind-mounted path {source} does not exist")
        else:
            check(source in defined_volumes, f"{name}: unknown volume {source}")
    mode = svc.get("network_mode", "")
    if mode.startswith("service:"):
        check(mode.split(":", 1)[1] in services, f"{name}: network_mode names an unknown service")

# The Temporal server runs on PostgreSQL; the UI decodes through the codec server.
temporal_env = env_of(services.get("temporal", {}))
check(str(temporal_env.get("DB", "")).startswith("postgres"), "temporal: DB is not postgres")
ui_env = env_of(services.get("temporal-ui", {}))
check("TEMPORAL_CODEC_ENDPOINT" in ui_env, "temporal-ui: TEMPORAL_CODEC_ENDPOINT is not set")
check("8888" in str(ui_env.get("TEMPORAL_CODEC_ENDPOINT", "")), "temporal-ui: the codec endpoint is not the codec server's port")
check("codec-server" in as_text(services.get("codec-server", {}).get("command")), "codec-server: does not run `codec-server`")

# Workers: replicas, the frontend, the services, and the codec keys.
worker = services.get("worker", {})
check("replicas" in (worker.get("deploy") or {}), "worker: deploy.replicas is not set")
worker_env = env_of(worker)
for key in ["TEMPORAL_ADDRESS", "LEDGERLOOP_SERVICES"]:
    check(key in worker_env, f"worker: {key} is not set")
check(
    "LEDGERLOOP_CODEC_KEYS" in worker_env or "LEDGERLOOP_CODEC_KEYS_FILE" in worker_env,
    "worker: no codec keys (LEDGERLOOP_CODEC_KEYS or LEDGERLOOP_CODEC_KEYS_FILE)",
)
wallet_cmd = as_text(services.get("wallet", {}).get("entrypoint")) + " " + as_text(services.get("wallet", {}).get("command"))
check("services/wallet/main.ts" in wallet_cmd and "/data/wallet.db" in wallet_cmd, "wallet: unexpected command")

# Every project search attribute is created by temporal-setup, with its type.
with open(sa_path) as f:
    attrs = re.findall(r"\{\s*name:\s*'(\w+)',\s*type:\s*'(\w+)'\s*\}", f.read())
check(len(attrs) > 0, f"no search attributes found in {sa_path}")
setup_cmd = as_text(services.get("temporal-setup", {}).get("command"))
for name, typ in attrs:
    check(f"{name}={typ}" in setup_cmd, f"temporal-setup: search attribute {name}={typ} is not created")

# The Dockerfile builds from node:20-bookworm-slim with npm ci.
with open("Dockerfile") as f:
    dockerfile = f.read()
check(re.search(r"^FROM node:20-bookworm-slim", dockerfile, re.M) is not None, "Dockerfile: not FROM node:20-bookworm-slim")
check("npm ci" in dockerfile, "Dockerfile: no `npm ci`")

# ---- Trust model -------------------------------------------------------------------------------------------
with open(compose_path) as f:
    raw = f.read()


def server_v_early():
    import json as _json
    with open("deploy/deployment.json") as f:
        return _json.load(f)["versions"]["temporalServer"]


# Published ports: loopback only (`127.0.0.1:host:container`, or the long form with host_ip 127.0.0.1).
for name, svc in services.items():
    for port in svc.get("ports") or []:
        if isinstance(port, dict):
            check(port.get("host_ip") == "127.0.0.1", f"{name}: port {port} is not bound to 127.0.0.1")
        else:
            check(str(port).startswith("127.0.0.1:"), f"{name}: port {port} is published beyond loopback (use 127.0.0.1:PORT:PORT)")
    check(svc.get("network_mode") != "host", f"{name}: network_mode host publishes every port")

# Secrets: never a default, never a literal. `${VAR:-x}` / `${VAR-x}` / `${VAR}` are refused for secret-like names.
SECRETISH = re.compile(r"(PASSWORD|PASSWD|PWD|TOKEN|SECRET|API_KEY|CAPABILITY_KEY|CAPABILITY_KEYS|SIGNING_KEY|PRIVATE_KEY)$")
for m in re.finditer(r"\$\{([A-Za-z0-9_]+)(:?[-?+]?)([^}]*)\}", raw):
    var, op = m.group(1), m.group(2)
    if SECRETISH.search(var):
        check(op in (":?", "?"), f"${{{var}}} must be required (${{{var}:?message}}), not {m.group(0)}")
for required in ["POSTGRES_PASSWORD", "LEDGERLOOP_CODEC_TOKEN", "LEDGERLOOP_CAPABILITY_KEYS"]:
    check(re.search(r"\$\{" + required + r":\?", raw) is not None, f"{required} is not required with ${{{required}:?...}}")
def secret_names(svc):
    return {s if isinstance(s, str) else s.get("source") for s in svc.get("secrets") or []}


for name, svc in services.items():
    for key, value in env_of(svc).items():
        if SECRETISH.search(key) or key.endswith("_PASSWORD"):
            text = str(value or "")
            from_file = text.startswith("/run/secrets/") and text[len("/run/secrets/"):] in secret_names(svc)
            check((text.startswith("${") and ":?" in text) or from_file,
                  f"{name}: {key} must come from a required variable or a secret file it mounts, not {text!r}")

# Networks: frontend and backend; the database on backend only; the browser-facing services off backend.
nets = doc.get("networks") or {}
check("frontend" in nets and "backend" in nets, "networks: frontend and backend are not both defined")


def nets_of(svc):
    n = svc.get("networks")
    if n is None:
        return {"default"}
    return set(n if isinstance(n, list) else n.keys())


for name, svc in services.items():
    check("default" not in nets_of(svc), f"{name}: on the default network; name frontend and/or backend")
check(nets_of(services.get("postgresql", {})) == {"backend"}, "postgresql: must be on the backend network only")
for name in ["temporal-ui", "codec-server"]:
    check("backend" not in nets_of(services.get(name, {})), f"{name}: must not be on the backend network")
check("backend" not in nets_of(services.get("temporal-ui", {})) and "frontend" in nets_of(services.get("temporal", {})),
      "temporal: the UI reaches it on the frontend network")

# mTLS between the workers and Temporal.
t_env = env_of(services.get("temporal", {}))
check(str(t_env.get("TEMPORAL_TLS_REQUIRE_CLIENT_AUTH", "")).lower() == "true", "temporal: TEMPORAL_TLS_REQUIRE_CLIENT_AUTH is not true")
for key in ["TEMPORAL_TLS_FRONTEND_CERT", "TEMPORAL_TLS_FRONTEND_KEY", "TEMPORAL_TLS_CLIENT1_CA_CERT", "TEMPORAL_TLS_SERVER_CERT", "TEMPORAL_TLS_SERVER_KEY", "TEMPORAL_TLS_SERVER_CA_CERT"]:
    check(bool(t_env.get(key)), f"temporal: {key} is not set (mTLS)")
for name in ["worker", "temporal-setup"]:
    env = env_of(services.get(name, {}))
    for key in ["TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_SERVER_CA_CERT_PATH"]:
        check(bool(env.get(key)), f"{name}: {key} is not set (mTLS client certificate)")
ui_tls = env_of(services.get("temporal-ui", {}))
for key in ["TEMPORAL_TLS_CERT", "TEMPORAL_TLS_KEY", "TEMPORAL_TLS_CA"]:
    check(bool(ui_tls.get(key)), f"temporal-ui: {key} is not set (mTLS client certificate)")
check(os.path.exists("scripts/gen-certs.sh") and "openssl" in open("scripts/gen-certs.sh").read(), "scripts/gen-certs.sh (openssl) is missing")

# Payloads: the strict codec on every Ledgerloop process; a codec server with a token and neither dev nor encode.
check(str(worker_env.get("LEDGERLOOP_CODEC_STRICT", "")) == "1", "worker: LEDGERLOOP_CODEC_STRICT is not 1")
codec = services.get("codec-server", {})
codec_cmd = as_text(codec.get("command"))
check("--insecure-dev" not in codec_cmd, "codec-server: --insecure-dev in a deployment")
check("--enable-encode" not in codec_cmd and str(env_of(codec).get("LEDGERLOOP_CODEC_ENABLE_ENCODE", "0")) in ("0", ""), "codec-server: /encode is enabled")
check(bool(env_of(codec).get("LEDGERLOOP_CODEC_TOKEN") or env_of(codec).get("LEDGERLOOP_CODEC_TOKEN_FILE")), "codec-server: no LEDGERLOOP_CODEC_TOKEN")
check(not any(k.startswith("LEDGERLOOP_CAPABILITY") for k in env_of(codec)), "codec-server: holds a capability key it does not need")
check("LEDGERLOOP_CAPABILITY_SIGNING_KEY" not in env_of(services.get("wallet", {})), "wallet: holds the capability signing key (services get public keys only)")

# ---- Authorization at the frontend -------------------------------------------------------------------------
defined = doc.get("secrets") or {}


def secret_file_env(svc_name, key):
    """The secret a service's variable names as /run/secrets/<secret>, if it mounts it and the secret is a file."""
    svc = services.get(svc_name, {})
    value = str(env_of(svc).get(key, ""))
    if not value.startswith("/run/secrets/"):
        return None
    secret = value[len("/run/secrets/"):]
    if secret not in secret_names(svc) or "file" not in (defined.get(secret) or {}):
        return None
    return secret


temporal = services.get("temporal", {})
build = temporal.get("build") or {}
contexts = (build.get("additional_contexts") or {}) if isinstance(build, dict) else {}
check(not str(temporal.get("image", "")).startswith("temporalio/server"),
      "temporal: the stock temporalio/server image has no authorizer; build lab/cluster/server (deploy/temporal/Dockerfile)")
check(isinstance(build, dict) and str(build.get("context", "")).rstrip("/") == "./deploy/temporal"
      and str(contexts.get("server", "")).rstrip("/") == "./lab/cluster/server",
      "temporal: not built from deploy/temporal with the server context ./lab/cluster/server")
try:
    temporal_dockerfile = open("deploy/temporal/Dockerfile").read()
except OSError:
    temporal_dockerfile = ""
check("COPY --from=server go.mod go.sum" in temporal_dockerfile and "go build" in temporal_dockerfile,
      "deploy/temporal/Dockerfile: does not build the server from lab/cluster/server's go.mod and go.sum")
check(re.search(r"^COPY (?!--from=)(?!--chmod=\d+ entrypoint\.sh)", temporal_dockerfile, re.M) is None,
      "deploy/temporal/Dockerfile: copies something from its context besides entrypoint.sh (never a binary)")
try:
    gomod = open("lab/cluster/server/go.mod").read()
except OSError:
    gomod = ""
check(re.search(r"^\s*go\.temporal\.io/server v" + re.escape(server_v_early()) + r"\s*$", gomod, re.M) is not None,
      f"lab/cluster/server/go.mod does not require go.temporal.io/server v{server_v_early()} (deploy/deployment.json)")
check(secret_file_env("temporal", "LEDGERLOOP_IDENTITY_ISSUERS") is not None,
      "temporal: LEDGERLOOP_IDENTITY_ISSUERS is not a secret file it mounts (the claim mapper's public keys)")
check(str(t_env.get("USE_INTERNAL_FRONTEND", "")).lower() == "true",
      "temporal: USE_INTERNAL_FRONTEND is not true (the server's own services would be refused by the authorizer)")
check(t_env.get("TEMPORAL_TLS_SERVER_CA_CERT") and t_env.get("TEMPORAL_TLS_SERVER_CA_CERT") != t_env.get("TEMPORAL_TLS_CLIENT1_CA_CERT"),
      "temporal: the internode CA is the clients' CA (a client certificate would pass for the server's own services)")
m = re.search(r"^issue ca ui (\S+) ", open("scripts/gen-certs.sh").read(), re.M)
check(m is not None and str(t_env.get("LEDGERLOOP_FRONTEND_VIEWER_CN", "")) == m.group(1),
      "temporal: LEDGERLOOP_FRONTEND_VIEWER_CN is not the Web UI certificate's CN (scripts/gen-certs.sh)")
check(secret_file_env("worker", "LEDGERLOOP_TEMPORAL_TOKEN_FILE") is not None,
      "worker: LEDGERLOOP_TEMPORAL_TOKEN_FILE is not a secret file it mounts (its worker token)")
setup = services.get("temporal-setup", {})
check("temporal_admin_token" in secret_names(setup) and "/run/secrets/temporal_admin_token" in as_text(setup.get("command")),
      "temporal-setup: does not read its admin token from the temporal_admin_token secret")
check(str(ui_env.get("TEMPORAL_DISABLE_WRITE_ACTIONS", "")).lower() == "true",
      "temporal-ui: TEMPORAL_DISABLE_WRITE_ACTIONS is not true")

# ---- No leaks ----------------------------------------------------------------------------------------------
# .dockerignore keeps .env files, keys and certificates out of the image (the Dockerfile copies the whole context).
try:
    ignored = {line.strip() for line in open(".dockerignore") if line.strip() and not line.startswith("#")}
except OSError:
    ignored = set()
for pattern in [".env", "**/.env", "**/*.key", "**/*.pem", ".data"]:
    check(pattern in ignored, f".dockerignore: does not exclude {pattern}")

# Each container mounts only its own certificate and key, one file at a time, and no CA key.
OWN = {"temporal": {"frontend", "internode", "ca", "internode-ca"}, "worker": {"worker", "ca"},
       "temporal-ui": {"ui", "ca"}, "temporal-setup": {"admin", "ca"}}
certs_dir = "./.data/compose/certs"
for name, svc in services.items():
    held = []
    for v in svc.get("volumes") or []:
        src, target = volume_source(v).rstrip("/"), volume_target(v).rstrip("/")
        if src == certs_dir or target == "/certs":
            errors.append(f"{name}: mounts the whole certificate folder ({src}); mount its own files one by one")
        elif src.startswith(certs_dir + "/"):
            held.append(src[len(certs_dir) + 1:])
    for sname in secret_names(svc):
        f = defaults((defined.get(sname) or {}).get("file", ""))
        if f.startswith(certs_dir + "/"):
            held.append(f[len(certs_dir) + 1:])
    for f in held:
        stem, _, ext = f.rpartition(".")
        check(ext != "key" or not stem.endswith("ca"), f"{name}: holds a CA key ({f})")
        check(stem in OWN.get(name, set()), f"{name}: holds {f}, which is not its own certificate or key")
        check(ext != "key" or any(defaults((defined.get(s) or {}).get("file", "")).endswith("/" + f) for s in secret_names(svc)),
              f"{name}: mounts the key {f} as a volume; keys are secret files")

# The capability signing keys are secret files: no variable carries one.
for var in ["LEDGERLOOP_CAPABILITY_SIGNING_KEY", "LEDGERLOOP_RELAY_SIGNING_KEY"]:
    check(re.search(r"\$\{" + var + r"\b", raw) is None, f"{var} is interpolated from the environment; make it a secret file")
check(secret_file_env("worker", "LEDGERLOOP_CAPABILITY_SIGNING_KEY") is not None,
      "worker: LEDGERLOOP_CAPABILITY_SIGNING_KEY is not a secret file it mounts (/run/secrets/<secret>)")

# One source for both deployments (deploy/deployment.json, which the local cluster reads through
# lab/cluster/versions.ts): versions, ports, namespace, task queue, each process's environment, the dynamic config.
# Search attributes share src/domain/search-attributes.ts (checked above).
import json

with open("deploy/deployment.json") as f:
    dep = json.load(f)
server_v, ui_v = dep["versions"]["temporalServer"], dep["versions"]["temporalUi"]
for name in ("temporal", "temporal-schema", "temporal-setup"):
    image = str(services.get(name, {}).get("image", ""))
    check(image.endswith(":" + server_v), f"{name}: image {image} is not Temporal {server_v} (deploy/deployment.json)")
ui_image = str(services.get("temporal-ui", {}).get("image", ""))
check(ui_image.endswith(":" + ui_v), f"temporal-ui: image {ui_image} is not the Web UI {ui_v} (deploy/deployment.json)")
ports = dep["ports"]
publisher = {"frontend": "temporal", "ui": "temporal-ui", "codec": "codec-server"}
for key in dep["published"]:
    svc_name = publisher.get(key)
    check(svc_name is not None, f"deploy/deployment.json: published port {key} has no compose service")
    if svc_name:
        published = [str(p) for p in services.get(svc_name, {}).get("ports") or []]
        want = f"127.0.0.1:{ports[key]}:"
        check(any(p.startswith(want) for p in published), f"{svc_name}: does not publish {key} as {want}PORT (deploy/deployment.json)")
check(str(ports["codec"]) in as_text(services.get("codec-server", {}).get("command")), f"codec-server: does not listen on {ports['codec']} (deploy/deployment.json)")
check(str(ports["wallet"]) in wallet_cmd, f"wallet: does not listen on {ports['wallet']} (deploy/deployment.json)")
check(f"wallet:{ports['wallet']}" in str(worker_env.get("LEDGERLOOP_SERVICES", "")), f"worker: LEDGERLOOP_SERVICES does not reach wallet:{ports['wallet']}")
check(str(worker_env.get("TEMPORAL_ADDRESS", "")).endswith(f":{ports['frontend']}"), f"worker: TEMPORAL_ADDRESS is not the frontend port {ports['frontend']}")
check(str(worker_env.get("TEMPORAL_NAMESPACE", "")) == dep["namespace"], f"worker: TEMPORAL_NAMESPACE is not {dep['namespace']}")
check(str(worker_env.get("LEDGERLOOP_TASK_QUEUE", "")) == dep["taskQueue"], f"worker: LEDGERLOOP_TASK_QUEUE is not {dep['taskQueue']}")
for proc, svc_name in (("worker", "worker"), ("wallet", "wallet"), ("codecServer", "codec-server")):
    env = env_of(services.get(svc_name, {}))
    for entry in dep["env"][proc]:
        check(any(env.get(n) not in (None, "") for n in entry.split("|")), f"{svc_name}: {entry} is not set (deploy/deployment.json env.{proc})")
temporal_volumes = " ".join(str(v) for v in services.get("temporal", {}).get("volumes") or [])
check("./deploy/temporal/dynamicconfig:" in temporal_volumes, "temporal: does not mount deploy/temporal/dynamicconfig (the cluster's dynamic config too)")

if errors:
    for e in errors:
        print(f"check-compose: {e}", file=sys.stderr)
    sys.exit(1)
print(f"check-compose: {len(services)} services, {len(attrs)} search attributes: ok")
PY
else
  echo 'check-compose: warning: python3 with yaml is not available; checking the search attributes only' >&2
  missing=0
  while read -r pair; do
    if ! grep -q -- "$pair" "$COMPOSE_FILE"; then
      echo "check-compose: search attribute $pair is not created in $COMPOSE_FILE" >&2
      missing=1
    fi
  done < <(sed -nE "s/.*name: '([A-Za-z0-9]+)', type: '([A-Za-z]+)'.*/\1=\2/p" "$SA_FILE")
  [[ $missing -eq 0 ]] || exit 1
  echo 'check-compose: search attributes: ok'
fi

# Keys are mode 0600 as scripts/gen-certs.sh writes them: run it into a scratch folder and look.
if command -v openssl >/dev/null 2>&1; then
  scratch="$(mktemp -d)"
  bash scripts/gen-certs.sh "$scratch/certs" >/dev/null
  loose=""
  for key in "$scratch"/certs/*.key; do
    mode="$(stat -c '%a' "$key")"
    [[ "$mode" == 600 ]] || loose="$loose $(basename "$key")=$mode"
  done
  count="$(ls "$scratch"/certs/*.key | wc -l)"
  rm -rf "$scratch"
  if [[ -n "$loose" || "$count" -lt 7 ]]; then
    echo "check-compose: scripts/gen-certs.sh leaves keys readable by others or missing ($count keys;$loose); keys are mode 0600" >&2
    exit 1
  fi
  echo "check-compose: scripts/gen-certs.sh writes $count keys, each mode 0600: ok"
else
  echo 'check-compose: warning: openssl is not available; the key modes of scripts/gen-certs.sh are not checked' >&2
fi

# No key material tracked by git (gen-certs.sh writes to the git-ignored .data/compose/certs).
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  tracked="$(git -C "$ROOT" ls-files -- '*.key' '*.p12' '*.pfx' '.data/*' '.env' || true)"
  private="$(git -C "$ROOT" grep -lE '^-----BEGIN ([A-Z]+ )?PRIVATE KEY-----$' -- . || true)"
  if [[ -n "$tracked$private" ]]; then
    echo "check-compose: key material is tracked by git: $tracked $private" >&2
    exit 1
  fi
  echo 'check-compose: no key material tracked by git: ok'
fi
