// Writes a BERT-shaped checkpoint folder with random weights, as Hugging Face publishes BERT
// (model.safetensors F32 with BertForMaskedLM's tensor names, config.json, vocab.txt and
// tokenizer_config.json), for tests and measurements where real weights cannot be downloaded.
// Presets: `tiny` (Google's BERT-Tiny: 2 layers, d 128, 2 heads) and `base` (bert-base-uncased:
// 12 layers, d 768, 12 heads, 30 522 tokens). The vocabulary is made up, in vocab.txt's layout:
// [PAD], [unused...], [UNK], [CLS], [SEP], [MASK], characters, the words of a small list and
// "##" pieces, filled with [unusedN] to the preset's size.
//   node scripts/bert-checkpoint.mjs DIR [--preset tiny | base] [--seed S]
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cli, cliError, cliNumber } from "./cli.mjs";
import { writeRandomSafetensors } from "./gpt2-checkpoint.mjs";

export const BERT_PRESETS = Object.freeze({
  tiny: Object.freeze({ layers: 2, heads: 2, dModel: 128, intermediate: 512, context: 512, vocabSize: 30522 }),
  base: Object.freeze({ layers: 12, heads: 12, dModel: 768, intermediate: 3072, context: 512, vocabSize: 30522 }),
});

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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const usage = "usage: node scripts/bert-checkpoint.mjs DIR [--preset tiny | base] [--seed S]";
  const { values, positionals } = cli({
    usage,
    positionals: true,
    options: { preset: { type: "string", default: "tiny" }, seed: { type: "string" } },
  });
  const config = BERT_PRESETS[values.preset];
  if (!config) cliError(`--preset must be "tiny" or "base"; got "${values.preset}"`, usage);
  if (positionals.length !== 1) cliError(`give one output folder; got ${positionals.length ? positionals.join(", ") : "none"}`, usage);
  const seed = cliNumber(values, "seed", { fallback: 1, integer: true, usage });
  const bytes = writeBertCheckpoint(positionals[0], config, seed);
  console.log(
    `wrote ${positionals[0]}/ (model.safetensors ${(bytes / 1e6).toFixed(1)} MB, config.json, vocab.txt, tokenizer_config.json): ${JSON.stringify(config)}`,
  );
}
