// Drives Debian's Chromium (headless, a fresh profile, no network of its own) through the
// browser verifier on a real drawn draw:
//
//   node web/test/verify-page.mjs API_URL DRAW_ID FILES_DIR PAGE_FILE
//
// FILES_DIR holds the draw's answers (winners.json, eligible.json, draw.json,
// networks.json) and tampered copies (winners-seed.json, winners-winner.json,
// winners-instant.json, eligible-list.json). Checks that the page served at
// API_URL/verify passes every step from the API (instant wins included) but skips step
// `frozen` unless given the draw as kept from the close, tells whether a ticket was in the
// draw, turns red at the right step for each tampered file, and that the file PAGE_FILE,
// opened from disk, checks the draw offline. Prints "verify page: N
// passed, M failed" and exits 1 if any failed.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer from "puppeteer-core";

const [api, drawId, dir, pageFile] = process.argv.slice(2);
const networks = readFileSync(join(dir, "networks.json"), "utf8");
const winners = JSON.parse(readFileSync(join(dir, "winners.json"), "utf8"));
const profile = mkdtempSync(join(tmpdir(), "tally-chromium-"));
const browser = await puppeteer.launch({
  executablePath: "/usr/bin/chromium",
  headless: false,
  userDataDir: profile,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run"],
});

let passed = 0;
let failed = 0;
function expect(name, condition, detail) {
  if (condition) {
    passed += 1;
    console.log("verify page " + name + " ... ok");
  } else {
    failed += 1;
    console.log("verify page " + name + " ... FAILED: " + detail);
  }
}

// A page that may reach only `allowed` origins; every other request is refused and named.
async function openPage(url, allowed) {
  const page = await browser.newPage();
  const refused = [];
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const target = request.url();
    if (allowed.some((prefix) => target.startsWith(prefix))) {
      request.continue();
    } else {
      refused.push(target);
      request.abort();
    }
  });
  await page.goto(url, { waitUntil: "load" });
  return { page, refused };
}

async function verdict(page) {
  await page.waitForFunction(
    () => document.getElementById("verdict").dataset.outcome !== "none", { timeout: 60000 });
  return page.evaluate(() => ({
    outcome: document.getElementById("verdict").dataset.outcome,
    said: document.getElementById("verdict").textContent,
    steps: [...document.querySelectorAll("li.step")].map((s) => ({
      id: s.dataset.id, outcome: s.dataset.outcome, text: s.textContent })),
  }));
}

async function lookUp(page, ticket) {
  await page.$eval("#ticket", (input, value) => { input.value = value; }, String(ticket));
  await page.click("#ticket-check");
  return page.$eval("#ticket-result", (r) => r.textContent);
}

async function checkFiles(page, winnersFile, eligibleFile, drawFile) {
  await page.$eval("#networks", (area, text) => { area.value = text; }, networks);
  await (await page.$("#winners-file")).uploadFile(join(dir, winnersFile));
  await (await page.$("#eligible-file")).uploadFile(join(dir, eligibleFile));
  if (drawFile) await (await page.$("#draw-file")).uploadFile(join(dir, drawFile));
  await page.click("#files-check");
  return verdict(page);
}

const expectedSteps = ["commitment", "eligible", "frozen", "network", "round", "signature",
  "pick", "prizes", "instant"];

async function checkApi(page, drawFile) {
  await page.$eval("#draw-id", (input, id) => { input.value = id; }, drawId);
  await page.$eval("#networks", (area, text) => { area.value = text; }, networks);
  if (drawFile) await (await page.$("#draw-file")).uploadFile(join(dir, drawFile));
  await page.click("#fetch-check");
  return verdict(page);
}

try {
  // From the API with the draw as kept from the close, as a ticket holder would: every
  // step passes.
  const kept = await openPage(api + "/verify", [api]);
  const checked = await checkApi(kept.page, "draw.json");
  const ids = new Set(checked.steps.map((s) => s.id));
  expect("passes every step from the API with the kept draw",
    checked.outcome === "pass" && checked.steps.every((s) => s.outcome === "pass")
      && expectedSteps.every((id) => ids.has(id)),
    JSON.stringify(checked.steps));
  await kept.page.close();

  // From the API alone: today's draw answer is no answer kept from the close.
  const { page, refused } = await openPage(api + "/verify", [api]);
  const fromApi = await checkApi(page, null);
  const frozen = fromApi.steps.find((s) => s.id === "frozen");
  expect("skips the close's step from the API alone, and says so",
    fromApi.outcome === "pass" && frozen && frozen.outcome === "skip"
      && fromApi.steps.every((s) => s.outcome === "pass" || s.id === "frozen")
      && fromApi.said.includes("without the draw as you kept it"),
    JSON.stringify(fromApi));
  const winner = winners.prizes[0];
  const said = await lookUp(page, winner.ticket);
  expect("finds a winning ticket in the draw",
    said.includes("was in the draw") && said.includes("prize " + winner.prize), said);
  const eligible = JSON.parse(readFileSync(join(dir, "eligible.json"), "utf8"));
  const bitmap = Buffer.from(eligible.bitmap, "base64");
  let outside = 1;
  while ((bitmap[(outside - 1) >> 3] >> ((outside - 1) & 7)) & 1) outside += 1;
  const absent = await lookUp(page, outside);
  expect("says a ticket not in the list was not in the draw",
    absent.includes("was not in the draw"), absent);
  expect("loads nothing but the API", refused.length === 0, refused.join(", "));
  await page.close();

  // Tampered answers turn the page red at the right step.
  for (const [name, winnersFile, eligibleFile, step] of [
    ["a tampered seed", "winners-seed.json", "eligible.json", "commitment"],
    ["a tampered winner", "winners-winner.json", "eligible.json", "pick"],
    ["a moved instant win", "winners-instant.json", "eligible.json", "instant"],
    ["a tampered list", "winners.json", "eligible-list.json", "eligible"],
  ]) {
    const { page } = await openPage(api + "/verify", [api]);
    const result = await checkFiles(page, winnersFile, eligibleFile, "draw.json");
    const first = result.steps.find((s) => s.outcome === "fail");
    expect(name + " fails at " + step,
      result.outcome === "fail" && first && first.id === step, JSON.stringify(result.steps));
    await page.close();
  }

  // The page as a file on disk, with no server: it checks the saved answers offline.
  const offline = await openPage("file://" + pageFile, ["file://"]);
  const fromDisk = await checkFiles(offline.page, "winners.json", "eligible.json", "draw.json");
  expect("checks saved answers offline from a file",
    fromDisk.outcome === "pass" && offline.refused.length === 0,
    JSON.stringify(fromDisk.steps) + offline.refused.join(", "));
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log("verify page: " + passed + " passed, " + failed + " failed");
process.exit(failed === 0 ? 0 : 1);
