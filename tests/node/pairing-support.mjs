// Pairing a client in the tests, as a person at a terminal would (docs/security.md, "Who may say
// yes"): only a paired client's own approval forms count.
import { runCapa } from './support.mjs';

/**
 * Pairs a client as a person at a terminal would (`capa clients pair NAME --json`): {id, name,
 * forms, key}. Only a paired client's own forms answer approvals (docs/security.md, "Who may
 * say yes"); pass the key as `CAPA_CLIENT_KEY` to `capa mcp`, or as the bearer over HTTP.
 */
export async function pairClient(sandbox, name = 'e2e client') {
  const r = await runCapa(['clients', 'pair', name, '--json'], { env: sandbox.env, terminal: true });
  if (r.code !== 0) throw new Error(`capa clients pair exited ${r.code}: ${r.stdout}${r.stderr}`);
  // Under `script` stderr shares the terminal with stdout: take the JSON object alone.
  const paired = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'), r.stdout.lastIndexOf('}') + 1));
  if (!paired.key?.startsWith('capa_client_')) throw new Error(`no client key: ${r.stdout}`);
  return paired;
}
