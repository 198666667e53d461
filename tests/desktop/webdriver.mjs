// A minimal WebDriver client over fetch, for the desktop tests: WebKitWebDriver drives the
// app's windows (what `tauri-driver` does on Linux), over plain HTTP WebDriver.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A minimal WebDriver client over fetch. */
export class WebDriver {
  constructor(base) {
    this.base = base;
    this.session = null;
  }
  async call(method, p, body) {
    const res = await fetch(`${this.base}${p}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`WebDriver ${method} ${p}: ${res.status} ${JSON.stringify(json.value)}`);
    return json.value;
  }
  s(p) {
    return `/session/${this.session}${p}`;
  }
  async newSession(binary, args) {
    const value = await this.call('POST', '/session', {
      capabilities: { alwaysMatch: { browserName: 'wry', 'webkitgtk:browserOptions': { binary, args } } },
    });
    this.session = value.sessionId;
  }
  async deleteSession() {
    if (this.session) await this.call('DELETE', this.s('')).catch(() => {});
    this.session = null;
  }
  handles() {
    return this.call('GET', this.s('/window/handles'));
  }
  switchTo(handle) {
    return this.call('POST', this.s('/window'), { handle });
  }
  url() {
    return this.call('GET', this.s('/url'));
  }
  script(script, args = []) {
    return this.call('POST', this.s('/execute/sync'), { script, args });
  }
  /** Invokes one of the app's Tauri commands from the current window's page. */
  async invoke(command, args = {}) {
    const value = await this.call('POST', this.s('/execute/async'), {
      script: `const done = arguments[arguments.length - 1];
        window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1])
          .then((v) => done({ ok: v }), (e) => done({ err: e }));`,
      args: [command, args],
    });
    if ('err' in value) throw new Error(`${command}: ${JSON.stringify(value.err)}`);
    return value.ok;
  }
  async find(xpath) {
    const value = await this.call('POST', this.s('/element'), { using: 'xpath', value: xpath });
    return Object.values(value)[0];
  }
  /** Saves the current window's screenshot (PNG) to `file`. */
  async screenshot(file) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, Buffer.from(await this.call('GET', this.s('/screenshot')), 'base64'));
  }
  click(element) {
    return this.call('POST', this.s(`/element/${element}/click`), {});
  }
  /** Types `text` into `element` as keys, after emptying it. */
  async type(element, text) {
    await this.call('POST', this.s(`/element/${element}/clear`), {});
    await this.call('POST', this.s(`/element/${element}/value`), { text });
  }
  /** Presses and releases one key, as a person at the keyboard (WebDriver key actions).
   * `{closes: true}`: the key decides the window's last call, which closes it at once — maybe
   * before the driver has answered — so a window gone afterwards is what was expected. */
  async press(key, { closes = false } = {}) {
    // Which window the key goes to, to tell afterwards whether it is gone.
    const target = closes ? await this.call('GET', this.s('/window')).catch(() => undefined) : undefined;
    const gone = async (e) => {
      if (!closes) throw e;
      if (/no such window/.test(String(e?.message ?? e))) return;
      // Releasing the keys of a window that closed meanwhile can also answer 500 "unknown error"
      // with no message (seen once in CI): then the window must really be gone.
      const handles = await this.handles().catch(() => undefined);
      if (target && Array.isArray(handles) && !handles.includes(target)) return;
      throw e;
    };
    await this.call('POST', this.s('/actions'), {
      actions: [{ type: 'key', id: 'keyboard', actions: [{ type: 'keyDown', value: key }, { type: 'keyUp', value: key }] }],
    }).catch(gone);
    await this.call('DELETE', this.s('/actions')).catch(gone);
  }
}
