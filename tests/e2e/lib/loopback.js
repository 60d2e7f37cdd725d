// A loopback HTTP listener that records every connection and request made to it: the target of
// the MCP Apps attack pages (tests/e2e/lib/mcp-apps/hostile-server.mjs). A request or a bare
// connection (a preconnect sends nothing) that shows up here got out of the sandbox; the pages
// themselves cannot tell (an opaque-origin frame sees errors either way).
import { createServer } from "node:http";

// Small, valid bodies by extension, so that a load that does get through also looks like a
// success to the page (an <img> fires `load`, a <script> runs) and not only in this log.
const GIF = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
const BODIES = {
  ".gif": ["image/gif", GIF],
  ".js": ["text/javascript", "window.__loopbackScript = (window.__loopbackScript || 0) + 1;\n"],
  ".css": ["text/css", "/* loopback */\n"],
  ".html": ["text/html; charset=utf-8", "<!doctype html><title>loopback</title><p>loopback</p>\n"],
};

/**
 * Starts the listener on 127.0.0.1 (a free port).
 * @returns {Promise<{url: string, origin: string,
 *   requests: Array<{method: string, path: string, time: number}>,
 *   wsAttempts: Array<{path: string, time: number}>, connections: Array<{time: number}>,
 *   close: () => Promise<void>}>}
 *   `requests` holds every request in arrival order (`path` with its query string, `time` in ms
 *   since the epoch), WebSocket upgrade attempts included; `wsAttempts` holds the upgrades alone;
 *   `connections` every TCP connection accepted, whether or not a request came on it.
 */
export async function startLoopback() {
  const requests = [];
  const wsAttempts = [];
  const connections = [];
  const sockets = new Set();

  const server = createServer((req, res) => {
    requests.push({ method: req.method, path: req.url, time: Date.now() });
    // Drain the body (beacons, form posts) without keeping it; answer at once, never hang.
    req.resume();
    const path = req.url.split("?")[0];
    const ext = path.slice(path.lastIndexOf("."));
    let [type, body] = BODIES[ext] ?? ["text/plain; charset=utf-8", "ok\n"];
    if ((req.headers.accept ?? "").includes("text/event-stream")) {
      // EventSource: one event, then the end; the long retry keeps it from reconnecting in a loop.
      [type, body] = ["text/event-stream", "retry: 60000\ndata: ok\n\n"];
    }
    res.writeHead(200, {
      "content-type": type,
      "content-length": Buffer.byteLength(body),
      "cache-control": "no-store",
      // Lets a CORS fetch or XHR that got this far read the answer: success is then visible to
      // the page too (the log stays the proof).
      "access-control-allow-origin": "*",
      connection: "close",
    });
    res.end(body);
  });

  // A WebSocket attempt arrives as an upgrade; record it and refuse it (no 101), then close.
  server.on("upgrade", (req, socket) => {
    const time = Date.now();
    requests.push({ method: req.method, path: req.url, time });
    wsAttempts.push({ path: req.url, time });
    socket.on("error", () => {});
    socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  });

  // Tracked so that close() never waits on a keep-alive or half-open connection.
  server.on("connection", (socket) => {
    connections.push({ time: Date.now() });
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;

  return {
    url: origin,
    origin,
    requests,
    wsAttempts,
    connections,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
