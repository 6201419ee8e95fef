// Launches Debian's Chromium headless through playwright-core (docs/toolchain.md, "Browser tests").
import { after, before } from "node:test";
import { chromium } from "playwright-core";
import { serve } from "../../scripts/serve.mjs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * A headless Chromium with a fresh profile; close() also removes the profile. `options` are
 * Playwright context options (e.g. { hasTouch: true, isMobile: true, viewport } for a phone,
 * { javaScriptEnabled: false }).
 */
export async function launchBrowser(options = {}) {
  const profile = mkdtempSync(join(tmpdir(), "attnlens-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
    ...options,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens a page that records console errors, page errors and every request that leaves the
 * allowed origin (and blocks those requests).
 */
export async function openPage(context, allowedOrigin) {
  const page = await context.newPage();
  const problems = [];
  const outside = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console: ${msg.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(allowedOrigin) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    outside.push(url);
    return route.abort();
  });
  return { page, problems, outside };
}

/**
 * For a test file: serves the built demo site (dist/site, or the directory in ATTNLENS_SITE,
 * e.g. an older build to compare speeds with) and launches Chromium before its tests, and
 * stops both after. The returned object gets `server` and `browser`.
 */
export function useSite() {
  const site = {};
  before(async () => {
    site.server = await serve(process.env.ATTNLENS_SITE ?? new URL("../../dist/site", import.meta.url).pathname);
    site.browser = await launchBrowser();
  });
  after(async () => {
    await site.browser?.close();
    await site.server?.close();
  });
  return site;
}
