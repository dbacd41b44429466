// Runs the published openclaw@2026.9.6 package's memory_get window (read-file-shared.ts,
// buildMemoryReadResult) under node for memlab's differential test of
// memlab.tools.release.read_window. Usage: node HARNESS DIST < cases.json
// cases.json = [{content, relPath, from?, lines?, maxChars?, suggestReadFallback?}, ...];
// prints a JSON list of results. The region is read as text from the release's module
// and evaluated with the two helpers it uses, imported from the release's own small modules.
import fs from "node:fs";
import path from "node:path";

const dist = process.argv[2];
const files = fs.readdirSync(dist).filter((f) => f.endsWith(".mjs"));
const holding = (needle, prefix) =>
  path.join(
    dist,
    files.filter((f) => f.startsWith(prefix)).find((f) => fs.readFileSync(path.join(dist, f), "utf8").includes(needle)),
  );
const pick = (m, name) => Object.values(m).find((v) => typeof v === "function" && v.name === name);
const num = await import(holding("function resolveIntegerOption(", "number-coercion-"));
const utf = await import(holding("function truncateUtf16Safe(", "utf16-slice-"));
const name = "packages/memory-host-sdk/src/host/read-file-shared.ts";
const text = fs.readFileSync(holding(`//#region ${name}`, "read-file-"), "utf8");
const start = text.indexOf(`//#region ${name}`);
const body = text.slice(start, text.indexOf("//#endregion", start));
const build = new Function(
  "resolveIntegerOption",
  "truncateUtf16Safe",
  `${body}\nreturn buildMemoryReadResult;`,
)(pick(num, "resolveIntegerOption"), pick(utf, "truncateUtf16Safe"));
const cases = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(cases.map((c) => build(c))));
