/**
 * Debian's headless Chromium driven by playwright-core, offline: a fresh profile per launch, no
 * background network, and every request the page makes recorded (a self-contained report makes none).
 *
 * @example
 * const page = await openPage(html, { width: 1400, height: 900 });
 * expect(page.requests).toEqual([]);
 * await page.close();
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import type { BrowserContext, Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface OpenedPage {
  readonly page: Page;
  /** URLs the page requested beyond its own file. */
  readonly requests: string[];
  /** Console messages of type error, and uncaught page errors. */
  readonly errors: string[];
  close(): Promise<void>;
}

/** Writes `html` to a temporary file and opens it at the given viewport. */
export async function openPage(
  html: string,
  viewport: { readonly width: number; readonly height: number },
): Promise<OpenedPage> {
  const dir = await mkdtemp(join(tmpdir(), "tailswarm-chromium-"));
  const file = join(dir, "page.html");
  await writeFile(file, html);
  const url = pathToFileURL(file).href;
  let context: BrowserContext | undefined;
  try {
    // A fresh --user-data-dir: playwright passes the directory given here as that flag.
    context = await chromium.launchPersistentContext(join(dir, "profile"), {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const requests: string[] = [];
    const errors: string[] = [];
    page.on("request", (r) => {
      if (r.url() !== url) requests.push(r.url());
    });
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(url, { waitUntil: "load" });
    const c = context;
    return {
      page,
      requests,
      errors,
      async close() {
        await c.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await context?.close();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}
