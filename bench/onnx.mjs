// Builds ONNX models of attention in JS by writing the protobuf directly (no Python here).
// Only the fields these graphs need: ModelProto, GraphProto, NodeProto, AttributeProto,
// TensorProto, ValueInfoProto (field numbers from onnx.proto).

class Writer {
  constructor() {
    this.parts = [];
  }
  varint(n) {
    const out = [];
    while (n >= 0x80) {
      out.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    out.push(n);
    this.parts.push(Uint8Array.from(out));
  }
  key(field, wire) {
    this.varint(field * 8 + wire);
  }
  uint(field, n) {
    this.key(field, 0);
    this.varint(n);
  }
  bytes(field, data) {
    this.key(field, 2);
    this.varint(data.length);
    this.parts.push(data);
  }
  string(field, s) {
    this.bytes(field, new TextEncoder().encode(s));
  }
  message(field, build) {
    const w = new Writer();
    build(w);
    this.bytes(field, w.finish());
  }
  finish() {
    const length = this.parts.reduce((n, p) => n + p.length, 0);
    const out = new Uint8Array(length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

const FLOAT = 1;
const ATTR_INT = 2;
const ATTR_INTS = 7;

function node(w, op, inputs, outputs, attributes = []) {
  w.message(1, (n) => {
    for (const i of inputs) n.string(1, i);
    for (const o of outputs) n.string(2, o);
    n.string(3, `${op}_${outputs[0]}`);
    n.string(4, op);
    for (const a of attributes) {
      n.message(5, (attr) => {
        attr.string(1, a.name);
        if (Array.isArray(a.ints)) {
          for (const i of a.ints) attr.uint(8, i >= 0 ? i : 2 ** 64 + i);
          attr.uint(20, ATTR_INTS);
        } else {
          // Negative ints are two's complement 64-bit varints.
          if (a.i >= 0) attr.uint(3, a.i);
          else {
            attr.key(3, 0);
            const big = (1n << 64n) + BigInt(a.i);
            const bytes = [];
            let v = big;
            while (v >= 0x80n) {
              bytes.push(Number(v & 0x7fn) | 0x80);
              v >>= 7n;
            }
            bytes.push(Number(v));
            attr.parts.push(Uint8Array.from(bytes));
          }
          attr.uint(20, ATTR_INT);
        }
      });
    }
  });
}

function initializer(w, name, dims, values) {
  w.message(5, (t) => {
    for (const d of dims) t.uint(1, d);
    t.uint(2, FLOAT);
    t.string(8, name);
    t.bytes(9, new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
  });
}

function valueInfo(w, field, name, dims) {
  w.message(field, (v) => {
    v.string(1, name);
    v.message(2, (type) =>
      type.message(1, (tensor) => {
        tensor.uint(1, FLOAT);
        tensor.message(2, (shape) => {
          for (const d of dims) shape.message(1, (dim) => dim.uint(1, d));
        });
      }),
    );
  });
}

/** softmax(q kᵀ / sqrt(D) [+ causal mask]) v for q, k, v [B, H, L, D]; returns model bytes. */
export function attentionModel({ B, H, L, D, causal }) {
  const model = new Writer();
  model.uint(1, 8); // ir_version
  model.message(8, (op) => {
    op.string(1, "");
    op.uint(2, 17);
  });
  model.message(7, (g) => {
    node(g, "Transpose", ["k"], ["kt"], [{ name: "perm", ints: [0, 1, 3, 2] }]);
    node(g, "MatMul", ["q", "kt"], ["scores"]);
    node(g, "Mul", ["scores", "scale"], ["scaled"]);
    if (causal) node(g, "Add", ["scaled", "mask"], ["masked"]);
    node(g, "Softmax", [causal ? "masked" : "scaled"], ["weights"], [{ name: "axis", i: -1 }]);
    node(g, "MatMul", ["weights", "v"], ["output"]);
    g.string(2, "attention");
    initializer(g, "scale", [], Float32Array.of(1 / Math.sqrt(D)));
    if (causal) {
      const mask = new Float32Array(L * L);
      for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) mask[i * L + j] = -Infinity;
      initializer(g, "mask", [L, L], mask);
    }
    for (const name of ["q", "k", "v"]) valueInfo(g, 11, name, [B, H, L, D]);
    valueInfo(g, 12, "output", [B, H, L, D]);
  });
  return model.finish();
}
