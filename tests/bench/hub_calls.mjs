// Benchmark driver for capa-bench: the same guest code through two code-mode hubs (ours and
// Executor's daemon), from the official TypeScript SDK 1.x client over Streamable HTTP. Each hub
// has the same stdio upstream (../shared/peers/executor/bench-mcp-server.mjs: `echo`, and
// `sleep10` which answers after 10 ms); only the path to its tools differs (`bench.echo` in ours,
// `tools.bench.org.default.echo` in Executor's). Prints JSON of the samples (µs) on stdout;
// nothing is asserted.
//
//   node tests/bench/hub_calls.mjs <url> <tools path> <rounds> <calls per run>   (token in $CAPA_BENCH_TOKEN)
//
// Each round, after a warm-up round: an `execute` of `return 1` (the empty run), one whose code
// awaits `echo` <calls per run> times in a row, and one that awaits `Promise.all` of 40 `sleep10`
// calls. An awaited call's cost is (the run of calls − the empty run) / calls.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const WARM_UP = 1;
const FAN_OUT = 40;

const [url, tools, roundsArg, callsArg] = process.argv.slice(2);
const rounds = Number(roundsArg);
const calls = Number(callsArg);
if (!url || !/^[A-Za-z_$][\w$.]*$/.test(tools ?? '') || !(rounds > 0) || !(calls > 0)) {
  console.error('usage: hub_calls.mjs <url> <tools path> <rounds> <calls per run>');
  process.exit(2);
}

const token = process.env.CAPA_BENCH_TOKEN;
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
});
const client = new Client({ name: 'capa-bench-hub-calls', version: '1.0.0' }, { capabilities: {} });
await client.connect(transport);

const empty = 'return 1';
const awaited = `for (let i = 0; i < ${calls}; i++) await ${tools}.echo({ x: i }); return ${calls};`;
const fanOut = `const all = await Promise.all(Array.from({ length: ${FAN_OUT} }, (_, i) => ${tools}.sleep10({ x: i }))); return all.length;`;

// Both hubs answer `execute` with a structured result whose `status` says how the run ended
// (ours `completed`; Executor's `completed` too). Anything else is a failed measurement: a paused
// or failed run would time something other than the calls.
async function execute(code, expected) {
  const result = await client.callTool({ name: 'execute', arguments: { code } }, undefined, { timeout: 600_000 });
  const structured = result.structuredContent ?? {};
  const value = structured.result;
  if (structured.status !== 'completed' || value !== expected) {
    throw new Error(`execute of ${JSON.stringify(code)} did not complete with ${expected}: ${JSON.stringify(result).slice(0, 600)}`);
  }
}

async function timed(code, expected) {
  const started = process.hrtime.bigint();
  await execute(code, expected);
  return Number(process.hrtime.bigint() - started) / 1000;
}

for (let i = 0; i < WARM_UP; i++) {
  await execute(empty, 1);
  await execute(awaited, calls);
  await execute(fanOut, FAN_OUT);
}
const samples = { empty: [], awaited: [], fanOut: [] };
for (let i = 0; i < rounds; i++) {
  samples.empty.push(await timed(empty, 1));
  samples.awaited.push(await timed(awaited, calls));
  samples.fanOut.push(await timed(fanOut, FAN_OUT));
}
process.stdout.write(`${JSON.stringify({ calls, fanOutCalls: FAN_OUT, ...samples })}\n`);
if (transport.sessionId) {
  try {
    await transport.terminateSession();
  } catch {}
}
await client.close();
process.exit(0);
