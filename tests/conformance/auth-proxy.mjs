// Loopback reverse proxy for the conformance suite, which cannot send custom headers.
//
//   node auth-proxy.mjs <hub-url> <token-file> <ready-file>
//
// Listens on 127.0.0.1:<free port>, writes "http://127.0.0.1:<port>" to <ready-file>, and
// forwards every request to the hub with `Authorization: Bearer <token>` added. The hub's other
// guards still apply: Host and Origin are passed through unchanged, except that an authority
// naming this proxy (e.g. `127.0.0.1:<proxy port>`) is mapped to the same host name with the
// hub's port, as if the client had addressed the hub directly. A foreign Host or Origin
// (`evil.example.com`) reaches the hub untouched, so the DNS-rebinding check is the hub's own.
import http from 'node:http';
import fs from 'node:fs';

const [hubUrl, tokenFile, readyFile] = process.argv.slice(2);
if (!hubUrl || !tokenFile || !readyFile) {
  console.error('usage: auth-proxy.mjs <hub-url> <token-file> <ready-file>');
  process.exit(2);
}
const hub = new URL(hubUrl);
const token = fs.readFileSync(tokenFile, 'utf8').trim();
let proxyPort = 0;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

// "127.0.0.1:<proxyPort>" -> "127.0.0.1:<hubPort>"; anything else unchanged.
function mapAuthority(authority) {
  const m = /^(\[[^\]]*\]|[^:]+)(?::(\d+))?$/.exec(authority);
  if (!m) return authority;
  const [, host, port] = m;
  if (LOOPBACK.has(host.toLowerCase()) && port !== undefined && Number(port) === proxyPort) {
    return `${host}:${hub.port}`;
  }
  return authority;
}

function mapOrigin(origin) {
  const m = /^(https?:\/\/)([^/]+)$/.exec(origin);
  return m ? m[1] + mapAuthority(m[2]) : origin;
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers };
  if (headers.host !== undefined) headers.host = mapAuthority(headers.host);
  if (headers.origin !== undefined) headers.origin = mapOrigin(headers.origin);
  headers.authorization = `Bearer ${token}`;
  const upstream = http.request(
    {
      host: hub.hostname,
      port: hub.port,
      method: req.method,
      path: req.url,
      headers,
      setHost: false,
    },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  upstream.on('error', (e) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`auth-proxy: hub unreachable: ${e.message}`);
  });
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
});

server.listen(0, '127.0.0.1', () => {
  proxyPort = server.address().port;
  fs.writeFileSync(readyFile, `http://127.0.0.1:${proxyPort}\n`);
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close();
    server.closeAllConnections?.();
    process.exit(0);
  });
}
