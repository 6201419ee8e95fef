// The attention-file readers against files written by numpy itself and by an independent
// safetensors writer (tests/fixtures/attention/numpy/make_numpy.py): float16 subnormals down to
// 2^-24, the largest subnormal, the smallest normal and -0 must read as exactly the float32
// values numpy's own conversion gives; NaN and the infinities are named errors with their place.
// (tests/fixtures/attention/make.mjs writes the other fixtures with the project's own f16 code,
// so it cannot catch a decoder that agrees with itself.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parseAttentionFile } from "../../web/files/index.js";

const dir = new URL("../fixtures/attention/numpy/", import.meta.url);
const read = (name) => new Uint8Array(readFileSync(new URL(name, dir)));

// A float32 .npy as numpy writes it (magic, version, header length, header, little-endian data),
// read without attnlens' reader.
function float32Npy(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = bytes[6] === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = (bytes[6] === 1 ? 10 : 12) + headerLength;
  assert.match(new TextDecoder().decode(bytes.subarray(10, start)), /'descr': '<f4'/);
  const out = new Float32Array((bytes.length - start) / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(start + 4 * i, true);
  return out;
}

test("float16 subnormals, the smallest normal and -0 read as numpy converts them (.npy and safetensors)", () => {
  const expected = float32Npy(read("subnormal-f16.expected.npy"));
  assert.ok(expected.includes(2 ** -24) && expected.includes(1023 * 2 ** -24) && expected.includes(2 ** -14));
  for (const file of ["subnormal-f16.npy", "subnormal-f16.safetensors"]) {
    const data = parseAttentionFile(read(file), { name: file }).weights.data;
    assert.equal(data.length, expected.length, file);
    for (let i = 0; i < expected.length; i++) {
      assert.ok(Object.is(data[i], expected[i]), `${file}: element ${i} is ${data[i]}, numpy says ${expected[i]}`);
    }
  }
});

test("NaN and ±infinity in a float16 file are named errors with their place", () => {
  for (const [kind, shown] of [
    ["nan", "NaN"],
    ["inf", "Infinity"],
    ["neginf", "-Infinity"],
  ]) {
    const where = JSON.parse(readFileSync(new URL(`${kind}-f16.where.json`, dir), "utf8"));
    for (const ext of ["npy", "safetensors"]) {
      const file = `${kind}-f16.${ext}`;
      assert.throws(
        () => parseAttentionFile(read(file), { name: file }),
        (e) => {
          assert.equal(e.code, "BAD_FILE", e.message);
          const place = `layer ${where.layer}, head ${where.head}, query ${where.query}, key ${where.key}`;
          assert.ok(e.message.includes(`${file}: weight [${place}] is ${shown}`), e.message);
          return true;
        },
      );
    }
  }
});
