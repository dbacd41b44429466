// Runs the published openclaw@2026.9.6 doctor migration of retired QMD settings
// ("runtime.memory-qmd-retired") under node, for memlab's differential test of
// memlab.config.qmd.doctor_migration. Usage: node openclaw_qmd_doctor_harness.mjs DIST
// < configs.json (a JSON list of openclaw.json objects); prints a JSON list of
// {raw, changes}: each config as the migration leaves it and the changes it reports.
// The modules whose imports are unavailable (no node_modules) are read as text: the
// "//#region FILE" sections named below are evaluated with the few helpers they use.
import fs from "node:fs";
import path from "node:path";

const dist = process.argv[2];
const moduleFiles = fs.readdirSync(dist).filter((f) => f.endsWith(".mjs"));
const find = (needle) => {
  const hits = moduleFiles.map((f) => path.join(dist, f))
    .filter((f) => fs.readFileSync(f, "utf8").includes(needle))
    .sort((a, b) => fs.statSync(a).size - fs.statSync(b).size);
  if (!hits.length) throw new Error(`no module of ${dist} contains ${needle}`);
  return hits[0];
};
const region = (name) => {
  const file = find(`//#region ${name}\n`);
  const text = fs.readFileSync(file, "utf8");
  const start = text.indexOf(`//#region ${name}\n`);
  return text.slice(start, text.indexOf("//#endregion", start));
};
const pick = (m, name) => Object.values(m).find((v) => typeof v === "function" && v.name === name);
const rc = await import(find("//#region packages/normalization-core/src/record-coerce.ts"));
const pk = await import(find("function isBlockedObjectKey("));
const mm = await import(find("function mergeMissing("));
const source = [
  region("src/config/legacy.shared.ts"),
  region("src/commands/doctor/shared/legacy-config-record-shared.ts"),
  region("packages/memory-host-sdk/src/host/config-utils.ts"),
  region("src/commands/doctor/shared/legacy-config-migrations.runtime.retired-memory-qmd.ts"),
].join("\n");
const migration = new Function(
  "isRecord", "isBlockedObjectKey", "mergeMissing",
  `${source}\nreturn LEGACY_CONFIG_MIGRATION_RUNTIME_MEMORY_QMD;`,
)(pick(rc, "isRecord"), pick(pk, "isBlockedObjectKey"), pick(mm, "mergeMissing"));
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map((raw) => {
  const changes = [];
  migration.apply(raw, changes);
  return { raw, changes };
});
process.stdout.write(JSON.stringify(out));
