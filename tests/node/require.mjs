// Skips that cannot pass unseen. A developer running one test file by hand may lack Chromium,
// WebKitWebDriver, dunst or a keychain, and that file then skips, saying what is missing and how
// to get it. `scripts/test` (what CI runs) exports CAPA_REQUIRE_ALL=1, and there every such skip
// is a failure with the same reason: a run that checked nothing must not be green.
// CAPA_REQUIRE_KEYCHAIN=1 does the same for the keychain alone (the Rust tests read it too).
import assert from 'node:assert/strict';

/** The variables under which a missing keychain fails instead of skipping. */
export const KEYCHAIN = ['CAPA_REQUIRE_ALL', 'CAPA_REQUIRE_KEYCHAIN'];

/** The variable that set it, if any of `names` is set. */
function requiredBy(names) {
  return names.find((name) => process.env[name]);
}

/**
 * A `skip` value for `describe`/`it`: `false` when nothing is missing; otherwise the reason, or,
 * when one of `names` is set, a thrown error with the reason (the test file fails as it loads).
 */
export function skipOrFail(reasons, names = ['CAPA_REQUIRE_ALL']) {
  const list = [reasons].flat().filter(Boolean);
  if (list.length === 0) return false;
  const reason = list.join('; ');
  const by = requiredBy(names);
  if (by) throw new Error(`${reason} (${by} is set, so this is a failure, not a skip)`);
  return `${reason} (under scripts/test this fails instead)`;
}

/**
 * Inside a test: when one of `names` is set a missing part fails the test; otherwise the test
 * notes what it could not check and goes on with the rest.
 */
export function failOrNote(t, reason, names = ['CAPA_REQUIRE_ALL']) {
  const by = requiredBy(names);
  assert.ok(!by, `${reason} (${by} is set, so this is a failure, not a skip)`);
  t?.diagnostic(`${reason}: not checked (under scripts/test this fails instead)`);
}
