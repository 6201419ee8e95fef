// TensorFlow.js with its WebAssembly backend, one thread. Written per head with 2-D matMuls:
// the natural batched 4-D code misses the backend's fast path and is several times slower.
import * as tf from "@tensorflow/tfjs-core";
import { setThreadsCount } from "@tensorflow/tfjs-backend-wasm";
import { parseArgs, readInputs, report, time } from "../common.mjs";

const args = parseArgs();
setThreadsCount(1);
await tf.setBackend("wasm");
const { q, k, v } = readInputs(args);
const { H, L, D } = args;
const heads = (data) => Array.from({ length: H }, (_, h) => tf.tensor2d(data.subarray(h * L * D, (h + 1) * L * D), [L, D]));
const [Q, K, V] = [heads(q), heads(k), heads(v)];
const mask =
  args.mode === "causal"
    ? tf.tensor2d(
        Float32Array.from({ length: L * L }, (_, x) => (x % L > Math.floor(x / L) ? -Infinity : 0)),
        [L, L],
      )
    : null;
const scale = 1 / Math.sqrt(D);
const run = async () => {
  const outputs = tf.tidy(() =>
    Q.map((qh, h) => {
      let s = tf.mul(tf.matMul(qh, tf.transpose(K[h])), scale);
      if (mask) s = tf.add(s, mask);
      return tf.matMul(tf.softmax(s), V[h]);
    }),
  );
  const data = await Promise.all(outputs.map((o) => o.data()));
  outputs.forEach((o) => o.dispose());
  const out = new Float32Array(H * L * D);
  data.forEach((d, h) => out.set(d, h * L * D));
  return out;
};
const { ms, result } = await time(run, args.reps);
report(args, ms, result);
