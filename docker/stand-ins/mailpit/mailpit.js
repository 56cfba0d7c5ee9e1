/**
 * A mail catcher with the part of Mailpit's interface the integration environment uses (see the Dockerfile):
 * an SMTP sink that keeps every message, and an inbox on HTTP (pages and Mailpit's REST API subset).
 */
const net = require('node:net');
const http = require('node:http');
const { randomUUID } = require('node:crypto');

const MAX_MESSAGES = 500;
const MAX_SIZE = 10 * 1024 * 1024;
const messages = []; // newest first

function hostPort(value, fallbackPort) {
  const match = /^(.*):(\d+)$/.exec(value || '');
  return match ? { host: match[1] || '0.0.0.0', port: Number(match[2]) } : { host: '0.0.0.0', port: fallbackPort };
}

// --- MIME: just enough to read what nodemailer sends ------------------------------------------------------------

function splitHead(raw) {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] ??= line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function decodeQuotedPrintable(text) {
  const bytes = [];
  const soft = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i += 1) {
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeBody(body, encoding) {
  switch ((encoding || '').toLowerCase()) {
    case 'quoted-printable':
      return decodeQuotedPrintable(body);
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    default:
      return body;
  }
}

/** RFC 2047 encoded words (=?UTF-8?Q?...?= and =?UTF-8?B?...?=) in a header. */
function decodeWords(value) {
  return (value || '').replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=\s*(?==\?)?/g, (_, _charset, kind, text) =>
    kind.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  );
}

/** The first text/plain and text/html parts, however deep in multipart/* parts. */
function bodies(headers, body, found = { Text: '', HTML: '' }) {
  const type = headers['content-type'] || 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const parts = body.split(
      new RegExp(`\\r?\\n?--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?[ \\t]*\\r?\\n?`),
    );
    for (const part of parts.slice(1)) {
      if (!part.trim()) continue;
      const inner = splitHead(part);
      bodies(inner.headers, inner.body, found);
    }
  } else if (/^text\/html/i.test(type)) {
    found.HTML ||= decodeBody(body, headers['content-transfer-encoding']);
  } else if (/^text\/plain/i.test(type)) {
    found.Text ||= decodeBody(body, headers['content-transfer-encoding']);
  }
  return found;
}

function addresses(value) {
  return decodeWords(value)
    .split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)
    .map((one) => one.trim())
    .filter(Boolean)
    .map((one) => {
      const match = /^(.*?)\s*<([^>]+)>$/.exec(one);
      return match ? { Name: match[1].replace(/^"|"$/g, ''), Address: match[2] } : { Name: '', Address: one };
    });
}

function store(raw, envelope) {
  const { headers, body } = splitHead(raw);
  const { Text, HTML } = bodies(headers, body);
  const to = addresses(headers.to);
  const message = {
    ID: randomUUID(),
    MessageID: (headers['message-id'] || '').replace(/^<|>$/g, ''),
    From: addresses(headers.from)[0] ?? { Name: '', Address: envelope.from },
    To: to.length > 0 ? to : envelope.to.map((Address) => ({ Name: '', Address })),
    Subject: decodeWords(headers.subject),
    Created: new Date().toISOString(),
    Size: Buffer.byteLength(raw),
    Text,
    HTML,
    raw,
  };
  messages.unshift(message);
  messages.length = Math.min(messages.length, MAX_MESSAGES);
  return message;
}

// --- SMTP: one message per transaction, every recipient accepted ------------------------------------------------

function smtpSession(socket) {
  let buffer = '';
  let envelope = { from: '', to: [] };
  let data;
  const reply = (line) => socket.write(`${line}\r\n`);
  socket.setEncoding('utf8');
  socket.on('error', () => socket.destroy());
  reply('220 mailpit-stand-in ESMTP');
  socket.on('data', (chunk) => {
    buffer += chunk;
    for (;;) {
      if (data !== undefined) {
        const end = buffer.indexOf('\r\n.\r\n');
        if (end < 0 && !buffer.startsWith('.\r\n')) {
          if (buffer.length > MAX_SIZE) {
            reply('552 message too large');
            socket.end();
          }
          return;
        }
        // The CRLF before the final dot ends the message's last line: it is the message's own.
        const raw = buffer.startsWith('.\r\n') ? '' : buffer.slice(0, end + 2);
        buffer = buffer.slice(buffer.startsWith('.\r\n') ? 3 : end + 5);
        data = undefined;
        const message = store(raw.replace(/^\.\./gm, '.'), envelope);
        envelope = { from: '', to: [] };
        reply(`250 2.0.0 Ok: queued as ${message.ID}`);
        continue;
      }
      const eol = buffer.indexOf('\r\n');
      if (eol < 0) return;
      const line = buffer.slice(0, eol);
      buffer = buffer.slice(eol + 2);
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO') reply('250-mailpit-stand-in\r\n250-8BITMIME\r\n250-SMTPUTF8\r\n250 SIZE 10485760');
      else if (verb === 'HELO') reply('250 mailpit-stand-in');
      else if (verb === 'MAIL') {
        envelope = { from: /<([^>]*)>/.exec(line)?.[1] ?? '', to: [] };
        reply('250 2.1.0 Ok');
      } else if (verb === 'RCPT') {
        envelope.to.push(/<([^>]*)>/.exec(line)?.[1] ?? '');
        reply('250 2.1.5 Ok');
      } else if (verb === 'DATA') {
        if (envelope.to.length === 0) reply('503 5.5.1 RCPT first');
        else {
          data = '';
          reply('354 End data with <CR><LF>.<CR><LF>');
        }
      } else if (verb === 'RSET') {
        envelope = { from: '', to: [] };
        reply('250 2.0.0 Ok');
      } else if (verb === 'NOOP') reply('250 2.0.0 Ok');
      else if (verb === 'QUIT') {
        reply('221 2.0.0 Bye');
        socket.end();
        return;
      } else reply('502 5.5.2 Command not implemented');
    }
  });
}

