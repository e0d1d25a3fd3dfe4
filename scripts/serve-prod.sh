#!/usr/bin/env bash
# The production command (`make serve-prod`): Debian's nginx on BIND (default
# 127.0.0.1:8000) buffering every request body and response, gunicorn's
# workers on a loopback port behind it, and one job worker, supervised and
# stopped together by scripts/with-worker.sh.
#   scripts/serve-prod.sh <python>
# nginx reads a whole upload (to its temporary files) before gunicorn sees a
# byte, so slow clients never hold a sync worker (docs/production-topology.md).
# PLAYGROUND_PROXY=none (or nginx missing and not installable) serves with
# gunicorn alone on BIND: then put a buffering proxy of your own in front.
# Settings: BIND, APP_BIND (gunicorn's address behind nginx; default a free
# loopback port), RUN_DIR (nginx's configuration and temporary files; default
# a new folder under /tmp), and everything gunicorn.conf.py and the app read.
set -euo pipefail
cd "$(dirname "$0")/.."
py="$1"
bind="${BIND:-127.0.0.1:8000}"
# Never in production with the development SECRET_KEY (it signs the session cookie that
# holds the cancel tokens): stop here and say how to set one (webapp.config.secret_key_problem).
if ! problem="$("$py" -c 'from webapp.config import secret_key_problem as p; print(p() or "")')"; then
  echo "serve-prod: could not read the settings with $py" >&2; exit 1
fi
if [ -n "$problem" ]; then
  echo "serve-prod: refusing to start: $problem" >&2
  exit 2
fi
gunicorn=("$py" -m gunicorn -c gunicorn.conf.py wsgi:app)

nginx_bin=""
if [ "${PLAYGROUND_PROXY:-nginx}" != none ]; then
  nginx_bin="$(bash scripts/ensure-nginx.sh 2>/dev/null)" || nginx_bin=""
  if [ -z "$nginx_bin" ]; then
    echo "serve-prod: nginx is not available: serving with gunicorn alone on $bind;" \
         "slow uploads can hold its workers (docs/production-topology.md)" >&2
  fi
fi
if [ -z "$nginx_bin" ]; then
  exec bash scripts/with-worker.sh "$py" "${gunicorn[@]}"
fi

app_bind="${APP_BIND:-127.0.0.1:$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
made=""  # folders made here for this run: with-worker.sh removes them when everything stopped
if [ -n "${RUN_DIR:-}" ]; then run_dir="$RUN_DIR"; else run_dir="$(mktemp -d /tmp/bpe-playground-nginx.XXXXXX)"; made="$run_dir"; fi
mkdir -p "$run_dir"
chmod 755 "$run_dir"
# The largest body the app ever takes (a corpus upload plus its form), so nginx's
# own 413 is only for bodies the app would refuse anyway; the app checks the exact limits.
max_body="$("$py" -c 'from webapp.config import DEFAULT_CONFIG as d, env_overrides as e
c = {**d, **e()}
print(max(int(c["LIMIT_CORPUS_BYTES"]), int(c["MAX_CONTENT_LENGTH"])) + 4 * 1024 * 1024)')"
# nginx's temporary files (request bodies over 1 MiB wait there): in RUN_DIR, unless
# nginx's workers (nobody, when started as root) cannot reach it, then in a folder of
# their own under /tmp.
temp_dir="$run_dir/temp"
user_line=""
if [ "$(id -u)" = 0 ]; then
  user_line="user nobody nogroup;"
  mkdir -p "$temp_dir" && chown nobody:nogroup "$temp_dir"
  if ! runuser -u nobody -- test -w "$temp_dir" 2>/dev/null; then
    temp_dir="$(mktemp -d /tmp/bpe-playground-nginx-temp.XXXXXX)"
    chown nobody:nogroup "$temp_dir"
    made="$made $temp_dir"
  fi
fi
mkdir -p "$temp_dir"
cat > "$run_dir/nginx.conf" <<CONF
# Written by scripts/serve-prod.sh; see docs/production-topology.md.
$user_line
worker_processes 1;
pid $run_dir/nginx.pid;
error_log stderr error;
events { worker_connections 1024; }
http {
  access_log off;  # gunicorn logs every request
  server_tokens off;
  client_body_temp_path $temp_dir/client_body;
  proxy_temp_path $temp_dir/proxy;
  fastcgi_temp_path $temp_dir/fastcgi;
  uwsgi_temp_path $temp_dir/uwsgi;
  scgi_temp_path $temp_dir/scgi;
  # Bodies are read whole, to memory up to 1 MiB, beyond to temporary files,
  # before gunicorn gets the request; a client silent for 60 s is dropped.
  client_max_body_size $max_body;
  client_body_buffer_size 1m;
  client_body_timeout 60s;
  client_header_timeout 30s;
  send_timeout 60s;
  large_client_header_buffers 4 16k;
  keepalive_timeout 5s;
  upstream playground { server $app_bind; keepalive 8; }
  server {
    listen $bind;
    location / {
      proxy_pass http://playground;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      # Replaced, never appended: a client cannot pass its own X-Forwarded-For.
      proxy_set_header X-Forwarded-For \$remote_addr;
      proxy_set_header X-Forwarded-Proto \$scheme;
      # A client's own forwarded host, port, prefix and Forwarded header are dropped (an
      # empty value is not sent): the app takes the host from Host, checked by TRUSTED_HOSTS.
      proxy_set_header X-Forwarded-Host "";
      proxy_set_header X-Forwarded-Port "";
      proxy_set_header X-Forwarded-Prefix "";
      proxy_set_header X-Forwarded-Server "";
      proxy_set_header Forwarded "";
      proxy_request_buffering on;
      proxy_buffering on;
      proxy_read_timeout 120s;
      proxy_send_timeout 120s;
    }
  }
}
CONF
"$nginx_bin" -e stderr -t -q -c "$run_dir/nginx.conf" -p "$run_dir" -g 'daemon off;'
echo "serve-prod: nginx on $bind, gunicorn on $app_bind, files in $run_dir (temporary files in $temp_dir)" >&2
# gunicorn listens behind nginx; the app trusts exactly one proxy for the client's address.
export BIND="$app_bind" PLAYGROUND_TRUSTED_PROXIES="${PLAYGROUND_TRUSTED_PROXIES:-1}"
export NGINX_CONF="$run_dir/nginx.conf" NGINX_BIN="$nginx_bin" REMOVE_AT_EXIT="$made"
exec bash scripts/with-worker.sh "$py" "${gunicorn[@]}"
