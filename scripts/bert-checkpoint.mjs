// Writes a BERT-shaped checkpoint folder with random weights, as Hugging Face publishes BERT
// (model.safetensors F32 with BertForMaskedLM's tensor names, config.json, vocab.txt and
// tokenizer_config.json), for tests and measurements where real weights cannot be downloaded.
// Presets: `tiny` (Google's BERT-Tiny: 2 layers, d 128, 2 heads) and `base` (bert-base-uncased:
// 12 layers, d 768, 12 heads, 30 522 tokens). The vocabulary is made up, in vocab.txt's layout:
// [PAD], [unused...], [UNK], [CLS], [SEP], [MASK], characters, the words of a small list and
// "##" pieces, filled with [unusedN] to the preset's size.
// RoBERTa presets write RobertaForMaskedLM's folder instead (roberta.* and lm_head.* tensors, a
// position table two rows longer than the tokens it holds, pad_token_id 1, vocab.json and
// merges.txt): `roberta-tiny` (BERT-Tiny's shapes) and `roberta-base` (roberta-base: 12 layers,
// d 768, 50 265 tokens). Their byte-level BPE is the shipped model's (models/attnlens/) with
// RoBERTa's <s>, <pad>, </s>, <unk> first and <mask> last, as roberta-base orders them.
//   node scripts/bert-checkpoint.mjs DIR [--preset tiny | base | roberta-tiny | roberta-base] [--seed S]
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cli, cliError, cliNumber } from "./cli.mjs";
import { writeRandomSafetensors } from "./gpt2-checkpoint.mjs";

export const BERT_PRESETS = Object.freeze({
  tiny: Object.freeze({ layers: 2, heads: 2, dModel: 128, intermediate: 512, context: 512, vocabSize: 30522 }),
  base: Object.freeze({ layers: 12, heads: 12, dModel: 768, intermediate: 3072, context: 512, vocabSize: 30522 }),
  // context: tokens; RoBERTa's table has two rows more (max_position_embeddings 514).
  "roberta-tiny": Object.freeze({ family: "roberta", layers: 2, heads: 2, dModel: 128, intermediate: 512, context: 512, vocabSize: 8197 }),
  "roberta-base": Object.freeze({
    family: "roberta",
    layers: 12,
    heads: 12,
    dModel: 768,
    intermediate: 3072,
    context: 512,
    vocabSize: 50265,
  }),
});

const SHIPPED_BPE = new URL("../models/attnlens/", import.meta.url);

/** vocab.json (as an object) and merges.txt's text of a RoBERTa-style byte-level BPE of `size`
 * tokens: <s> 0, <pad> 1, </s> 2, <unk> 3, the shipped model's tokens, <madeupN> fillers (never
 * produced: no merge makes them), and <mask> last. */
