// What a line costs the canvas in headless Chromium (no GPU: Skia rasterises on the CPU), the
// measure behind web/paint.js's thick lines: 300 px segments drawn on one 700 × 700 canvas, then
// a pixel read back (which waits for the raster); medians of 9.
//   node bench/line-cost.mjs
import { launchBrowser } from "../tests/support/browser.mjs";

const browser = await launchBrowser();
try {
  const page = await browser.context.newPage();
  await page.setContent("<canvas id=c width=700 height=700></canvas>");
  const rows = await page.evaluate(() => {
    const c = document.getElementById("c").getContext("2d");
    // `lines` segments in `paths` paths of one colour each; "pairs" draws each as two 1 px lines
    // 1 px apart (web/paint.js), "quads" as filled quadrilaterals, "stroke" as one stroke.
    const run = (lines, paths, width, alpha, how = "stroke") => {
      const times = [];
      for (let rep = 0; rep < 9; rep++) {
        c.clearRect(0, 0, 700, 700);
        c.getImageData(0, 0, 1, 1);
        const t = performance.now();
        const per = Math.ceil(lines / paths);
        let n = 0;
        for (let p = 0; p < paths; p++) {
          c.globalAlpha = alpha;
          c.strokeStyle = c.fillStyle = `hsl(${p * 37},70%,50%)`;
          c.lineWidth = how === "stroke" ? width : 1;
          c.beginPath();
          for (let k = 0; k < per && n < lines; k++, n++) {
            const [x1, y1, x2, y2] = [50, ((n * 7919) % 560) + 50, 350, ((n * 104729) % 560) + 50];
            const length = Math.hypot(x2 - x1, y2 - y1);
            const [nx, ny] = [(-(y2 - y1) / length) * (width / 2), ((x2 - x1) / length) * (width / 2)];
            if (how === "quads") {
              c.moveTo(x1 + nx, y1 + ny);
              c.lineTo(x2 + nx, y2 + ny);
              c.lineTo(x2 - nx, y2 - ny);
              c.lineTo(x1 - nx, y1 - ny);
              c.closePath();
            } else if (how === "pairs") {
              c.moveTo(x1 + nx / 2, y1 + ny / 2);
              c.lineTo(x2 + nx / 2, y2 + ny / 2);
              c.moveTo(x1 - nx / 2, y1 - ny / 2);
              c.lineTo(x2 - nx / 2, y2 - ny / 2);
            } else {
              c.moveTo(x1, y1);
              c.lineTo(x2, y2);
            }
          }
          if (how === "quads") c.fill();
          else c.stroke();
        }
        c.getImageData(0, 0, 1, 1);
        times.push(performance.now() - t);
      }
      return times.sort((a, b) => a - b)[4];
    };
    return [
      ["200 lines of 2 px, 20 paths, stroked", run(200, 20, 2, 0.3)],
      ["the same in one path", run(200, 1, 2, 0.3)],
      ["the same as filled quadrilaterals", run(200, 20, 2, 0.3, "quads")],
      ["the same as pairs of 1 px lines (web/paint.js)", run(200, 20, 2, 0.3, "pairs")],
      ["200 lines of 1 px, 20 paths", run(200, 20, 1, 0.3)],
      ["3 000 lines of 1 px, 240 paths, opacity 0.08", run(3000, 240, 1, 0.08)],
    ];
  });
  console.log("300 px lines on a canvas in headless Chromium, to the rasterised pixels; medians of 9");
  for (const [name, ms] of rows) console.log(`${name.padEnd(52)}${ms.toFixed(1).padStart(7)} ms`);
} finally {
  await browser.close();
}
