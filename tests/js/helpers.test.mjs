// The comparison helper itself: it must fail on NaN, infinities, size mismatches and differences
// over the tolerance, and say where.
import { test } from "node:test";
import assert from "node:assert/strict";
import { assertClose, compareClose } from "./helpers.mjs";

test("equal values pass, equal infinities included", () => {
  const c = compareClose(Float32Array.of(1, -2.5, -Infinity), [1, -2.5, -Infinity], 0);
  assert.ok(c.ok, c.report);
  assert.match(c.report, /max \|actual - expected\| = 0\.00/);
  assert.ok(compareClose([], [], 0).ok);
});

test("a difference over the tolerance fails and is located", () => {
  const actual = new Float32Array(6);
  const expected = [0, 1e-7, 0, 0, 0, -3e-3];
  assert.ok(compareClose(actual, expected, 1e-2, [2, 3]).ok);
  const c = compareClose(actual, expected, 1e-6, [2, 3]);
  assert.equal(c.ok, false);
  assert.match(c.report, /= 0\.00300 at index 5 \[1, 2\]: actual 0, expected -0\.003/);
  assert.match(c.report, /1 of 6 values over/);
  assert.throws(() => assertClose(actual, expected, 1e-6, "weights"), /weights: max/);
});

test("NaN on either side fails, whatever the tolerance", () => {
  const c = compareClose(Float32Array.of(1, NaN, 3), [1, 2, 3], 1e9);
  assert.equal(c.ok, false);
  assert.match(c.report, /non-finite difference at index 1: actual NaN, expected 2/);
  assert.equal(compareClose([1, 2], [1, NaN], 1e9).ok, false);
  assert.equal(compareClose([NaN], [NaN], 1e9).ok, false);
});

test("an infinity the other side does not hold fails", () => {
  assert.equal(compareClose([0.5, Infinity], [0.5, 1e30], 1e9).ok, false);
  assert.equal(compareClose([-Infinity], [Infinity], 1e9).ok, false);
});

test("a short or long result, a shape that does not fit, a NaN tolerance: all fail", () => {
  assert.match(compareClose([1, 2], [1, 2, 3], 1).report, /size mismatch: actual has 2 values, expected has 3/);
  assert.equal(compareClose([1, 2, 3], [1, 2], 1).ok, false);
  assert.match(compareClose([1, 2], [1, 2], 1, [3]).report, /shape \[3\] holds 3 values but 2 were given/);
  assert.match(compareClose([1], [1], NaN).report, /the tolerance is NaN/);
  assert.equal(compareClose([1], [1], -1).ok, false);
});
