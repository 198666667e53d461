// Compares a conformance run with the checked-in expected failures.
//
//   node compare.mjs <results-dir> <expected-failures.txt> <ran-scenarios.txt> [--markdown FILE]
//
// <results-dir> is the suite's `-o` directory (one `server-<scenario>-<timestamp>/checks.json` per
// scenario); <ran-scenarios.txt> lists the scenarios that were run, one per line. A scenario fails
// when any of its checks is FAILURE or WARNING (the suite's own baseline rule), or when it left no
// checks.json. Exit 1 when a scenario fails that is not listed, or a listed one passes (the list
// only shrinks), or the list names a scenario this suite does not have; else 0.
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
let markdownFile = null;
const mdAt = args.indexOf('--markdown');
if (mdAt !== -1) {
  markdownFile = args[mdAt + 1];
  args.splice(mdAt, 2);
}
const [resultsDir, expectedFile, ranFile, knownFile] = args;
if (!resultsDir || !expectedFile || !ranFile) {
  console.error('usage: compare.mjs <results-dir> <expected-failures.txt> <ran-scenarios.txt> [<all-scenarios.txt>] [--markdown FILE]');
  process.exit(2);
}

const lines = (file) =>
  fs.readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

// expected-failures.txt: scenario names; `#` lines are comments (the reason of the next entry).
const expected = new Map(); // name -> reason
{
  let comment = [];
  for (const raw of fs.readFileSync(expectedFile, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line) { comment = []; continue; }
    if (line.startsWith('#')) { comment.push(line.replace(/^#\s?/, '')); continue; }
    const name = line.split(/\s+/)[0];
    if (expected.has(name)) {
      console.error(`expected-failures: ${name} is listed twice`);
      process.exit(2);
    }
    expected.set(name, comment.join(' '));
  }
}
const ran = lines(ranFile);
const known = knownFile ? new Set(lines(knownFile)) : null;

// Newest checks.json per scenario.
const checksOf = new Map();
for (const entry of fs.readdirSync(resultsDir).sort()) {
  const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
  if (!m) continue;
  const file = path.join(resultsDir, entry, 'checks.json');
  if (fs.existsSync(file)) checksOf.set(m[1], JSON.parse(fs.readFileSync(file, 'utf8')));
}

const rows = [];
for (const scenario of ran) {
  const checks = checksOf.get(scenario);
  let passed;
  let detail;
  if (!checks) {
    passed = false;
    detail = 'no checks.json (the scenario did not run to completion)';
  } else {
    const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    passed = bad.length === 0;
    const ok = checks.filter((c) => c.status === 'SUCCESS').length;
    detail = passed
      ? `${ok} check(s) passed`
      : bad.map((c) => `${c.id}: ${c.status}${c.errorMessage ? ` - ${c.errorMessage}` : ''}`).join('; ');
  }
  const listed = expected.has(scenario);
  let verdict;
  if (passed && !listed) verdict = 'pass';
  else if (!passed && listed) verdict = 'expected failure';
  else if (!passed && !listed) verdict = 'UNEXPECTED FAILURE';
  else verdict = 'STALE: passes but listed';
  rows.push({ scenario, passed, listed, verdict, detail });
}

const problems = [];
for (const r of rows) {
  if (r.verdict === 'UNEXPECTED FAILURE') problems.push(`unexpected failure: ${r.scenario} (${r.detail})`);
  if (r.verdict.startsWith('STALE')) problems.push(`now passes, remove it from ${path.basename(expectedFile)}: ${r.scenario}`);
}
if (known) {
  for (const name of expected.keys()) {
    if (!known.has(name)) problems.push(`expected-failures.txt names an unknown scenario: ${name}`);
  }
}
const notRun = [...expected.keys()].filter((n) => !ran.includes(n) && (!known || known.has(n)));

const width = Math.max(...rows.map((r) => r.scenario.length), 8);
console.log('\nscenario'.padEnd(width + 3) + 'result');
for (const r of rows) {
  const mark = r.verdict === 'pass' ? 'ok  ' : r.verdict === 'expected failure' ? 'xf  ' : '!!  ';
  console.log(`${mark}${r.scenario.padEnd(width)}  ${r.verdict}${r.passed ? '' : `  [${r.detail}]`}`);
}
const count = (v) => rows.filter((r) => r.verdict === v).length;
console.log(
  `\n${rows.length} scenarios: ${count('pass')} passed, ${count('expected failure')} expected failures, ` +
    `${problems.length} problem(s)`,
);
if (notRun.length) {
  const shown = notRun.length > 6 ? `${notRun.slice(0, 6).join(', ')}, ... (${notRun.length} in all)` : notRun.join(', ');
  console.log(`listed but not run in this invocation: ${shown}`);
}

if (markdownFile) {
  const md = [
    '| scenario | result | details |',
    '| --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| \`${r.scenario}\` | ${r.passed ? 'pass' : 'fail'}${r.listed ? ' (expected)' : ''} | ` +
        `${(r.passed ? r.detail : r.detail).replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`,
    ),
  ];
  fs.writeFileSync(markdownFile, md.join('\n') + '\n');
}

if (problems.length) {
  console.log('\nFAILED:');
  for (const p of problems) console.log(`  ${p}`);
  process.exit(1);
}
console.log(`OK: the results match ${path.basename(expectedFile)}`);
