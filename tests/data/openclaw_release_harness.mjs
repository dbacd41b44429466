// Runs functions of the published openclaw@2026.9.6 package under node for memlab's
// differential tests. Usage: node openclaw_release_harness.mjs DIST < calls.json
// calls.json = [{"fn": name, "args": [...]}, ...]; prints a JSON list of results.
// The release's modules whose imports are unavailable (no node_modules) are read as
// text: each "//#region FILE" section named below is evaluated with the few helpers
// it references bound to the release's own small modules.
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";

const dist = process.argv[2];
// A needle resolves to the smallest module holding it (the helper's own file, not a
// bundle that uses it); modules whose name starts with the hint are read first.
const moduleFiles = fs.readdirSync(dist).filter((f) => f.endsWith(".mjs"));
const find = (needle, hint) => {
  for (const group of [moduleFiles.filter((f) => f.startsWith(hint)), moduleFiles]) {
    const hits = group.map((f) => path.join(dist, f))
      .filter((f) => fs.readFileSync(f, "utf8").includes(needle))
      .sort((a, b) => fs.statSync(a).size - fs.statSync(b).size);
    if (hits.length) return hits[0];
  }
  throw new Error(`no module of ${dist} contains ${needle}`);
};
const region = (file, name) => {
  const text = fs.readFileSync(file, "utf8");
  const start = text.indexOf(`//#region ${name}\n`);
  if (start < 0) throw new Error(`${file}: no region ${name}`);
  return text.slice(start, text.indexOf("//#endregion", start));
};
const mod = async (needle, hint) => import(find(needle, hint));
const qe = await mod("//#region packages/memory-host-sdk/src/host/query-expansion.ts", "query-expansion-");
const tk = await mod("//#region extensions/memory-core/src/memory/tokenize.ts", "tokenize-");
const sn = await mod("function normalizeStringEntriesLower(", "string-normalization-");
const sc = await mod("function normalizeLowercaseStringOrEmpty(", "string-coerce-");
const rx = await mod("function escapeRegExp(", "regexp-");
const pick = (m, name) => Object.values(m).find((v) => typeof v === "function" && v.name === name);

