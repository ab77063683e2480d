/**
 * The client against the contract: every route of openapi.json has a method (the route
 * table names it), and the types in src/schema.ts are what openapi-typescript generates
 * from openapi.json now, so that a field the API adds or renames fails the type check.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ROUTES, TallyClient } from "../src/index.js";

const PACKAGE = fileURLToPath(new URL("../..", import.meta.url));
const OPENAPI = join(PACKAGE, "..", "..", "openapi.json");

test("every route of openapi.json has a method, and every method a route", () => {
  const document = JSON.parse(readFileSync(OPENAPI, "utf8")) as { paths: Record<string, Record<string, unknown>> };
  const served = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of Object.keys(item)) {
      if (["get", "post", "put", "patch", "delete"].includes(method)) {
        served.add(`${method.toUpperCase()} ${path}`);
      }
    }
  }
  const declared = new Set(Object.values(ROUTES).map((r) => `${r.method} ${r.path}`));
  assert.deepEqual([...served].filter((r) => !declared.has(r)), [], "routes without a method");
  assert.deepEqual([...declared].filter((r) => !served.has(r)), [], "methods without a route");
  assert.equal(declared.size, Object.keys(ROUTES).length, "one route per method");
  for (const name of Object.keys(ROUTES)) {
    assert.equal(typeof (TallyClient.prototype as unknown as Record<string, unknown>)[name], "function", name);
  }
});

test("src/schema.ts is what `npm run generate` makes of openapi.json now", () => {
  const out = join(mkdtempSync(join(tmpdir(), "tally-schema-")), "schema.ts");
  const scripts = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")).scripts as Record<string, string>;
  const [tool, ...args] = scripts.generate!.split(" ");
  execFileSync(join(PACKAGE, "node_modules", ".bin", tool!), args.map((a) => (a === "src/schema.ts" ? out : a)), {
    cwd: PACKAGE,
    stdio: "ignore",
  });
  const committed = readFileSync(join(PACKAGE, "src", "schema.ts"), "utf8");
  assert.ok(
    readFileSync(out, "utf8") === committed,
    "src/schema.ts differs from openapi.json: run `npm run generate` in clients/typescript",
  );
});
