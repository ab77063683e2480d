/**
 * The seed flows' examples against a running Tally, where it matters that they run as
 * written: the sell-out's check with a listing moments behind.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { counts, dynamodbFault, grown } from "./world.js";

const SELL_OUT = fileURLToPath(new URL("../examples/sell-out.js", import.meta.url));

test("the sell-out's check reads on their own the sales a listing moments behind leaves out", async () => {
  // Every index page of the listing (one a stripe at least: the example's draw has 8) lacks its newest purchase.
  await dynamodbFault({ operation: "Query", kind: "hide_last", count: 8, holding: "#PURCHASES#" });
  const before = await counts();
  const { stdout } = await promisify(execFile)(process.execPath, [SELL_OUT, "2", "40"]);
  assert.match(stdout, /2 processes sold 40 tickets in \d+ purchases; check passed/);
  assert.ok((grown(before, await counts())["dynamodb.hidden.Query"] ?? 0) >= 1, "the listing left nothing out");
});
