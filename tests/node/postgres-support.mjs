// Databases on the test PostgreSQL server (CAPA_TEST_POSTGRES: scripts/test starts one with
// tests/support/postgres.sh), made with psql for one test file and dropped after it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

/** The server's address, if one is given. */
export const SERVER = process.env.CAPA_TEST_POSTGRES;

const made = [];

/** A new, empty database on the server, named after `prefix`; its address. */
export function newDatabase(prefix) {
  const name = `capa_${prefix}_${process.pid}_${made.length}_${Date.now()}`;
  const result = spawnSync('psql', [SERVER, '-v', 'ON_ERROR_STOP=1', '-c', `CREATE DATABASE ${name}`], {
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, result.stderr);
  made.push(name);
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops every database this process made. */
export function dropDatabases() {
  for (const name of made.splice(0)) {
    spawnSync('psql', [SERVER, '-c', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]);
  }
}

/** The one-column answer of `query` on the database at `url`, as text. */
export function sql(url, query) {
  const result = spawnSync('psql', [url, '-At', '-v', 'ON_ERROR_STOP=1', '-c', query], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}
