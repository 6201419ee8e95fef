// The figure in words, for screen readers and anyone who prefers text: what each query attends
// to most, and for short sentences the whole matrix as a table. Rendered only when opened; each
// view's entry in index.js says which of these describes it.
import { html, nothing } from "lit";
import { headName, hiddenWord, isMasked, matrixOf, windowText } from "../figure-data.js";
import { formatValue } from "../text.js";

/** Sentences up to this many tokens also get the full matrix as a table. */
const TABLE_TOKENS = 24;

function strongest(row, n = 3) {
  return Array.from(row.keys())
    .sort((a, b) => row[b] - row[a])
    .slice(0, n);
}

/** The weights of `head` (or their mean) of one layer: each query's strongest keys, and short sentences' matrix. */
export function attentionText(data, head, layer) {
  const L = data.tokens.length;
  const m = matrixOf(data, layer, head);
  const tok = (k) => `“${data.tokens[k].text}”`;
  const which = head === "mean" ? `the mean of ${data.weights.shape[1]} heads` : headName(data, head);
  return html`<p>
      ${data.title}, ${which}, ${L} tokens.
      ${data.causal ? "Each token may attend only to itself and earlier tokens." : "Each token may attend to every token."}
      ${
        data.windows?.[layer]
          ? `This layer attends within a sliding window: each token sees itself and at most ${windowText(data, layer).reach}.`
          : ""
      }
      ${
        // Gemma 2 bends its scores before the softmax: a weight is not the softmax of q·k alone.
        data.source?.config?.scoreSoftcap
          ? `Its scores are soft-capped: each scaled score x becomes ${data.source.config.scoreSoftcap} · tanh(x / ${data.source.config.scoreSoftcap}) before the softmax.`
          : ""
      }
      Each row of weights sums to 1.
    </p>
    <ol>
      ${data.tokens.map((t, i) => {
        const row = m.subarray(i * L, (i + 1) * L);
        return html`<li>
          ${tok(i)} attends most to
          ${strongest(row)
            .map((j) => `${tok(j)} (${j + 1}) ${formatValue(row[j])}`)
            .join(", ")}
        </li>`;
      })}
    </ol>
    ${
      L <= TABLE_TOKENS
        ? html`<table>
            <caption>
              Weights of ${data.title.toLowerCase()}, ${which}: rows are queries, columns are keys
            </caption>
            <thead>
              <tr>
                <td></td>
                ${data.tokens.map((t, j) => html`<th scope="col">${j + 1} ${t.text}</th>`)}
              </tr>
            </thead>
            <tbody>
              ${data.tokens.map(
                (t, i) =>
                  html`<tr>
                    <th scope="row">${i + 1} ${t.text}</th>
                    ${data.tokens.map((_, j) => html`<td>${isMasked(data, i, j, layer) ? hiddenWord(data, i, j) : formatValue(m[i * L + j])}</td>`)}
                  </tr>`,
              )}
            </tbody>
          </table>`
        : nothing
    }`;
}

/** Where the PCA view puts each token before and after attention. */
export function pcaText(data) {
  const pca = data.explanation.pca;
  const moved = data.tokens.map((_, i) =>
    Math.hypot(pca.contextual.data[2 * i] - pca.original.data[2 * i], pca.contextual.data[2 * i + 1] - pca.original.data[2 * i + 1]),
  );
  return html`<p>
      ${data.title}: each token's input vector X and its vector after attention (X + output), projected on the first two principal
      components of X (${(pca.explained[0] * 100).toFixed(1)}% and ${(pca.explained[1] * 100).toFixed(1)}% of its variance).
    </p>
    <ol>
      ${data.tokens.map(
        (t, i) =>
          html`<li>
            “${t.text}”: from (${formatValue(pca.original.data[2 * i])}, ${formatValue(pca.original.data[2 * i + 1])}) to
            (${formatValue(pca.contextual.data[2 * i])}, ${formatValue(pca.contextual.data[2 * i + 1])}), moved ${formatValue(moved[i])}
          </li>`,
      )}
    </ol>`;
}

/** The every-step view's matrices, step by step (`model`: its stepsModel). */
export function stepsText(model) {
  return html`<p>${model.title}. Each matrix can be read cell by cell with the arrow keys after focusing it.</p>
    <ol>
      ${model.steps.map(
        (s) =>
          html`<li>
            ${s.caption}:
            ${s.variants
              .flatMap((v) => v.items.filter((i) => !i.op).map((i) => `${v.label ? `${v.label} ` : ""}${i.name} (${i.rows} × ${i.cols})`))
              .join("; ")}
          </li>`,
      )}
    </ol>`;
}