export function robertaVocabulary(size) {
  const shipped = JSON.parse(readFileSync(new URL("vocab.json", SHIPPED_BPE), "utf8"));
  const vocab = { "<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3 };
  let next = 4;
  for (const [token] of Object.entries(shipped).sort((a, b) => a[1] - b[1])) vocab[token] = next++;
  if (next + 1 > size) throw new Error(`a RoBERTa vocabulary needs at least ${next + 1} tokens; the preset has ${size}`);
  for (let i = 0; next < size - 1; i++) vocab[`<madeup${i}>`] = next++;
  vocab["<mask>"] = next;
  return { vocab, merges: readFileSync(new URL("merges.txt", SHIPPED_BPE), "utf8") };
}

/** The tensors of RobertaForMaskedLM for `config` (context: tokens, the table holds 2 more). */
export function robertaTensors(config) {
  const rename = ([name, shape]) => {
    if (name === "bert.embeddings.position_embeddings.weight") return [`roberta.${name.slice(5)}`, [config.context + 2, shape[1]]];
    if (name === "bert.embeddings.token_type_embeddings.weight") return [`roberta.${name.slice(5)}`, [1, shape[1]]];
    if (name.startsWith("bert.")) return [`roberta.${name.slice(5)}`, shape];
    const head = {
      "cls.predictions.transform.dense.weight": "lm_head.dense.weight",
      "cls.predictions.transform.dense.bias": "lm_head.dense.bias",
      "cls.predictions.transform.LayerNorm.weight": "lm_head.layer_norm.weight",
      "cls.predictions.transform.LayerNorm.bias": "lm_head.layer_norm.bias",
      "cls.predictions.bias": "lm_head.bias",
    }[name];
    return [head, shape];
  };
  return bertTensors(config).map(rename);
}

const WORDS = (
  "the of and to a in is it you that he was for on are with as i his they be at one have this from or had by hot word but what some " +
  "we can out other were all there when up use your how said an each she which do their time if will way about many then them write " +
  "would like so these her long make thing see him two has look more day could go come did number sound no most people my over know " +
  "water than call first who may down side been now find any new work part take get place made live where after back little only " +
  "round man year came show every good me give our under name very through just form sentence great think say help low line differ " +
  "turn cause much mean before move right boy old too same tell does set three want air well also play small end put home read hand " +
  "port large spell add even land here must big high such follow act why ask men change went light kind off need house picture try " +
  "us again animal point mother world near build self earth father head stand own page should country found answer school grow study " +
  "still learn plant cover food sun four between state keep eye never last let thought city tree cross farm hard start might story saw " +
  "far sea draw left late run don't while press close night real life few north open seem together next white children begin got walk " +
  "example ease paper group always music those both mark often letter until mile river car feet care second book carry took science " +
  "eat room friend began idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl usual young " +
  "ready above ever red list though feel talk bird soon body dog family direct pose leave song measure door product black short numeral " +
  "class wind question happen complete ship area half rock order fire south problem piece told knew pass since top whole king space " +
  "heard best hour better true during hundred five remember step early hold west ground interest reach fast verb sing listen six table " +
  "travel less morning ten simple several vowel toward war lay against pattern slow center love person money serve appear road map rain " +
  "rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark machine note wait plan figure star box noun " +
  "field rest correct able pound done beauty drive stood contain front teach week final gave green oh quick develop ocean warm free " +
  "minute strong special mind behind clear tail produce fact street inch multiply nothing course stay wheel full force blue object " +
  "decide surface deep moon island foot system busy test record boat common gold possible plane stead dry wonder laugh thousand ago " +
  "ran check game shape equate hot miss brought heat snow tire bring yes distant fill east paint language among tired mat sat cat"
).split(" ");

/** vocab.txt's lines for `size` tokens. */
export function bertVocabulary(size) {
  const tokens = ["[PAD]", ...Array.from({ length: 99 }, (_, i) => `[unused${i}]`), "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
  const seen = new Set(tokens);
  const add = (t) => {
    if (!seen.has(t) && tokens.length < size) {
      seen.add(t);
      tokens.push(t);
    }
  };
  for (let c = 33; c < 127; c++) add(String.fromCharCode(c).toLowerCase());
  for (const w of WORDS) add(w);
  for (const suffix of ["s", "ed", "ing", "ly", "er"]) {
    add(`##${suffix}`);
    for (const w of WORDS) add(`${w}${suffix}`);
  }
  for (let c = 97; c < 123; c++) add(`##${String.fromCharCode(c)}`);
  for (let i = 99; tokens.length < size; i++) add(`[unused${i}]`);
  return tokens;
}

/** The tensors of BertForMaskedLM for `config`: [name, shape], Linear weights [out, in]. */
export function bertTensors({ layers, dModel: d, intermediate: I, context, vocabSize: V }) {
  const t = [
    ["bert.embeddings.word_embeddings.weight", [V, d]],
    ["bert.embeddings.position_embeddings.weight", [context, d]],
    ["bert.embeddings.token_type_embeddings.weight", [2, d]],
    ["bert.embeddings.LayerNorm.weight", [d]],
    ["bert.embeddings.LayerNorm.bias", [d]],
  ];
  for (let i = 0; i < layers; i++) {
    const at = `bert.encoder.layer.${i}.`;
    for (const part of ["query", "key", "value"])
      t.push([`${at}attention.self.${part}.weight`, [d, d]], [`${at}attention.self.${part}.bias`, [d]]);
    t.push(
      [`${at}attention.output.dense.weight`, [d, d]],
      [`${at}attention.output.dense.bias`, [d]],
      [`${at}attention.output.LayerNorm.weight`, [d]],
      [`${at}attention.output.LayerNorm.bias`, [d]],
      [`${at}intermediate.dense.weight`, [I, d]],
      [`${at}intermediate.dense.bias`, [I]],
      [`${at}output.dense.weight`, [d, I]],
      [`${at}output.dense.bias`, [d]],
      [`${at}output.LayerNorm.weight`, [d]],
      [`${at}output.LayerNorm.bias`, [d]],
    );
  }
  t.push(
    ["cls.predictions.transform.dense.weight", [d, d]],
    ["cls.predictions.transform.dense.bias", [d]],
    ["cls.predictions.transform.LayerNorm.weight", [d]],
    ["cls.predictions.transform.LayerNorm.bias", [d]],
    ["cls.predictions.bias", [V]],
  );
  return t;
}

/** Writes the folder; returns model.safetensors' size in bytes. */
export function writeBertCheckpoint(dir, config, seed = 1) {
  mkdirSync(dir, { recursive: true });
  if (config.family === "roberta") return writeRobertaCheckpoint(dir, config, seed);
  const bytes = writeRandomSafetensors(join(dir, "model.safetensors"), bertTensors(config), {
    seed,
    writer: "attnlens scripts/bert-checkpoint.mjs",
    isGain: (name) => name.endsWith("LayerNorm.weight"),
  });
  const config_ = {
    architectures: ["BertForMaskedLM"],
    hidden_act: "gelu",
    hidden_size: config.dModel,
    intermediate_size: config.intermediate,
    layer_norm_eps: 1e-12,
    max_position_embeddings: config.context,
    model_type: "bert",
    num_attention_heads: config.heads,
    num_hidden_layers: config.layers,
    pad_token_id: 0,
    position_embedding_type: "absolute",
    type_vocab_size: 2,
    vocab_size: config.vocabSize,
  };
  writeFileSync(join(dir, "config.json"), JSON.stringify(config_, null, 2));
  writeFileSync(join(dir, "vocab.txt"), `${bertVocabulary(config.vocabSize).join("\n")}\n`);
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ do_lower_case: true, tokenizer_class: "BertTokenizer" }, null, 2));
  return bytes;
}

