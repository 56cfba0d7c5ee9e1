/** The nginx configuration of `npm run stack`: the only public port, in front of every gateway instance. */
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
${gatewayPorts.map((p) => `    server ${host}:${p} max_fails=1 fail_timeout=5s;`).join('\n')}
    keepalive 32;
    # Below the gateways' KEEP_ALIVE_TIMEOUT_MS (75 s by default): nginx, not
    # the gateway, closes an idle connection, so a reused one is never being closed under a request.
    keepalive_timeout ${upstreamIdleSeconds}s;
  }
${portalPort ? `  upstream portals {
    server ${host}:${portalPort} max_fails=1 fail_timeout=5s;
    keepalive 8;
    keepalive_timeout ${upstreamIdleSeconds}s;
  }
` : ''}  server {
    listen ${host}:${port};
    client_max_body_size 16k;
    location /health/ { return 404; }
${portalPort ? `    # The developer portal at /portal/ (its PORTAL_BASE_PATH), as gateway/nginx.conf publishes it.
    location = /portal { return 301 /portal/; }
    location /portal/health/ { return 404; }
    location /portal/ {
      client_max_body_size 64k;
      proxy_pass http://portals;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host "";
      proxy_connect_timeout 2s;
      proxy_read_timeout 15s;
    }
` : ''}    location / {
      proxy_pass http://gateways;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      # Links are built from PUBLIC_ORIGIN, never from what a client writes: a client's X-Forwarded-Host is dropped.
      proxy_set_header X-Forwarded-Host "";
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 3;
      proxy_connect_timeout 2s;
      proxy_read_timeout 15s;
    }
  }
}
`;
}

module.exports = { nginxConfig };
