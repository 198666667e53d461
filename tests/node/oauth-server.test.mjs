// The OAuth test upstream (tests/support/oauth-server.mjs) and the test browser
// (tests/support/oauth-browser.mjs) that the hub's OAuth tests use, checked without the hub:
// discovery, registration, consent, PKCE, resource, refresh rotation, expiry, revocation, and the
// tools through the SDK's Client. The steps are tests/support/oauth-selftest.mjs; run that file
// by hand for the whole set (it also denies in Chromium, which this leaves out for time).
import { test } from 'node:test';
import { existsSync } from 'node:fs';

import { failOrNote } from './require.mjs';
import { CHROMIUM, selftest } from '../support/oauth-selftest.mjs';

test('oauth test upstream and test browser', async (t) => {
  const chromium = existsSync(CHROMIUM);
  if (!chromium) failOrNote(t, `no Chromium at ${CHROMIUM} (apt-get install chromium, or scripts/setup --test): the browser script's chromium mode`);
  await selftest({
    chromium,
    chromiumDeny: false,
    note: (text) => t.diagnostic(text),
    // Each step depends on the ones before it: the first failure ends the run.
    step: async (name, fn) => {
      let error;
      await t.test(name, async () => {
        try {
          await fn();
        } catch (e) {
          error = e;
          throw e;
        }
      });
      if (error) throw error;
    },
  });
});