// --- HTTP: the inbox ---------------------------------------------------------------------------------------------

const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const summary = ({ raw: _raw, Text, HTML: _html, ...rest }) => ({
  ...rest,
  Snippet: Text.replace(/\s+/g, ' ').slice(0, 250),
});
const page = (title, body) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;

function serve(request, response) {
  const url = new URL(request.url, 'http://inbox');
  const send = (status, type, body) =>
    response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
  const json = (status, value) => send(status, 'application/json', JSON.stringify(value));
  const find = (id) => (id === 'latest' ? messages[0] : messages.find((m) => m.ID === id));
  let match;
  if (url.pathname === '/livez' || url.pathname === '/readyz') return send(200, 'text/plain', 'ok');
  if (request.method === 'GET' && url.pathname === '/api/v1/messages') {
    const start = Math.max(0, Number(url.searchParams.get('start')) || 0);
    const limit = Math.max(1, Number(url.searchParams.get('limit')) || 50);
    const list = messages.slice(start, start + limit).map(summary);
    return json(200, {
      total: messages.length,
      unread: 0,
      count: list.length,
      messages_count: messages.length,
      start,
      tags: [],
      messages: list,
    });
  }
  if (request.method === 'DELETE' && url.pathname === '/api/v1/messages') {
    messages.length = 0;
    return send(200, 'text/plain', 'ok');
  }
  if (request.method === 'GET' && (match = /^\/api\/v1\/message\/([^/]+)(\/raw)?$/.exec(url.pathname))) {
    const message = find(decodeURIComponent(match[1]));
    if (!message) return send(404, 'text/plain', 'message not found');
    if (match[2]) return send(200, 'text/plain; charset=utf-8', message.raw);
    const { raw: _raw, ...full } = message;
    return json(200, full);
  }
  if (request.method === 'GET' && (match = /^\/view\/([^/]+)$/.exec(url.pathname))) {
    const message = find(decodeURIComponent(match[1]));
    if (!message) return send(404, 'text/plain', 'message not found');
    return send(
      200,
      'text/html; charset=utf-8',
      page(
        message.Subject,
        `<p><a href="/">Inbox</a></p><h1>${escapeHtml(message.Subject)}</h1>
<p>From ${escapeHtml(message.From.Address)} to ${escapeHtml(message.To.map((t) => t.Address).join(', '))}, ${escapeHtml(message.Created)}</p>
<pre>${escapeHtml(message.Text)}</pre>`,
      ),
    );
  }
  if (request.method === 'GET' && url.pathname === '/') {
    const rows = messages.map(
      (m) =>
        `<tr><td>${escapeHtml(m.Created)}</td><td>${escapeHtml(m.To.map((t) => t.Address).join(', '))}</td><td><a href="/view/${m.ID}">${escapeHtml(m.Subject || '(no subject)')}</a></td></tr>`,
    );
    return send(
      200,
      'text/html; charset=utf-8',
      page(
        'Inbox',
        `<h1>Inbox (${messages.length})</h1>
<p>Every message sent to this catcher's SMTP port; nothing is delivered. JSON: <a href="/api/v1/messages">/api/v1/messages</a>.</p>
<table><thead><tr><th>Received</th><th>To</th><th>Subject</th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
      ),
    );
  }
  return send(404, 'text/plain', 'not found');
}

const smtp = hostPort(process.env.MP_SMTP_BIND_ADDR, 1025);
const ui = hostPort(process.env.MP_UI_BIND_ADDR, 8025);
const smtpServer = net
  .createServer(smtpSession)
  .listen(smtp.port, smtp.host, () => console.log(`SMTP on ${smtp.host}:${smtp.port}`));
const httpServer = http
  .createServer(serve)
  .listen(ui.port, ui.host, () => console.log(`inbox on http://${ui.host}:${ui.port}/`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    smtpServer.close();
    httpServer.close();
    process.exit(0);
  });
}
