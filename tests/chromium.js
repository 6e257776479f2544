// Debian's Chromium, driven by playwright-core, as the browser tests launch it: headless, in a
// fresh profile, with the flags this machine's closed network needs (no background
// connections), browsing as `userAgent` — by default a desktop visitor's, since headless
// Chromium's own (HeadlessChrome) is a bot to the core and bots get every deferred section at
// once. SITEFILE_PLAYWRIGHT names the playwright-core package and CHROMIUM the browser.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

/** A desktop visitor's user agent. */
const DESKTOP_USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36";

/** Launches a browser context; close it when done. */
function launchChromium({ userAgent = DESKTOP_USER_AGENT } = {}) {
  const playwright = process.env.SITEFILE_PLAYWRIGHT;
  const executablePath = process.env.CHROMIUM;
  if (!playwright || !executablePath) throw new Error("SITEFILE_PLAYWRIGHT and CHROMIUM must be set");
  const { chromium } = require(playwright);
  return chromium.launchPersistentContext(fs.mkdtempSync(path.join(os.tmpdir(), "sitefile-chromium-")), {
    executablePath,
    headless: true,
    userAgent,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

module.exports = { DESKTOP_USER_AGENT, launchChromium };
