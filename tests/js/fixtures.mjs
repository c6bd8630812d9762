// The library's numbers for the JavaScript tests, written by
//
//   .venv/bin/python tools/js_fixtures.py _build/js-fixtures
//
// (make test-js does it first).  ATTENTION_JS_FIXTURES names another folder (default
// _build/js-fixtures, from the repository's root).  Not a test file itself: node --test runs
// only the *.test.mjs files beside it.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const FOLDER = path.resolve(
  process.env.ATTENTION_JS_FIXTURES ?? `${ROOT}/_build/js-fixtures`,
);

const cache = new Map();

/** The fixture file `name` ("runs.json"), read once. */
export function fixture(name) {
  if (!cache.has(name)) {
    const file = path.join(FOLDER, name);
    if (!fs.existsSync(file)) {
      throw new Error(`no fixture ${file}: run .venv/bin/python tools/js_fixtures.py ${FOLDER}`);
    }
    cache.set(name, JSON.parse(fs.readFileSync(file, "utf8")));
  }
  return cache.get(name);
}
