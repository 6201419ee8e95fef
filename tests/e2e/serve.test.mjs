// The dev server (scripts/serve.mjs), which the demo (npm start) and these tests use: a malformed
// request gets an answer and the server keeps serving (one bad URL once ended it).
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { serve } from "../../scripts/serve.mjs";

/** Sends a raw HTTP/1.1 request line and returns the status line of the answer. */
function request(port, target) {
  return new Promise((done, fail) => {
    const socket = net.connect(port, "127.0.0.1", () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
    );
    let data = "";
    socket.on("data", (chunk) => (data += chunk));
    socket.on("end", () => done(data.split("\r\n")[0]));
    socket.on("error", fail);
  });
}

test("serve: malformed URLs get 400, the server keeps serving, nothing outside the root", async () => {
  const server = await serve(new URL("../../web", import.meta.url).pathname);
  try {
    assert.equal(await request(server.port, "/%E0%A4%A"), "HTTP/1.1 400 Bad Request");
    assert.equal(await request(server.port, "//["), "HTTP/1.1 400 Bad Request");
    assert.equal(await request(server.port, "/%"), "HTTP/1.1 400 Bad Request");
    assert.equal(await request(server.port, "/index.html"), "HTTP/1.1 200 OK");
    // The URL parser folds "/%2e%2e/" into "/"; an escaped slash survives it and is refused.
    assert.equal(await request(server.port, "/%2e%2e/package.json"), "HTTP/1.1 404 Not Found");
    assert.equal(await request(server.port, "/..%2fpackage.json"), "HTTP/1.1 403 Forbidden");
    assert.equal(await request(server.port, "/no-such-file"), "HTTP/1.1 404 Not Found");
  } finally {
    await server.close();
  }
});

test("serve: cross-origin isolated by default (the threaded model module needs it), and not with isolated: false", async () => {
  const root = new URL("../../web", import.meta.url).pathname;
  for (const [options, expected] of [
    [{}, { coop: "same-origin", coep: "require-corp" }],
    [{ isolated: false }, { coop: null, coep: null }],
  ]) {
    const server = await serve(root, options);
    try {
      const response = await fetch(`${server.url}index.html`);
      assert.equal(response.status, 200);
      assert.deepEqual(
        { coop: response.headers.get("cross-origin-opener-policy"), coep: response.headers.get("cross-origin-embedder-policy") },
        expected,
        JSON.stringify(options),
      );
    } finally {
      await server.close();
    }
  }
});
