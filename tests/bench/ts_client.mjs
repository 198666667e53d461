// Benchmark driver for capa-bench: `execute` round trips beside MCP `ping` in one session, with
// the official TypeScript clients. Prints JSON of the samples (µs) on stdout; nothing is asserted.
//
//   node tests/bench/ts_client.mjs <v1|v2> stdio <n> <command> [args...]
//   node tests/bench/ts_client.mjs <v1|v2> http <n> <url>        (token in $CAPA_BENCH_TOKEN)
//
// v1: `@modelcontextprotocol/sdk` 1.x (negotiates 2025-11-25); v2: `@modelcontextprotocol/client`
// 2.x with version negotiation `auto` (2026-07-28). After 20 warm-up runs, n rounds of one baseline
// request then one `execute` of `return 1`, alternating, so that both see the same machine. The
// baseline is `ping` under 2025-11-25; 2026-07-28 removed `ping`, so there it is `server/discover`,
// the era's smallest request (the SDK sends it uncached).
//
// With CAPA_BENCH_GUEST_CALLS=N (a hub with the demo source), then 12 rounds of a run of N awaited
// `demo.add` calls and an empty run, alternating: (the run of calls − the empty run) / N is one
// awaited call to an in-hub source from guest code, as this client sees it.
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

const WARM_UP = 20;

function usage() {
  console.error('usage: ts_client.mjs <v1|v2> <stdio|http> <n> <command args... | url>');
  process.exit(2);
}

const [sdk, transportKind, count, ...target] = process.argv.slice(2);
const n = Number(count);
if (!['v1', 'v2'].includes(sdk) || !['stdio', 'http'].includes(transportKind) || !(n > 0) || !target.length) usage();

function makeTransport() {
  if (transportKind === 'stdio') {
    const [command, ...args] = target;
    const Stdio = sdk === 'v1' ? StdioV1 : StdioV2;
    // The SDK passes only a few safe variables by default; the hub needs its data and config dirs.
    return new Stdio({ command, args, env: process.env, stderr: 'ignore' });
  }
  const Http = sdk === 'v1' ? HttpV1 : HttpV2;
  const token = process.env.CAPA_BENCH_TOKEN;
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  return new Http(new URL(target[0]), { requestInit: { headers } });
}

function makeClient() {
  const info = { name: `capa-bench-ts-${sdk}`, version: '1.0.0' };
  if (sdk === 'v1') return new ClientV1(info, { capabilities: {} });
  return new ClientV2(info, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
}

async function execute(client, code = 'return 1') {
  const result = await client.callTool({ name: 'execute', arguments: { code } });
  const status = result.structuredContent?.status;
  if (status !== 'completed') throw new Error(`execute did not complete: ${JSON.stringify(result)}`);
}

const GUEST_CALL_ROUNDS = 12;

async function guestCalls(client, calls) {
  const code = `let s = 0; for (let i = 0; i < ${calls}; i++) s += await demo.add({ a: i, b: 1 }); return s;`;
  for (let i = 0; i < 2; i++) await execute(client, code);
  const withCalls = [];
  const empty = [];
  for (let i = 0; i < GUEST_CALL_ROUNDS; i++) {
    withCalls.push(await timed(() => execute(client, code)));
    empty.push(await timed(() => execute(client)));
  }
  return { calls, withCalls, empty };
}

async function timed(f) {
  const started = process.hrtime.bigint();
  await f();
  return Number(process.hrtime.bigint() - started) / 1000;
}

const transport = makeTransport();
const client = makeClient();
await client.connect(transport);
const protocol = sdk === 'v2' ? client.getNegotiatedProtocolVersion() : LATEST_PROTOCOL_VERSION;
for (let i = 0; i < WARM_UP; i++) await execute(client);
const baseline = protocol === '2026-07-28' ? 'server/discover' : 'ping';
const baselineRequest = baseline === 'ping' ? () => client.ping() : () => client.discover();
const ping = [];
const executeSamples = [];
for (let i = 0; i < n; i++) {
  ping.push(await timed(baselineRequest));
  executeSamples.push(await timed(() => execute(client)));
}
const calls = Number(process.env.CAPA_BENCH_GUEST_CALLS ?? 0);
const guest = calls > 0 ? await guestCalls(client, calls) : undefined;
process.stdout.write(`${JSON.stringify({ protocol, baseline, ping, execute: executeSamples, guest })}\n`);
if (transportKind === 'http' && transport.sessionId) {
  try {
    await transport.terminateSession();
  } catch {}
}
await client.close();
process.exit(0);