const search = find("//#region extensions/memory-core/src/memory/manager-search.ts", "manager-search-");
const runtime = path.join(dist, "extensions/memory-core/manager-runtime.js");
const sources = [
  region(search, "extensions/memory-core/src/memory/keyword-query.ts"),
  region(search, "extensions/memory-core/src/memory/manager-search.ts"),
  ...[
    "importance", "mmr", "project-ranking", "temporal-decay", "hybrid", "manager-hybrid-candidates",
    "manager-keyword-retrieval",
  ].map(
    (n) => region(runtime, `extensions/memory-core/src/memory/${n}.ts`),
  ),
].join("\n");
const helpers = {
  normalizeStringEntries: pick(sn, "normalizeStringEntries"),
  normalizeStringEntriesLower: pick(sn, "normalizeStringEntriesLower"),
  uniqueStrings: pick(sn, "uniqueStrings"),
  escapeRegExp: pick(rx, "escapeRegExp"),
  normalizeLowercaseStringOrEmpty: pick(sc, "normalizeLowercaseStringOrEmpty"),
  tokenize: pick(tk, "tokenize"),
  jaccardSimilarity: pick(tk, "jaccardSimilarity"),
  extractKeywords: pick(qe, "extractKeywords"),
  INVALID_PROJECT_ANNOTATION_KEY: "!invalid-project-annotation",
  MEMORY_INDEX_FTS_TABLE: "fts",
  MEMORY_INDEX_PATHS_FTS_TABLE: "paths_fts",
  MemoryProviderLifecycle: class {},
  createSubsystemLogger: () => ({ warn() {} }),
  fs$1: fsp,
  path,
};
const names = [
  "buildFtsQuery", "bm25RankToScore", "scoreFallbackKeywordResult", "normalizeSearchTokens",
  "literalSearchMatcher", "prepareExactPathMatcher", "planKeywordSearch", "importanceMultiplier",
  "mmrRerank", "projectScoreMultiplier", "applyProjectRanking", "prepareActiveProjectKeys",
  "applyTemporalDecayToScore", "parseMemoryDateFromPath", "isEvergreenMemoryPath",
  "mergeHybridResults", "selectHybridSearchResults", "MemoryKeywordRetrieval", "projectHybridCandidates",
];
const fns = new Function(...Object.keys(helpers), `${sources}\nreturn { ${names.join(", ")} };`)(
  ...Object.values(helpers),
);
const retrieval = Object.create(fns.MemoryKeywordRetrieval.prototype);
retrieval.settings = { store: { fts: { tokenizer: "unicode61" } } };
const api = {
  ...fns,
  extractKeywords: helpers.extractKeywords,
  mmrTokenize: (t) => [...helpers.tokenize(t)].sort(),
  keywordBoost: (query, p, text, ftsScore) => {
    const queryMatchers = helpers.uniqueStrings(fns.normalizeSearchTokens(query)).map((token) => ({
      word: fns.literalSearchMatcher(token, true),
      substring: fns.literalSearchMatcher(token),
    }));
    return fns.scoreFallbackKeywordResult({ queryMatchers, path: p, text, ftsScore });
  },
  pathSpecificity: (q, p) => fns.prepareExactPathMatcher(q)(p),
  projectMultiplier: (k, a) => fns.projectScoreMultiplier(k, fns.prepareActiveProjectKeys(a)),
  decayMultiplier: (age) => fns.applyTemporalDecayToScore({ score: 1, ageInDays: age, halfLifeDays: 30 }),
  dateFromPath: (p) => fns.parseMemoryDateFromPath(p)?.toISOString() ?? null,
  mmrOrder: (items, lambda) => fns.mmrRerank(items, { enabled: true, lambda }).map((x) => x.id),
  fallbackTerms: (q) => retrieval.resolveKeywordFallbackTerms(q),
  mergeKeywordHits: (sets, q, limit) =>
    retrieval.limitKeywordSearchHits(retrieval.mergeKeywordSearchHits(sets, q), limit),
  hybrid: async (p) => {
    const merged = await fns.mergeHybridResults({
      ...p, mmr: { enabled: true, lambda: 0.7 }, temporalDecay: { enabled: true, halfLifeDays: 30 },
      memorySourceMtimes: new Map(Object.entries(p.mtimes ?? {})),
    });
    return fns.selectHybridSearchResults({ merged, keyword: p.keyword, maxResults: p.maxResults, minScore: p.minScore })
      .map((e) => ({ path: e.path, startLine: e.startLine, score: e.score }));
  },
};
// The SQL of one keyword search (body rows by bm25 rank, the first chunk of each
// exact or lexical path), then the release's own code for everything after it.
const keywordSearch = (term, query, p) => {
  const chunks = [...p.chunks].sort((a, b) => a.startLine - b.startLine || a.endLine - b.endLine || (a.id < b.id ? -1 : 1));
  const first = new Map();
  for (const c of chunks) if (!first.has(c.path)) first.set(c.path, c);
  const byId = new Map(p.chunks.map((c) => [c.id, c]));
  const matchExact = fns.prepareExactPathMatcher(query);
  const row = (c, extra) => ({ id: c.id, path: c.path, startLine: c.startLine, endLine: c.endLine,
    source: "memory", snippet: c.text.slice(0, 700), ...extra });
  const ranks = p.bm25[term] ?? {};
  const body = Object.entries(ranks).sort((a, b) => a[1] - b[1]).slice(0, 200).map(([id, rank]) => {
    const c = byId.get(id);
    const textScore = fns.bm25RankToScore(rank);
    return row(c, { textScore, score: api.keywordBoost(query, c.path, c.text, textScore), hasBodyMatch: true, pathScore: 0 });
  });
  const exact = [...first.keys()].filter((path) => matchExact(path) > 0)
    .sort((a, b) => matchExact(b) - matchExact(a) || (a < b ? -1 : 1)).slice(0, 200);
  const pathHits = new Map(exact.map((path) => [path, row(first.get(path), { score: 0, textScore: 0, pathScore: 0,
    exactPathSpecificity: matchExact(path), hasBodyMatch: false })]));
  if (fns.buildFtsQuery(term)) {
    let extra = 0;
    const lexical = Object.entries(p.paths[term] ?? {}).filter(([path]) => first.has(path))
      .map(([path, rank]) => ({ path, pathScore: fns.bm25RankToScore(rank) }))
      .sort((a, b) => b.pathScore - a.pathScore || a.path.localeCompare(b.path));
    for (const { path, pathScore } of lexical) {
      const hit = pathHits.get(path);
      if (hit) { hit.pathScore = Math.max(hit.pathScore, pathScore); hit.score = Math.max(hit.score, pathScore); }
      else if (matchExact(path) === 0 && extra < 200) {
        pathHits.set(path, row(first.get(path), { score: pathScore, textScore: 0, pathScore, exactPathSpecificity: 0, hasBodyMatch: false }));
        extra += 1;
      }
    }
  }
  return retrieval.limitKeywordSearchHits(retrieval.mergeKeywordSearchHits([body, [...pathHits.values()]], query), 200);
};
const keywordLeg = (query, p) => {
  const full = keywordSearch(query, query, p);
  if (full.filter((r) => r.exactPathSpecificity === 0).length >= 200) return full;
  const terms = retrieval.resolveKeywordFallbackTerms(query);
  if (terms.length === 0) return full;
  if (full.length > 0 && fns.buildFtsQuery(query)?.toLowerCase() === fns.buildFtsQuery(terms.join(" "))?.toLowerCase()) return full;
  const sets = terms.map((t) => keywordSearch(t, query, p));
  return retrieval.limitKeywordSearchHits(retrieval.mergeKeywordSearchHits([full, ...sets], query), 200);
};
api.rankHits = async (query, p) => {
  const byId = new Map(p.chunks.map((c) => [c.id, c]));
  const meta = (r) => { const c = byId.get(r.id); return Object.assign(r, c.importance != null ? { importance: c.importance } : {},
    c.projectKey ? { projectKey: c.projectKey } : {}); };
  const keyword = keywordLeg(query, p).map(meta);
  const vector = Object.entries(p.vector).sort((a, b) => b[1] - a[1]).slice(0, 200).map(([id, score]) => {
    const c = byId.get(id);
    return meta({ id, path: c.path, startLine: c.startLine, endLine: c.endLine, source: "memory", snippet: c.text.slice(0, 700), score });
  });
  const window = p.active?.length ? 200 : Math.max(200, p.maxResults);
  const merged = await fns.mergeHybridResults({
    ...fns.projectHybridCandidates(query, vector, keyword), vectorWeight: 0.7, textWeight: 0.3,
    mmr: { enabled: true, lambda: 0.7 }, temporalDecay: { enabled: true, halfLifeDays: 30 },
    activeProjectKeys: p.active, nowMs: p.nowMs, memorySourceMtimes: new Map(Object.entries(p.mtimes ?? {})),
  });
  return fns.selectHybridSearchResults({ merged, keyword, maxResults: window, minScore: p.minScore }).slice(0, p.maxResults)
    .map((e) => ({ path: e.path, startLine: e.startLine, score: e.score }));
};
// Keyword-only mode (no provider): the release's finalizeKeywordOnlyResults, whose decay
// reads the wall clock, pinned here to nowMs.
api.rankKeywordOnly = async (query, p) => {
  const byId = new Map(p.chunks.map((c) => [c.id, c]));
  const results = keywordLeg(query, p).map((r) => {
    const c = byId.get(r.id);
    return Object.assign(r, { sourceMtime: p.mtimes?.[r.path] }, c.importance != null ? { importance: c.importance } : {},
      c.projectKey ? { projectKey: c.projectKey } : {});
  });
  const realNow = Date.now;
  Date.now = () => p.nowMs;
  retrieval.memoryFiles = {};
  try {
    const window = p.active?.length ? 200 : Math.max(200, p.maxResults);
    const out = await retrieval.finalizeKeywordOnlyResults({ results, temporalDecay: { enabled: true, halfLifeDays: 30 },
      maxResults: window, minScore: p.minScore, activeProjectKeys: p.active });
    return out.slice(0, p.maxResults).map((e) => ({ path: e.path, startLine: e.startLine, score: e.score }));
  } finally {
    Date.now = realNow;
  }
};
const calls = JSON.parse(fs.readFileSync(0, "utf8"));
const out = [];
for (const { fn, args } of calls) {
  if (!api[fn]) throw new Error(`harness has no function ${fn}`);
  const value = await api[fn](...args);
  out.push(value === undefined ? null : value);
}
process.stdout.write(JSON.stringify(out));
