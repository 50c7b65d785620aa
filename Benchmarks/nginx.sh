# nginx on 127.0.0.1 for the benchmark scripts (sourced, not run): one configuration for
# run.sh, chunked.sh and store.sh.
#
#   source Benchmarks/nginx.sh
#   nginx_start ROOT NAME    # serves ROOT on a free port; sets nginx_port, nginx_base and nginx_dir
#   nginx_stop               # stops it and removes its folder (safe to call twice, or before start)
#
# Before nginx_start, optionally: nginx_log=1 writes "$uri $status $body_bytes_sent" lines to
# $nginx_dir/access.log (bytes per request, for rows that count what crossed the wire; nginx_log=sent
# logs $bytes_sent instead, headers included, for rows where a 304's headers are the cost), and
# nginx_server_extra="…" adds directives to the server block (e.g. "max_ranges 0;": Range ignored).
#
# The configuration, pid file and logs live in a temporary folder /tmp/mappack-NAME-nginx.XXXXXX;
# `user root;` when run as root (nginx otherwise drops to nobody, who cannot read the files).
# The caller installs its own trap that calls nginx_stop.

nginx_dir=""
nginx_port=""
nginx_base=""
nginx_log=${nginx_log:-}
nginx_server_extra=${nginx_server_extra:-}

nginx_start() {
    local root=${1:?nginx_start needs a folder to serve} name=${2:-bench}
    local binary
    binary=$(command -v nginx || echo /usr/sbin/nginx)
    [ -x "$binary" ] || { echo "nginx.sh: nginx is missing; run 'make deps'" >&2; return 2; }
    nginx_dir=$(mktemp -d "/tmp/mappack-$name-nginx.XXXXXX")
    nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    nginx_base=http://127.0.0.1:$nginx_port
    local logging="access_log off;"
    [ -n "$nginx_log" ] && logging="log_format bytes '\$uri \$status \$body_bytes_sent'; access_log $nginx_dir/access.log bytes;"
    [ "$nginx_log" = sent ] && logging="log_format bytes '\$uri \$status \$bytes_sent'; access_log $nginx_dir/access.log bytes;"
    {
        [ "$(id -u)" = 0 ] && echo "user root;"
        cat <<CONF
worker_processes 1;
daemon on;
pid $nginx_dir/nginx.pid;
error_log $nginx_dir/error.log warn;
events { worker_connections 1024; }
http {
    $logging
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    types { application/json json; application/zstd zst; }
    default_type application/octet-stream;
    client_body_temp_path $nginx_dir/body;
    proxy_temp_path $nginx_dir/proxy;
    fastcgi_temp_path $nginx_dir/fastcgi;
    uwsgi_temp_path $nginx_dir/uwsgi;
    scgi_temp_path $nginx_dir/scgi;
    server { listen 127.0.0.1:$nginx_port; root $root; $nginx_server_extra }
}
CONF
    } > "$nginx_dir/nginx.conf"
    "$binary" -p "$nginx_dir" -c "$nginx_dir/nginx.conf" -e "$nginx_dir/error.log"
    # Ready when it answers (any status: the root may not hold an index).
    local _
    for _ in $(seq 50); do
        curl -sS -o /dev/null "$nginx_base/" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nginx.sh: nginx did not answer on $nginx_base (see $nginx_dir/error.log)" >&2
    return 1
}

nginx_stop() {
    [ -n "$nginx_dir" ] || return 0
    if [ -s "$nginx_dir/nginx.pid" ]; then
        kill "$(cat "$nginx_dir/nginx.pid")" 2>/dev/null || true
        sleep 0.2
    fi
    rm -rf "$nginx_dir"
    nginx_dir=""
}
