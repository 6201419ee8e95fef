// A small static file server for 127.0.0.1: the demo (npm start), the browser tests and the
// packaging smoke test. Serves `root` only; never listens beyond loopback.
//   node scripts/serve.mjs DIR [--port N]
import { createServer } from "node:http";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { cli, cliNumber } from "./cli.mjs";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  // docs/files.md, which the page links to: shown as text, not downloaded.
  ".md": "text/plain; charset=utf-8",
};

// Cross-origin isolation: with these two headers on every response the page may share memory
// with its workers (crossOriginIsolated), which the threaded model module needs (wasm/api.js,
// threadsUsable; docs/api.md, "Threads"). The site loads nothing from other origins.
const ISOLATION = { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" };

/**
 * Serves `root` on 127.0.0.1, cross-origin isolated unless `isolated` is false. Resolves to
 * { url, port, requests, sent, close() }: every path asked for, and those sent whole (not 304).
 */
export function serve(root, { port = 0, isolated = true } = {}) {
  const isolation = isolated ? ISOLATION : {};
  const base = resolve(root);
  const requests = [];
  // The paths answered with their bytes (not with a 304).
  const sent = [];
  const server = createServer(async (req, res) => {
    // A malformed request (a broken %-escape, a URL that does not parse) gets a 400; it must
    // never throw here, where it would end the server.
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, "http://127.0.0.1").pathname);
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("bad request: malformed URL");
      return;
    }
    requests.push(path);
    let file = normalize(join(base, path));
    if (file !== base && !file.startsWith(base + sep)) {
      res.writeHead(403).end("forbidden");
      return;
    }
    try {
      let info = await stat(file);
      if (info.isDirectory()) {
        file = join(file, "index.html");
        info = await stat(file);
      }
      // no-cache: the browser asks again each time (an edited file shows at once), and the ETag
      // lets it keep what it has: a blog post whose iframe loads the demo page fetches the
      // module's bytes once (a 304 the second time), as on a static host.
      const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
      const headers = { etag, "cache-control": "no-cache", ...isolation };
      if (req.headers["if-none-match"] === etag) {
        res.writeHead(304, headers).end();
        return;
      }
      sent.push(path);
      res.writeHead(200, {
        "content-type": TYPES[extname(file)] ?? "application/octet-stream",
        "content-length": info.size,
        ...headers,
      });
      createReadStream(file)
        .on("error", () => res.destroy())
        .pipe(res);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" }).end(`not found: ${path}`);
    }
  });
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => {
      const actual = server.address().port;
      done({
        url: `http://127.0.0.1:${actual}/`,
        port: actual,
        requests,
        sent,
        close: () => new Promise((closed) => server.close(closed)),
      });
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const usage = "usage: node scripts/serve.mjs [DIR] [--port N] [--no-isolation]";
  const { values, positionals } = cli({
    usage,
    positionals: 1,
    options: { port: { type: "string" }, "no-isolation": { type: "boolean" } },
  });
  const port = cliNumber(values, "port", { fallback: 0, min: 0, max: 65535, integer: true, usage });
  const dir = positionals[0] ?? ".";
  const isolated = !values["no-isolation"];
  let server;
  try {
    server = await serve(dir, { port, isolated });
  } catch (error) {
    if (error.code !== "EADDRINUSE") throw error;
    server = await serve(dir, { port: 0, isolated });
    console.log(`attnlens: port ${port} is busy; using ${server.port}`);
  }
  const how = isolated ? "cross-origin isolated: a picked checkpoint computes on several cores" : "not isolated: one thread";
  console.log(`attnlens: serving ${dir} at ${server.url} (${how}; Ctrl+C to stop)`);
}
