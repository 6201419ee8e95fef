// The canvas painter (web/paint.js) against a context that records its calls: a 2 px or wider
// whole-pixel width is drawn as 1 px lines side by side (the lines view's fast path), other widths
// as one stroke; level labels are drawn in place.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CanvasPainter } from "../../web/paint.js";
import { assertClose } from "./helpers.mjs";

/** A CanvasRenderingContext2D stand-in: property writes and method calls, in order. */
function recorder() {
  const calls = [];
  const state = { globalAlpha: 1, lineWidth: 1, strokeStyle: "", fillStyle: "", font: "", textAlign: "", textBaseline: "" };
  const context = new Proxy(state, {
    get(target, name) {
      if (name in target) return target[name];
      return (...args) => calls.push([name, ...args]);
    },
    set(target, name, value) {
      target[name] = value;
      calls.push([`${String(name)}=`, value]);
      return true;
    },
  });
  return { context, calls, state };
}

/** The segments of the path stroked: [[x1, y1, x2, y2], ...] from moveTo/lineTo pairs. */
function strokedLines(calls) {
  const lines = [];
  for (let k = 0; k < calls.length; k++)
    if (calls[k][0] === "moveTo") {
      assert.equal(calls[k + 1][0], "lineTo", `call ${k + 1} is ${calls[k + 1][0]}, expected lineTo after moveTo`);
      lines.push([...calls[k].slice(1), ...calls[k + 1].slice(1)]);
    }
  return lines;
}

/**
 * The lines against the expected ones, coordinate by coordinate (helpers.mjs assertClose: fails
 * on NaN and on a size mismatch, names the worst difference). The expected coordinates are the
 * segment's ends plus half-pixel multiples of its unit normal: a few double roundings of numbers
 * under 25, so 1e-12 is far above their error and far below a pixel.
 */
const sameLines = (actual, expected, what) =>
  assertClose(actual.flat(), expected.flat(), 1e-12, `${what}: [x1, y1, x2, y2] of ${expected.length} lines`, [actual.length, 4]);

const count = (calls, name) => calls.filter((c) => c[0] === name).length;

test("segments: 1 px lines are stroked as given, in one path", () => {
  const { context, calls, state } = recorder();
  new CanvasPainter(context).segments(Float32Array.of(0, 0, 10, 5, 3, 4, 8, 4), "#123456", 1, 0.25);
  sameLines(
    strokedLines(calls),
    [
      [0, 0, 10, 5],
      [3, 4, 8, 4],
    ],
    "1 px",
  );
  assert.equal(count(calls, "beginPath"), 1);
  assert.equal(count(calls, "stroke"), 1);
  assert.ok(
    calls.some((c) => c[0] === "globalAlpha=" && c[1] === 0.25),
    "the opacity is set for the stroke",
  );
  assert.equal(state.globalAlpha, 1, "the opacity is put back");
  assert.equal(state.lineWidth, 1);
});

test("segments: a 2 px width is two 1 px lines, 1 px apart across each segment", () => {
  const { context, calls, state } = recorder();
  // A level segment (normal (0, 1)) and a 3-4-5 one (normal (-0.8, 0.6)).
  new CanvasPainter(context).segments([0, 10, 20, 10, 0, 0, 3, 4], "red", 2, 0.5);
  sameLines(
    strokedLines(calls),
    [
      [0, 9.5, 20, 9.5],
      [0, 10.5, 20, 10.5],
      [0.4, -0.3, 3.4, 3.7],
      [-0.4, 0.3, 2.6, 4.3],
    ],
    "2 px",
  );
  assert.equal(state.lineWidth, 1, "drawn with 1 px lines");
  assert.equal(count(calls, "stroke"), 1, "one path, one stroke");
  assert.equal(state.globalAlpha, 1);
});

test("segments: a 3 px width is three lines centred on the segment", () => {
  const { context, calls } = recorder();
  new CanvasPainter(context).segments([5, 0, 5, 8], "red", 3);
  // Going down (0, 8): the normal is (-1, 0).
  sameLines(
    strokedLines(calls),
    [
      [6, 0, 6, 8],
      [5, 0, 5, 8],
      [4, 0, 4, 8],
    ],
    "3 px",
  );
});

test("segments: a width that is not a whole number of pixels is one stroke of that width", () => {
  const { context, calls, state } = recorder();
  new CanvasPainter(context).segments([0, 0, 10, 0], "red", 2.5, 0.9);
  sameLines(strokedLines(calls), [[0, 0, 10, 0]], "2.5 px");
  assert.equal(state.lineWidth, 2.5);
});

test("segments: a segment of length 0 gives finite coordinates", () => {
  const { context, calls } = recorder();
  new CanvasPainter(context).segments([4, 4, 4, 4], "red", 2);
  const lines = strokedLines(calls);
  assert.equal(lines.length, 2);
  for (const line of lines) assert.ok(line.every(Number.isFinite), `not finite: ${line}`);
});

test("text: a level label without a box is drawn in place; a rotated one through a transform", () => {
  const { context, calls } = recorder();
  const p = new CanvasPainter(context);
  p.text("cat", 12, 30, { size: 11, fill: "black", anchor: "end", baseline: "middle" });
  assert.deepEqual(
    calls.filter((c) => c[0] === "fillText"),
    [["fillText", "cat", 12, 30]],
  );
  assert.equal(count(calls, "save"), 0);
  assert.equal(context.textAlign, "right");
  assert.equal(context.textBaseline, "middle");
  calls.length = 0;
  p.text("dog", 7, 9, { rotate: -90, fill: "black" });
  assert.deepEqual(
    calls.filter((c) => ["save", "translate", "rotate", "fillText", "restore"].includes(c[0])).map((c) => c[0]),
    ["save", "translate", "rotate", "fillText", "restore"],
  );
  assert.deepEqual(
    calls.find((c) => c[0] === "fillText"),
    ["fillText", "dog", 0, 0],
  );
});
