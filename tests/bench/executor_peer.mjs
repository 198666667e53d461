// Benchmark driver for capa-bench: the Executor project's QuickJS sandbox
// (`@executor-js/runtime-quickjs`, with its peer `effect`) as a baseline measured in the same run as
// ours. Prints JSON on stdout (µs); nothing is asserted.
//
//   node tests/bench/executor_peer.mjs [rounds]
//
// - moduleLoadUs: the first `execute` of `return 1` in this process, which also loads and
//   compiles the QuickJS WASM module (once per process);
// - coldStartUs: each later `execute` of `return 1` (a fresh QuickJS runtime and context per
//   execute, as the runtime does; no pool);
// - perCallUs: code making CALLS sequential awaited calls to a tool returning a small object,
//   minus an empty run in the same round, per call (one sample a round).
// Each execute runs through `Effect.runPromise`, as a host embedding the runtime would.
import * as Effect from 'effect/Effect';
import { makeQuickJsExecutor } from '@executor-js/runtime-quickjs';

const CALLS = 50;
const rounds = Number(process.argv[2] ?? 30);

const executor = makeQuickJsExecutor({ timeoutMs: 10_000 });
// Like the hub's demo source `add`: a read-only tool answering from memory.
const invoker = {
  invoke: ({ path, args }) =>
    path === 'demo.add'
      ? Effect.succeed({ sum: (args?.a ?? 0) + (args?.b ?? 0) })
      : Effect.fail(new Error(`no tool ${path}`)),
};

async function run(code) {
  const started = process.hrtime.bigint();
  const result = await Effect.runPromise(executor.execute(code, invoker));
  const elapsed = Number(process.hrtime.bigint() - started) / 1000;
  if (result.error) throw new Error(`peer execute failed: ${result.error}`);
  return { elapsed, value: result.result };
}

const EMPTY = 'return 1';
const CALLING = `let s = 0; for (let i = 0; i < ${CALLS}; i++) { s += (await tools.demo.add({ a: i, b: 1 })).sum; } return s;`;

const first = await run(EMPTY);
if (first.value !== 1) throw new Error(`peer returned ${JSON.stringify(first.value)}`);
const check = await run(CALLING);
if (check.value !== (CALLS * (CALLS - 1)) / 2 + CALLS) throw new Error(`peer sum ${check.value}`);
for (let i = 0; i < 20; i++) await run(EMPTY);
const coldStartUs = [];
const perCallUs = [];
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < 10; i++) coldStartUs.push((await run(EMPTY)).elapsed);
  const calling = (await run(CALLING)).elapsed;
  const empty = (await run(EMPTY)).elapsed;
  perCallUs.push((calling - empty) / CALLS);
}
process.stdout.write(
  `${JSON.stringify({ runtime: '@executor-js/runtime-quickjs 1.5.35', calls: CALLS, moduleLoadUs: first.elapsed, coldStartUs, perCallUs })}\n`,
);
