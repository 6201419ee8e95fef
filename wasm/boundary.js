// What both JS facades (api.js, model.js) share at the JS/wasm boundary: the error type, the
// checks of option objects, and the one rule by which a typed array is read before it crosses
// into wasm (readTyped). Imported by both; imports neither.

/** An error from attnlens: `code` is one of the library's error codes. */
export class AttnLensError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "AttnLensError";
    this.code = code;
  }
}

export const fail = (code, message) => {
  throw new AttnLensError(code, message);
};

// The intrinsic typed-array accessors: a subclass or a Proxy cannot change what they report.
const TypedArray = Object.getPrototypeOf(Int8Array.prototype);
const intrinsic = (name) => Object.getOwnPropertyDescriptor(TypedArray, name).get;
const typedKindOf = intrinsic(Symbol.toStringTag);
const typedLengthOf = intrinsic("length");
const typedBufferOf = intrinsic("buffer");
const typedByteOffsetOf = intrinsic("byteOffset");
const TYPED_CONSTRUCTORS = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
};

/** "Float32Array" etc. for a genuine typed array (subclasses included), else undefined. */
export const typedKind = (value) => (value !== null && typeof value === "object" ? typedKindOf.call(value) : undefined);

function isDetached(buffer) {
  try {
    new Uint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

export const describe = (value) => {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "an array";
  const kind = typedKind(value);
  if (kind) return `a ${kind}`;
  if (typeof value === "bigint") return `bigint ${value}n`;
  if (typeof value === "string") return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  return `${typeof value} ${String(value)}`;
};

/** Own enumerable option names of `options`, each one of `known`. */
export function checkOptions(name, options, known) {
  if (options === undefined) return {};
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    fail("BAD_ARGUMENT", `${name} must be an object; got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      fail("UNKNOWN_OPTION", `${name} has an unknown option "${key}"; known options: ${known.join(", ")}`);
    }
  }
  return options;
}

/**
 * The given options as a plain object (undefined entries left out), each checked to be of its
 * JS type: `types` maps each option name to "boolean", "number", "string" or "any" (checked
 * elsewhere). Values are the library's to check.
 */
export function typedOptions(name, options, types) {
  const given = checkOptions(name, options, Object.keys(types));
  const out = {};
  for (const [key, type] of Object.entries(types)) {
    const value = given[key];
    if (value === undefined) continue;
    if (type !== "any" && typeof value !== type) {
      const what = { boolean: "true or false", number: "a number", string: "a string", object: "an object" }[type];
      fail("BAD_ARGUMENT", `${key} must be ${what}; got ${describe(value)}`);
    }
    out[key] = value;
  }
  return out;
}

/**
 * The one rule for a typed array that crosses into wasm (both modules, every argument): it is
 * read through TypedArray.prototype's own getters (kind, buffer, byteOffset, length) called on
 * it, never through its own properties, iterators or methods, which a subclass, an own
 * `length` or a Proxy could make lie. Returns { kind, length, view }: `view` is a new plain typed
 * array of the same kind over the same memory (no copy; nothing on it can be overridden), what
 * every later step reads, copies into the heap or hands to the bindings. Undefined when `data`
 * is not a typed array of one of `kinds` (a Proxy is not one); a detached buffer is a
 * BAD_ARGUMENT naming `where`.
 */
export function readTyped(where, data, kinds) {
  const kind = typedKind(data);
  if (!kinds.includes(kind)) return undefined;
  const buffer = typedBufferOf.call(data);
  const length = typedLengthOf.call(data);
  if (length === 0 && isDetached(buffer)) {
    fail(
      "BAD_ARGUMENT",
      `${where}'s ArrayBuffer is detached (transferred, e.g. by structuredClone or postMessage); pass an array that still holds its data`,
    );
  }
  return { kind, length, view: new TYPED_CONSTRUCTORS[kind](buffer, typedByteOffsetOf.call(data), length) };
}

/** readTyped()'s length alone. */
export const typedLength = (where, data, kinds) => readTyped(where, data, kinds)?.length;

/**
 * True for a Float32Array that the bindings may write into as it is (explain's and attention's
 * `into`): a plain one, with no own `length` or `set` to mislead them, and not detached.
 */
export const isPlainFloat32 = (d) =>
  typedKind(d) === "Float32Array" &&
  Object.getPrototypeOf(d) === Float32Array.prototype &&
  !Object.hasOwn(d, "length") &&
  !Object.hasOwn(d, "set") &&
  !(typedLengthOf.call(d) === 0 && isDetached(typedBufferOf.call(d)));

// Turns an error result of the raw bindings into an AttnLensError.
export function unwrap(result) {
  if (result && result.errorCode !== undefined) throw new AttnLensError(result.errorCode, result.message);
  return result;
}