function writeRobertaCheckpoint(dir, config, seed) {
  const bytes = writeRandomSafetensors(join(dir, "model.safetensors"), robertaTensors(config), {
    seed,
    writer: "attnlens scripts/bert-checkpoint.mjs",
    isGain: (name) => name.endsWith("LayerNorm.weight") || name.endsWith("layer_norm.weight"),
  });
  // roberta-base's config.json, with the preset's sizes.
  const config_ = {
    architectures: ["RobertaForMaskedLM"],
    bos_token_id: 0,
    eos_token_id: 2,
    hidden_act: "gelu",
    hidden_size: config.dModel,
    intermediate_size: config.intermediate,
    layer_norm_eps: 1e-5,
    max_position_embeddings: config.context + 2,
    model_type: "roberta",
    num_attention_heads: config.heads,
    num_hidden_layers: config.layers,
    pad_token_id: 1,
    type_vocab_size: 1,
    vocab_size: config.vocabSize,
  };
  const { vocab, merges } = robertaVocabulary(config.vocabSize);
  writeFileSync(join(dir, "config.json"), JSON.stringify(config_, null, 2));
  writeFileSync(join(dir, "vocab.json"), JSON.stringify(vocab));
  writeFileSync(join(dir, "merges.txt"), merges);
  return bytes;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const usage = "usage: node scripts/bert-checkpoint.mjs DIR [--preset tiny | base | roberta-tiny | roberta-base] [--seed S]";
  const { values, positionals } = cli({
    usage,
    positionals: true,
    options: { preset: { type: "string", default: "tiny" }, seed: { type: "string" } },
  });
  const config = BERT_PRESETS[values.preset];
  if (!config) cliError(`--preset must be one of ${Object.keys(BERT_PRESETS).join(", ")}; got "${values.preset}"`, usage);
  if (positionals.length !== 1) cliError(`give one output folder; got ${positionals.length ? positionals.join(", ") : "none"}`, usage);
  const seed = cliNumber(values, "seed", { fallback: 1, integer: true, usage });
  const bytes = writeBertCheckpoint(positionals[0], config, seed);
  const files = config.family === "roberta" ? "config.json, vocab.json, merges.txt" : "config.json, vocab.txt, tokenizer_config.json";
  console.log(`wrote ${positionals[0]}/ (model.safetensors ${(bytes / 1e6).toFixed(1)} MB, ${files}): ${JSON.stringify(config)}`);
}
