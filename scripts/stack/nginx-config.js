/**
 * The nginx configuration of `npm run stack`: the only public port, in front of every gateway instance. The same
 * balancer rules as gateway/nginx.conf (compose), on fixed local ports: a gateway that answers has answered (its JSON
 * 503 while the pets service restarts is passed on and never takes it out of rotation); only a connection error or
 * timeout moves an idempotent request to the next gateway (and rests the failed one 10 s); a body over 16 KiB gets the gateway's JSON 413; the
 * gateways see the address nginx saw in X-Forwarded-For, never what a client wrote there.
 */
function nginxConfig({ dir, host, port, gatewayPorts, portalPort, upstreamIdleSeconds }) {
  return `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/client-body;
  proxy_temp_path ${dir}/proxy;
  upstream gateways {
${gatewayPorts.map((p) => `    server ${host}:${p} max_fails=1 fail_timeout=10s;`).join('\n')}
    keepalive 32;
    # Below the gateways' KEEP_ALIVE_TIMEOUT_MS (75 s by default): nginx, not
    # the gateway, closes an idle connection, so a reused one is never being closed under a request.
    keepalive_timeout ${upstreamIdleSeconds}s;
  }
${
  portalPort
    ? `  upstream portals {
    server ${host}:${portalPort} max_fails=1 fail_timeout=10s;
    keepalive 8;
    keepalive_timeout ${upstreamIdleSeconds}s;
  }
`
    : ''
}  server {
    listen ${host}:${port};
    client_max_body_size 16k;
    location /health/ { return 404; }
${
  portalPort
    ? `    # The developer portal at /portal/ (its PORTAL_BASE_PATH), as gateway/nginx.conf publishes it.
    location = /portal { return 301 /portal/; }
    location /portal/health/ { return 404; }
    location /portal/ {
      client_max_body_size 64k;
      proxy_pass http://portals;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      # The client's Host, as gateway/nginx.conf passes it: each app answers only its allowed host names.
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-Host "";
      proxy_next_upstream error timeout;
      proxy_connect_timeout 1s;
      proxy_read_timeout 15s;
    }
`
    : ''
}    location / {
      proxy_pass http://gateways;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # The address nginx saw, replacing the client's own header: the gateways trust this hop only.
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      # The client's Host, as gateway/nginx.conf passes it: the gateways answer only their allowed host names.
      proxy_set_header Host $host;
      # Links are built from PUBLIC_ORIGIN, never from what a client writes: a client's X-Forwarded-Host is dropped.
      proxy_set_header X-Forwarded-Host "";
      # A gateway's answer (its JSON 502/503 included) is passed on; only a failed connection moves to the next.
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries 3;
      proxy_connect_timeout 1s;
      proxy_read_timeout 15s;
      error_page 413 = @payload-too-large;
    }
    location @payload-too-large {
      default_type "application/json; charset=utf-8";
      add_header Cache-Control "private, no-store" always;
      add_header X-Content-Type-Options nosniff always;
      return 413 '{"code":"PAYLOAD_TOO_LARGE","message":"The request body exceeds the limit of 16384 bytes.","status":413}';
    }
  }
}
`;
}

module.exports = { nginxConfig };
