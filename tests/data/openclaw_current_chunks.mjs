// Runs the functions of the published openclaw@2026.9.6 (dist/ given as argv[2]) on JSON cases from stdin;
// used by tests/test_openclaw_current_files.py. Module names are those of that release.
const dist = process.argv[2];
const mc = await import(dist + "/markdown-chunks-DYWd0D11.mjs");
const cjk = await import(dist + "/cjk-chars-6ld30jSx.mjs");
const ca = await import(dist + "/curated-annotations-DM9mz8Th.mjs");
const prepModule = await import(dist + "/manager-index-preparation-BEdGU4Rv.mjs");
const prepare = Object.values(prepModule).find((f) => f.name === "prepareMemoryIndexChunks");
let input = ""; for await (const c of process.stdin) input += c;
const cases = JSON.parse(input);
const out = cases.map((c) => {
  if (c.op === "est") return cjk.n(c.text);
  if (c.op === "chunk") return mc.n(c.text, { tokens: 400, overlap: 80, perEntry: c.perEntry }).map((x) => [x.text, x.startLine, x.endLine, x.entryStartLine ?? null, x.entryEndLine ?? null]);
  if (c.op === "split") return mc.i(c.text).map((e) => [e.startLine, e.endLine, e.text, e.kind]);
  if (c.op === "strip") return ca.a(c.text);
  if (c.op === "prep") {
    const r = prepare({ entry: { path: c.path }, source: "memory", content: c.text, pathClassification: { curatedRoot: c.curated, originClass: "agent" }, chunking: { tokens: 400, overlap: 80 } });
    return r.chunks.map((x) => [x.text, x.startLine, x.endLine, x.entryStartLine ?? null, x.entryEndLine ?? null, x.importance, x.triggers, x.projectKey, x.hash]);
  }
  if (c.op === "ann") { const m = ca.n({ curatedRoot: c.curated, projectScopeEligible: c.scope, sourceLines: c.lines }); return [m.importance, m.triggers, m.projectKey]; }
});
process.stdout.write(JSON.stringify(out));
