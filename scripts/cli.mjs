// Command-line arguments for the repository's scripts and benchmarks: node:util's parseArgs with
// strict: true, so an unknown flag, a flag without its value or a stray positional is an error
// that names it and prints the usage (exit 2), and --help prints the usage (exit 0). `--name value`
// and `--name=value` both work.
//   const { values, positionals } = cli({ usage, options: { out: { type: "string" } }, positionals: 1 });
//   const rounds = cliNumber(values, "rounds", { min: 1, integer: true, usage });
import { parseArgs } from "node:util";
import { basename } from "node:path";

const script = () => basename(process.argv[1] ?? "script");

/** Exits 2 with `message` and the usage on stderr. */
export function cliError(message, usage) {
  console.error(`${script()}: ${message}${usage ? `\n${usage}` : ""}`);
  process.exit(2);
}

/**
 * Parses `argv` (default: the process's arguments). `positionals`: false (none allowed), a number
 * (at most that many) or true (any number). Adds --help / -h.
 * @returns {{ values: Record<string, string | boolean | undefined>, positionals: string[] }}
 */
export function cli({ usage, options = {}, positionals = false, argv = process.argv.slice(2) }) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals: positionals !== false,
      strict: true,
    });
  } catch (error) {
    cliError(error.message, usage);
  }
  if (parsed.values.help) {
    console.log(usage);
    process.exit(0);
  }
  if (typeof positionals === "number" && parsed.positionals.length > positionals)
    cliError(`unexpected argument '${parsed.positionals[positionals]}' (at most ${positionals} expected)`, usage);
  return parsed;
}

/**
 * values[name] as a number (or `fallback` when the flag is absent); anything else (not a number,
 * below `min`, above `max`, not whole when `integer`) is an error naming the flag (or `label`).
 */
export function cliNumber(values, name, { fallback, min = -Infinity, max = Infinity, integer = false, usage, label = `--${name}` } = {}) {
  const text = values[name];
  if (text === undefined) return fallback;
  const n = Number(text);
  const whole = integer ? " whole" : "";
  if (text.trim() === "" || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n)))
    cliError(
      `${label} ${JSON.stringify(text)}: expected a${whole} number` +
        (min > -Infinity ? ` ≥ ${min}` : "") +
        (max < Infinity ? ` ≤ ${max}` : ""),
      usage,
    );
  return n;
}

/** values[name] as comma-separated whole numbers ≥ 1 (e.g. --sizes=64,256), or `fallback` when absent. */
export function cliWholeList(values, name, fallback, usage) {
  const text = values[name];
  if (text === undefined) return fallback;
  const list = text.split(",").map(Number);
  if (!list.every((n) => Number.isInteger(n) && n >= 1))
    cliError(`--${name} ${JSON.stringify(text)}: expected whole numbers ≥ 1, comma-separated`, usage);
  return list;
}
