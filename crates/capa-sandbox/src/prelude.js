// The guest prelude: evaluated in every fresh context before the model's code.
//
// It is one function expression. Rust calls it with `host` (its bridge functions) and `config`,
// and keeps the object it returns (`start`, `settle`, `deliver`, `fireTimer`, `describeError`).
// Nothing of `host` or of that object is reachable from the guest: they live only in this
// closure.
//
// Everything used after the guest starts is captured here first, so a guest that rewrites
// `Array.prototype`, `JSON` or `Promise` confuses only itself. Rust trusts nothing the guest can
// influence anyway: it checks addresses, counts calls and budgets logs on its own side.
(function (host, config) {
  "use strict";

  const G = globalThis;
  const ObjectCtor = Object;
  const ObjectCreate = Object.create;
  const ObjectFreeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const getPrototypeOf = Object.getPrototypeOf;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const getOwnPropertyNames = Object.getOwnPropertyNames;
  const ObjectKeys = Object.keys;
  const ObjectProtoToString = Object.prototype.toString;
  const hasOwn = Object.hasOwn;
  const isArray = Array.isArray;
  const apply = Reflect.apply;
  const ReflectGet = Reflect.get;
  const ReflectHas = Reflect.has;
  const ReflectConstruct = Reflect.construct;
  const ProxyCtor = Proxy;
  const JSONparse = JSON.parse;
  const JSONstringify = JSON.stringify;
  const StringCtor = String;
  const NumberCtor = Number;
  const isFinite = Number.isFinite;
  const fromCharCode = String.fromCharCode;
  const charCodeAt = String.prototype.charCodeAt;
  const StringSlice = String.prototype.slice;
  const toLowerCase = String.prototype.toLowerCase;
  const StringReplace = String.prototype.replace;
  const StringIncludes = String.prototype.includes;
  const toWellFormed = String.prototype.toWellFormed;
  const SymbolToString = Symbol.prototype.toString;
  const MathFloor = Math.floor;
  const MathMin = Math.min;
  const MathMax = Math.max;
  const MathImul = Math.imul;
  const PromiseCtor = Promise;
  const promiseThen = Promise.prototype.then;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const DOMExceptionCtor = typeof DOMException === "function" ? DOMException : undefined;
  const MapCtor = Map;
  const MapProto = Map.prototype;
  const mapGet = MapProto.get;
  const mapSet = MapProto.set;
  const mapHas = MapProto.has;
  const mapForEach = MapProto.forEach;
  const SetCtor = Set;
  const setAdd = Set.prototype.add;
  const setForEach = Set.prototype.forEach;
  const U8 = Uint8Array;
  const ArrayBufferCtor = ArrayBuffer;
  const arrayBufferSlice = ArrayBuffer.prototype.slice;
  const isView = ArrayBuffer.isView;
  const TypedArrayProto = getPrototypeOf(Uint8Array.prototype);
  const typedArrayTag = getOwnPropertyDescriptor(TypedArrayProto, Symbol.toStringTag).get;
  const typedArrayBuffer = getOwnPropertyDescriptor(TypedArrayProto, "buffer").get;
  const typedArrayOffset = getOwnPropertyDescriptor(TypedArrayProto, "byteOffset").get;
  const typedArrayByteLength = getOwnPropertyDescriptor(TypedArrayProto, "byteLength").get;
  const typedArrayLength = getOwnPropertyDescriptor(TypedArrayProto, "length").get;
  const arrayBufferByteLength = getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
  const DataViewCtor = DataView;
  const dataViewBuffer = getOwnPropertyDescriptor(DataView.prototype, "buffer").get;
  const dataViewOffset = getOwnPropertyDescriptor(DataView.prototype, "byteOffset").get;
  const dataViewByteLength = getOwnPropertyDescriptor(DataView.prototype, "byteLength").get;
  const OrigDate = Date;
  const dateGetTime = Date.prototype.getTime;
  const dateToString = Date.prototype.toString;
  const RegExpCtor = RegExp;
  const regexpSource = getOwnPropertyDescriptor(RegExp.prototype, "source").get;
  const regexpFlags = getOwnPropertyDescriptor(RegExp.prototype, "flags").get;
  const FunctionProto = Function.prototype;

  const MAX_TIMER_MS = config.maxTimerMs;
  const MAX_TIMERS = 10000;
  const MAX_MESSAGE = 4000;

  function clip(s, n) {
    return s.length > n ? apply(StringSlice, s, [0, n]) + "…" : s;
  }

  // A string for any thrown or logged value; guest code that runs here (toString, getters) can
  // throw, which gives a placeholder, or loop, which the compute limit stops.
  function safeString(v) {
    try {
      if (typeof v === "string") return v;
      if (typeof v === "symbol") return apply(SymbolToString, v, []);
      return StringCtor(v);
    } catch (e) {
      return "[a value that cannot be turned into a string]";
    }
  }

  // Strings handed to Rust must be valid UTF-8: lone surrogates become U+FFFD.
  function wf(s) {
    return apply(toWellFormed, s, []);
  }

  function pushTo(list, v) {
    list[list.length] = v;
  }

  // ---------------------------------------------------------------------------------- ToolError

  class ToolError extends ErrorCtor {
    #brand = true;
    constructor(message, details) {
      super(message === undefined ? "Tool call failed" : safeString(message));
      const d = details !== null && typeof details === "object" ? details : {};
      const field = (name, value) =>
        defineProperty(this, name, { value, writable: true, enumerable: true, configurable: true });
      defineProperty(this, "name", { value: "ToolError", writable: true, configurable: true });
      field("code", d.code === undefined || d.code === null ? "tool_error" : safeString(d.code));
      field("address", d.address === undefined ? null : d.address);
      field("status", d.status === undefined ? null : d.status);
      field("hint", d.hint === undefined ? null : d.hint);
      field("retryable", d.retryable === true);
    }
    static isToolError(e) {
      return e !== null && typeof e === "object" && #brand in e;
    }
  }
  const isToolError = ToolError.isToolError;
  delete ToolError.isToolError;

  function toolErrorFrom(failure, address) {
    return new ToolError(failure.message, {
      code: failure.code,
      address: failure.address === null || failure.address === undefined ? address : failure.address,
      status: failure.status,
      hint: failure.hint,
      retryable: failure.retryable,
    });
  }

  function rejected(e) {
    return new PromiseCtor((_, reject) => reject(e));
  }

  // ----------------------------------------------------------------------- host calls, in order

  // seq -> { resolve, reject, address }; a null-prototype object so guest pollution of
  // Object.prototype cannot answer a lookup.
  const pending = ObjectCreate(null);

  // `r` is what a Rust bridge function returned: a sequence number as a decimal string, or a
  // failure as a JSON object (the call was refused before reaching the host).
  function awaitOp(r, address) {
    if (r[0] === "{") return rejected(toolErrorFrom(JSONparse(r), address));
    const seq = NumberCtor(r);
    return new PromiseCtor((resolve, reject) => {
      pending[seq] = { resolve, reject, address };
    });
  }

  // Called by Rust, one result at a time in issue order, with the microtask queue drained in
  // between: resolution order never depends on network timing.
  function deliver(seq, ok, payload) {
    const p = pending[seq];
    if (p === undefined) return;
    delete pending[seq];
    let value;
    try {
      value = JSONparse(payload);
    } catch (e) {
      p.reject(e);
      return;
    }
    if (ok) p.resolve(value);
    else p.reject(toolErrorFrom(value, p.address));
  }

  function callTool(address, input, options) {
    let args;
    if (input === undefined) {
      args = "{}";
    } else {
      try {
        args = JSONstringify(input, jsonReplacer);
      } catch (e) {
        throw new TypeErrorCtor(`${address}: the input is not JSON: ${clip(errorMessage(e), 300)}`);
      }
      if (args === undefined) throw new TypeErrorCtor(`${address}: the input is not JSON`);
    }
    let connection = "";
    if (options !== undefined && options !== null) {
      if (typeof options !== "object") {
        throw new TypeErrorCtor(`${address}: options must be an object like { connection: "work" }`);
      }
      const c = options.connection;
      if (c !== undefined && c !== null) {
        if (typeof c !== "string" || c === "") {
          throw new TypeErrorCtor(`${address}: options.connection must be a connection name`);
        }
        connection = c;
      }
    }
    return awaitOp(host.call(address, args, wf(connection)), address);
  }

  // BigInt is not JSON; turn it into a clear error rather than JSON.stringify's terse one.
  // Lone surrogates become U+FFFD, so Rust can read every string.
  function jsonReplacer(key, value) {
    if (typeof value === "string") return wf(value);
    if (typeof value === "bigint") {
      throw new TypeErrorCtor(`a BigInt (${safeString(value)}n) is not JSON; convert it with String() or Number()`);
    }
    return value;
  }

  // ------------------------------------------------------------------ namespaces and hub.*

  function normalize(name) {
    return apply(StringReplace, apply(toLowerCase, name, []), [/[_\-$]/g, ""]);
  }

  // Optimal string alignment distance (Levenshtein plus adjacent transpositions).
  function editDistance(a, b) {
    if (a.length > 64 || b.length > 64) return 99;
    let prev2 = null;
    let prev = [];
    for (let j = 0; j <= b.length; j++) prev[j] = j;
    for (let i = 1; i <= a.length; i++) {
      const cur = [i];
      for (let j = 1; j <= b.length; j++) {
        const cost = a[i - 1] === b[j - 1] ? 0 : 1;
        let v = MathMin(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
        if (prev2 !== null && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
          v = MathMin(v, prev2[j - 2] + 1);
        }
        cur[j] = v;
      }
      prev2 = prev;
      prev = cur;
    }
    return prev[b.length];
  }

  // The closest members to `name`: same name in another case style first, then by edit distance.
  function closest(members, name) {
    const scored = [];
    const n = normalize(name);
    const lower = apply(toLowerCase, name, []);
    for (let i = 0; i < members.length; i++) {
      const m = members[i];
      let score;
      if (normalize(m) === n) score = 0;
      else {
        const d = editDistance(lower, apply(toLowerCase, m, []));
        if (d <= MathMax(2, MathFloor(name.length / 3))) score = d;
        else if (n.length >= 4 && apply(StringIncludes, normalize(m), [n])) score = 3;
        else continue;
      }
      pushTo(scored, { m, score });
    }
    // Insertion sort: small lists, and no reliance on Array.prototype.sort.
    for (let i = 1; i < scored.length; i++) {
      const x = scored[i];
      let j = i - 1;
      while (j >= 0 && (scored[j].score > x.score || (scored[j].score === x.score && scored[j].m > x.m))) {
        scored[j + 1] = scored[j];
        j--;
      }
      scored[j + 1] = x;
    }
    const out = [];
    for (let i = 0; i < scored.length && i < 3; i++) pushTo(out, scored[i].m);
    return out;
  }

  function joinNames(prefix, names, max) {
    let s = "";
    for (let i = 0; i < names.length && i < max; i++) s += (i ? ", " : "") + prefix + names[i];
    if (names.length > max) s += `, … (${names.length} in all)`;
    return s;
  }

  function unknownMember(global, members, name) {
    const near = closest(members, name);
    let msg = `${global}.${name} is not a tool.`;
    if (near.length) msg += ` Did you mean ${joinNames(global + ".", near, 3)}?`;
    else if (members.length) msg += ` ${global} has: ${joinNames(global + ".", members, 12)}.`;
    else msg += ` ${global} has no tools.`;
    msg += ` Use hub.search() or hub.describe("${global}") to see its tools.`;
    return new TypeErrorCtor(msg);
  }

  // Names that generic code reads off any object (Object.prototype's, `then` for await,
  // `toJSON` for JSON.stringify, …): these answer normally instead of throwing.
  const passthrough = ObjectCreate(null);
  const passNames = getOwnPropertyNames(Object.prototype);
  for (let i = 0; i < passNames.length; i++) passthrough[passNames[i]] = true;
  passthrough.then = true;
  passthrough.toJSON = true;
  passthrough.inspect = true;
  passthrough.prototype = true;
  passthrough.length = true;
  passthrough.name = true;

  // `entries`: [member, fn, remote name]. A tool also answers to its remote name when that is
  // not its member (`everything["get-sum"]` for `everything.get_sum`), but only as a lookup: it
  // is no own property, so Object.keys and the declarations show the identifier forms alone,
  // and it never shadows a member or a name generic code reads (`then`, `toString`, …).
  function frozenNamespace(global, entries) {
    const target = {};
    const members = [];
    const aliases = ObjectCreate(null);
    for (let i = 0; i < entries.length; i++) {
      const member = entries[i][0];
      const fn = entries[i][1];
      defineProperty(fn, "name", { value: member });
      defineProperty(target, member, { value: fn, enumerable: true });
      pushTo(members, member);
    }
    for (let i = 0; i < entries.length; i++) {
      const remote = entries[i][2];
      if (typeof remote !== "string" || hasOwn(target, remote) || passthrough[remote] === true) continue;
      if (aliases[remote] === undefined) aliases[remote] = entries[i][0];
    }
    ObjectFreeze(target);
    const readOnly = () => {
      throw new TypeErrorCtor(`${global} is read-only`);
    };
    return new ProxyCtor(target, {
      get(t, key, receiver) {
        if (typeof key === "symbol" || hasOwn(t, key) || passthrough[key] === true) {
          return ReflectGet(t, key, receiver);
        }
        const member = aliases[key];
        if (member !== undefined) return ReflectGet(t, member, receiver);
        throw unknownMember(global, members, key);
      },
      has(t, key) {
        return (typeof key === "string" && aliases[key] !== undefined) || ReflectHas(t, key);
      },
      set: readOnly,
      defineProperty: readOnly,
      deleteProperty: readOnly,
      setPrototypeOf: readOnly,
    });
  }

  function defineGlobal(name, value) {
    defineProperty(G, name, { value, writable: false, enumerable: false, configurable: false });
  }

  const reserved = ObjectCreate(null);
  const globalNames = getOwnPropertyNames(G);
  for (let i = 0; i < globalNames.length; i++) reserved[globalNames[i]] = true;
  const ownGlobals = [
    "hub", "ToolError", "console", "crypto", "setTimeout", "clearTimeout", "structuredClone",
    "TextEncoder", "TextDecoder", "atob", "btoa",
  ];
  for (let i = 0; i < ownGlobals.length; i++) reserved[ownGlobals[i]] = true;

  const namespaces = config.namespaces;
  for (let i = 0; i < namespaces.length; i++) {
    const ns = namespaces[i];
    if (reserved[ns.global] === true) {
      host.notice(`the source "${ns.global}" shadows a built-in global, so it is not available in code`);
      continue;
    }
    reserved[ns.global] = true;
    const entries = [];
    for (let j = 0; j < ns.tools.length; j++) {
      const address = ns.tools[j][1];
      const fn = (input, options) => {
        try {
          return callTool(address, input, options);
        } catch (e) {
          return rejected(e);
        }
      };
      pushTo(entries, [ns.tools[j][0], fn, ns.tools[j][2]]);
    }
    defineGlobal(ns.global, frozenNamespace(ns.global, entries));
  }

  function hubSearch(query) {
    try {
      if (typeof query !== "string") throw new TypeErrorCtor("hub.search(query) takes a string");
      return awaitOp(host.search(wf(query)), "hub.search");
    } catch (e) {
      return rejected(e);
    }
  }

  function hubDescribe(targets) {
    try {
      const list = typeof targets === "string" ? [targets] : targets;
      if (!isArray(list)) {
        throw new TypeErrorCtor('hub.describe takes a target ("github.createIssue") or a list of them');
      }
      const names = [];
      for (let i = 0; i < list.length; i++) {
        if (typeof list[i] !== "string") throw new TypeErrorCtor("hub.describe targets are strings");
        pushTo(names, list[i]);
      }
      return awaitOp(host.describe(JSONstringify(names)), "hub.describe");
    } catch (e) {
      return rejected(e);
    }
  }

  defineGlobal("hub", frozenNamespace("hub", [["search", hubSearch], ["describe", hubDescribe]]));

  function defineBuiltin(name, value) {
    defineProperty(G, name, { value, writable: true, enumerable: false, configurable: true });
  }

  defineBuiltin("ToolError", ToolError);

  // ------------------------------------------------------------------- the logical clock

  let now = config.clockStart;

  // A function declaration named Date would be hoisted over `OrigDate = Date` above: hence the
  // other name, renamed below.
  function DateShim(...args) {
    if (new.target === undefined) return apply(dateToString, new OrigDate(now), []);
    return ReflectConstruct(OrigDate, args.length === 0 ? [now] : args, new.target);
  }
  defineProperty(DateShim, "name", { value: "Date" });
  defineProperty(DateShim, "prototype", { value: OrigDate.prototype, writable: false });
  defineProperty(DateShim, "length", { value: 7 });
  const dateNow = {
    now() {
      return now;
    },
  }.now;
  defineProperty(DateShim, "now", { value: dateNow, writable: true, configurable: true });
  defineProperty(DateShim, "parse", { value: OrigDate.parse, writable: true, configurable: true });
  defineProperty(DateShim, "UTC", { value: OrigDate.UTC, writable: true, configurable: true });
  defineProperty(OrigDate.prototype, "constructor", { value: DateShim, writable: true, configurable: true });
  defineBuiltin("Date", DateShim);

  // Timers: a binary heap on (due, id); fired by Rust one at a time, only when the guest is
  // otherwise idle (no microtask, no tool result to deliver). No real waiting.
  const heap = [];
  const active = ObjectCreate(null);
  let activeCount = 0;
  let timerId = 0;

  function before(a, b) {
    return a.due < b.due || (a.due === b.due && a.id < b.id);
  }

  function heapPush(t) {
    let i = heap.length;
    heap[i] = t;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      const tmp = heap[i];
      heap[i] = heap[parent];
      heap[parent] = tmp;
      i = parent;
    }
  }

  function heapPop() {
    const top = heap[0];
    const last = heap[heap.length - 1];
    heap.length = heap.length - 1;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l], heap[m])) m = l;
        if (r < heap.length && before(heap[r], heap[m])) m = r;
        if (m === i) break;
        const tmp = heap[i];
        heap[i] = heap[m];
        heap[m] = tmp;
        i = m;
      }
    }
    return top;
  }

  function setTimeout(fn, ms, ...args) {
    if (typeof fn !== "function") {
      throw new TypeErrorCtor("setTimeout(fn, ms) takes a function (strings are not evaluated)");
    }
    let delay = ms === undefined ? 0 : NumberCtor(ms);
    if (!(delay >= 0)) delay = 0;
    if (delay > MAX_TIMER_MS) {
      throw new RangeErrorCtor(`setTimeout delay ${delay} ms is over the sandbox's limit of ${MAX_TIMER_MS} ms`);
    }
    if (activeCount >= MAX_TIMERS) {
      throw new RangeErrorCtor(`more than ${MAX_TIMERS} timers pending`);
    }
    const id = ++timerId;
    const t = { due: now + MathFloor(delay), id, fn, args };
    heapPush(t);
    active[id] = t;
    activeCount++;
    return id;
  }

  function clearTimeout(id) {
    if (typeof id === "number" && active[id] !== undefined) {
      delete active[id];
      activeCount--;
    }
  }

  // Fires the next timer. Returns false when none is pending.
  function fireTimer() {
    while (heap.length > 0) {
      const t = heapPop();
      if (active[t.id] !== t) continue;
      delete active[t.id];
      activeCount--;
      if (t.due > now) now = t.due;
      try {
        apply(t.fn, undefined, t.args);
      } catch (e) {
        host.finish("error", describeError(e, "uncaught in a setTimeout callback: "));
      }
      return true;
    }
    return false;
  }

  defineBuiltin("setTimeout", setTimeout);
  defineBuiltin("clearTimeout", clearTimeout);

  // ------------------------------------------------------------------ seeded randomness

  // xoshiro128** seeded by Rust (splitmix64 of the run's seed).
  let s0 = config.seed[0] >>> 0;
  let s1 = config.seed[1] >>> 0;
  let s2 = config.seed[2] >>> 0;
  let s3 = config.seed[3] >>> 0;
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1;

  function next32() {
    const x = MathImul(s1, 5);
    const result = MathImul((x << 7) | (x >>> 25), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = (s3 << 11) | (s3 >>> 21);
    return result;
  }

  function random() {
    const hi = next32() >>> 5;
    const lo = next32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }
  defineProperty(Math, "random", { value: random, writable: true, configurable: true });

  function domError(message, name) {
    return DOMExceptionCtor !== undefined ? new DOMExceptionCtor(message, name) : new TypeErrorCtor(message);
  }

  const integerArrays = ObjectCreate(null);
  const integerArrayNames = [
    "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
    "Uint32Array", "BigInt64Array", "BigUint64Array",
  ];
  for (let i = 0; i < integerArrayNames.length; i++) integerArrays[integerArrayNames[i]] = true;

  function getRandomValues(array) {
    const tag = isView(array) ? apply(typedArrayTag, array, []) : undefined;
    if (tag === undefined || integerArrays[tag] !== true) {
      throw domError("getRandomValues takes an integer typed array", "TypeMismatchError");
    }
    const n = apply(typedArrayByteLength, array, []);
    if (n > 65536) {
      throw domError(`getRandomValues: ${n} bytes asked, at most 65536`, "QuotaExceededError");
    }
    const bytes = new U8(apply(typedArrayBuffer, array, []), apply(typedArrayOffset, array, []), n);
    for (let i = 0; i < n; i += 4) {
      let r = next32();
      for (let k = 0; k < 4 && i + k < n; k++) {
        bytes[i + k] = r & 255;
        r >>>= 8;
      }
    }
    return array;
  }

  const hex = "0123456789abcdef";
  function randomUUID() {
    const b = new U8(16);
    getRandomValues(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let s = "";
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) s += "-";
      s += hex[b[i] >> 4] + hex[b[i] & 15];
    }
    return s;
  }

  defineBuiltin("crypto", ObjectFreeze({ getRandomValues, randomUUID }));

  // --------------------------------------------------------------------------- console

  function formatValue(v, depth) {
    switch (typeof v) {
      case "string":
        return depth === 0 ? v : JSONstringify(v);
      case "undefined":
        return "undefined";
      case "bigint":
        return safeString(v) + "n";
      case "function":
        return `[Function ${safeString(v.name) || "(anonymous)"}]`;
      case "symbol":
      case "number":
      case "boolean":
        return safeString(v);
    }
    if (v === null) return "null";
    try {
      if (v instanceof ErrorCtor) {
        const stack = v.stack;
        return typeof stack === "string" && stack !== ""
          ? `${safeString(v.name)}: ${safeString(v.message)}\n${stack}`
          : `${safeString(v.name)}: ${safeString(v.message)}`;
      }
      const seen = [];
      const s = JSONstringify(v, function (key, value) {
        if (typeof value === "bigint") return safeString(value) + "n";
        if (typeof value === "function") return `[Function ${safeString(value.name) || "(anonymous)"}]`;
        if (typeof value === "undefined") return key === "" ? value : "undefined";
        if (value !== null && typeof value === "object") {
          for (let i = 0; i < seen.length; i++) if (seen[i] === value) return "[Circular]";
          pushTo(seen, value);
          if (value instanceof MapCtor) {
            const o = {};
            apply(mapForEach, value, [(val, k) => (o[safeString(k)] = val)]);
            return o;
          }
          if (value instanceof SetCtor) {
            const a = [];
            apply(setForEach, value, [(val) => pushTo(a, val)]);
            return a;
          }
        }
        return value;
      });
      return s === undefined ? safeString(v) : s;
    } catch (e) {
      return safeString(v);
    }
  }

  // Set once Rust has no room for another line (host.log returned false): later calls format
  // nothing and cross into Rust no more, so a flood of console calls costs only the calls.
  let logsFull = false;

  function logger(level) {
    const prefix = level === "log" ? "" : `[${level}] `;
    return function (...args) {
      if (logsFull) return;
      let line = prefix;
      for (let i = 0; i < args.length; i++) line += (i ? " " : "") + formatValue(args[i], 0);
      if (host.log(wf(line)) !== true) logsFull = true;
    };
  }

  const consoleObject = {
    log: logger("log"),
    info: logger("info"),
    warn: logger("warn"),
    error: logger("error"),
    debug: logger("debug"),
    trace: logger("debug"),
    dir: logger("log"),
    table: logger("log"),
    assert(condition, ...args) {
      if (!condition) apply(consoleObject.error, undefined, ["Assertion failed", ...args]);
    },
  };
  defineBuiltin("console", consoleObject);

  // ------------------------------------------------------------------- structuredClone

  function dataCloneError(what) {
    return domError(`${what} could not be cloned`, "DataCloneError");
  }

  function structuredClone(value, options) {
    const seen = new MapCtor();
    function clone(v) {
      if (v === null) return v;
      const t = typeof v;
      if (t === "function") throw dataCloneError(formatValue(v, 1));
      if (t === "symbol") throw dataCloneError("a Symbol");
      if (t !== "object") return v;
      if (apply(mapHas, seen, [v])) return apply(mapGet, seen, [v]);
      const tag = apply(ObjectProtoToString, v, []);
      let out;
      if (isArray(v)) {
        out = [];
        apply(mapSet, seen, [v, out]);
        out.length = v.length;
        const keys = ObjectKeys(v);
        for (let i = 0; i < keys.length; i++) out[keys[i]] = clone(v[keys[i]]);
        return out;
      }
      if (isView(v)) {
        if (v instanceof DataViewCtor) {
          out = new DataViewCtor(
            clone(apply(dataViewBuffer, v, [])),
            apply(dataViewOffset, v, []),
            apply(dataViewByteLength, v, []),
          );
        } else {
          const Ctor = G[apply(typedArrayTag, v, [])];
          out = new Ctor(
            clone(apply(typedArrayBuffer, v, [])),
            apply(typedArrayOffset, v, []),
            apply(typedArrayLength, v, []),
          );
        }
        apply(mapSet, seen, [v, out]);
        return out;
      }
      if (v instanceof ArrayBufferCtor) {
        out = apply(arrayBufferSlice, v, [0, apply(arrayBufferByteLength, v, [])]);
        apply(mapSet, seen, [v, out]);
        return out;
      }
      if (v instanceof OrigDate) {
        out = new OrigDate(apply(dateGetTime, v, []));
      } else if (v instanceof RegExpCtor) {
        out = new RegExpCtor(apply(regexpSource, v, []), apply(regexpFlags, v, []));
      } else if (v instanceof MapCtor) {
        out = new MapCtor();
        apply(mapSet, seen, [v, out]);
        const pairs = [];
        apply(mapForEach, v, [(val, k) => pushTo(pairs, [k, val])]);
        for (let i = 0; i < pairs.length; i++) apply(mapSet, out, [clone(pairs[i][0]), clone(pairs[i][1])]);
        return out;
      } else if (v instanceof SetCtor) {
        out = new SetCtor();
        apply(mapSet, seen, [v, out]);
        const items = [];
        apply(setForEach, v, [(val) => pushTo(items, val)]);
        for (let i = 0; i < items.length; i++) apply(setAdd, out, [clone(items[i])]);
        return out;
      } else if (v instanceof ErrorCtor) {
        out = new ErrorCtor(safeString(v.message));
        defineProperty(out, "name", { value: safeString(v.name), writable: true, configurable: true });
        if (typeof v.stack === "string") {
          defineProperty(out, "stack", { value: v.stack, writable: true, configurable: true });
        }
      } else if (tag === "[object Boolean]" || tag === "[object Number]" || tag === "[object String]") {
        out = ObjectCtor(v.valueOf());
      } else if (tag === "[object Object]" || tag === "[object Arguments]") {
        out = {};
        apply(mapSet, seen, [v, out]);
        const keys = ObjectKeys(v);
        for (let i = 0; i < keys.length; i++) {
          defineProperty(out, keys[i], {
            value: clone(v[keys[i]]),
            writable: true,
            enumerable: true,
            configurable: true,
          });
        }
        return out;
      } else {
        throw dataCloneError(tag);
      }
      apply(mapSet, seen, [v, out]);
      return out;
    }
    return clone(value);
  }
  defineBuiltin("structuredClone", structuredClone);

  // ------------------------------------------------------------- TextEncoder / TextDecoder

  function utf8Encode(input) {
    const s = input === undefined ? "" : safeString(input);
    const out = new U8(s.length * 3);
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      let c = apply(charCodeAt, s, [i]);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
        const d = apply(charCodeAt, s, [i + 1]);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
        }
      }
      if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
      if (c < 0x80) out[n++] = c;
      else if (c < 0x800) {
        out[n++] = 0xc0 | (c >> 6);
        out[n++] = 0x80 | (c & 63);
      } else if (c < 0x10000) {
        out[n++] = 0xe0 | (c >> 12);
        out[n++] = 0x80 | ((c >> 6) & 63);
        out[n++] = 0x80 | (c & 63);
      } else {
        out[n++] = 0xf0 | (c >> 18);
        out[n++] = 0x80 | ((c >> 12) & 63);
        out[n++] = 0x80 | ((c >> 6) & 63);
        out[n++] = 0x80 | (c & 63);
      }
    }
    return new U8(apply(arrayBufferSlice, apply(typedArrayBuffer, out, []), [0, n]));
  }

  class TextEncoder {
    get encoding() {
      return "utf-8";
    }
    encode(input) {
      return utf8Encode(input);
    }
    encodeInto(input, dest) {
      const s = safeString(input);
      let read = 0;
      let written = 0;
      for (let i = 0; i < s.length; ) {
        const c = apply(charCodeAt, s, [i]);
        const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length;
        const units = pair ? 2 : 1;
        const bytes = utf8Encode(apply(StringSlice, s, [i, i + units]));
        const chunk = bytes.length === 4 && !pair ? utf8Encode("\ufffd") : bytes;
        if (written + chunk.length > dest.length) break;
        for (let k = 0; k < chunk.length; k++) dest[written + k] = chunk[k];
        written += chunk.length;
        read += units;
        i += units;
      }
      return { read, written };
    }
  }

  function bytesOf(input) {
    if (input === undefined) return new U8(0);
    if (input instanceof ArrayBufferCtor) return new U8(input);
    if (isView(input)) {
      if (input instanceof DataViewCtor) {
        return new U8(apply(dataViewBuffer, input, []), apply(dataViewOffset, input, []), apply(dataViewByteLength, input, []));
      }
      return new U8(apply(typedArrayBuffer, input, []), apply(typedArrayOffset, input, []), apply(typedArrayByteLength, input, []));
    }
    throw new TypeErrorCtor("TextDecoder.decode takes an ArrayBuffer or a view of one");
  }

  class TextDecoder {
    #fatal;
    #ignoreBOM;
    constructor(label, options) {
      const l = label === undefined ? "utf-8" : apply(toLowerCase, safeString(label), []);
      if (l !== "utf-8" && l !== "utf8" && l !== "unicode-1-1-utf-8") {
        throw new RangeErrorCtor(`TextDecoder: only utf-8 is supported, not "${safeString(label)}"`);
      }
      this.#fatal = options !== undefined && options !== null && options.fatal === true;
      this.#ignoreBOM = options !== undefined && options !== null && options.ignoreBOM === true;
    }
    get encoding() {
      return "utf-8";
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input) {
      const b = bytesOf(input);
      const fatal = this.#fatal;
      let s = "";
      let chunk = [];
      const flush = () => {
        s += apply(fromCharCode, undefined, chunk);
        chunk = [];
      };
      const put = (c) => {
        if (c >= 0x10000) {
          c -= 0x10000;
          pushTo(chunk, 0xd800 + (c >> 10));
          pushTo(chunk, 0xdc00 + (c & 1023));
        } else pushTo(chunk, c);
        if (chunk.length >= 8192) flush();
      };
      const bad = () => {
        if (fatal) throw new TypeErrorCtor("TextDecoder: the data is not valid UTF-8");
        put(0xfffd);
      };
      let i = 0;
      if (!this.#ignoreBOM && b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) i = 3;
      while (i < b.length) {
        const x = b[i];
        if (x < 0x80) {
          put(x);
          i++;
          continue;
        }
        let need, c, lo = 0x80, hi = 0xbf;
        if (x >= 0xc2 && x <= 0xdf) {
          need = 1;
          c = x & 0x1f;
        } else if (x >= 0xe0 && x <= 0xef) {
          need = 2;
          c = x & 0x0f;
          if (x === 0xe0) lo = 0xa0;
          if (x === 0xed) hi = 0x9f;
        } else if (x >= 0xf0 && x <= 0xf4) {
          need = 3;
          c = x & 0x07;
          if (x === 0xf0) lo = 0x90;
          if (x === 0xf4) hi = 0x8f;
        } else {
          bad();
          i++;
          continue;
        }
        let j = i + 1;
        let ok = true;
        for (let k = 0; k < need; k++, j++) {
          const y = b[j];
          if (j >= b.length || y < lo || y > hi) {
            ok = false;
            break;
          }
          lo = 0x80;
          hi = 0xbf;
          c = (c << 6) | (y & 0x3f);
        }
        if (!ok) {
          bad();
          i = j;
          continue;
        }
        put(c);
        i = j;
      }
      flush();
      return s;
    }
  }

  defineBuiltin("TextEncoder", TextEncoder);
  defineBuiltin("TextDecoder", TextDecoder);

  // -------------------------------------------------------------------------- atob / btoa

  const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const b64Index = ObjectCreate(null);
  for (let i = 0; i < 64; i++) b64Index[b64[i]] = i;

  function btoa(data) {
    if (arguments.length === 0) throw new TypeErrorCtor("btoa takes 1 argument");
    const s = safeString(data);
    let out = "";
    for (let i = 0; i < s.length; i += 3) {
      const a = apply(charCodeAt, s, [i]);
      const b = i + 1 < s.length ? apply(charCodeAt, s, [i + 1]) : 0;
      const c = i + 2 < s.length ? apply(charCodeAt, s, [i + 2]) : 0;
      if (a > 255 || b > 255 || c > 255) {
        throw domError("btoa: the string contains characters outside of Latin1", "InvalidCharacterError");
      }
      out += b64[a >> 2] + b64[((a & 3) << 4) | (b >> 4)];
      out += i + 1 < s.length ? b64[((b & 15) << 2) | (c >> 6)] : "=";
      out += i + 2 < s.length ? b64[c & 63] : "=";
    }
    return out;
  }

  function atob(data) {
    if (arguments.length === 0) throw new TypeErrorCtor("atob takes 1 argument");
    let s = apply(StringReplace, safeString(data), [/[\t\n\f\r ]/g, ""]);
    if (s.length % 4 === 0) s = apply(StringReplace, s, [/==?$/, ""]);
    const invalid = () => domError("atob: the string is not valid base64", "InvalidCharacterError");
    if (s.length % 4 === 1) throw invalid();
    let out = "";
    let bits = 0;
    let acc = 0;
    for (let i = 0; i < s.length; i++) {
      const v = b64Index[s[i]];
      if (v === undefined) throw invalid();
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += fromCharCode((acc >> bits) & 255);
      }
    }
    return out;
  }

  defineBuiltin("btoa", btoa);
  defineBuiltin("atob", atob);

  // ------------------------------------------------------------------------- what is absent

  // The Function constructors, reachable through every function's prototype chain, become
  // stubs that throw; `eval` and `Function` leave the global object. (Rust's own ctx.eval does
  // not go through them and keeps working.)
  function noCodeFromStrings() {
    throw new TypeErrorCtor("Code from strings is not available in this sandbox (no eval, no Function constructor)");
  }
  const fnProtos = [
    FunctionProto,
    getPrototypeOf(async function () {}),
    getPrototypeOf(function* () {}),
    getPrototypeOf(async function* () {}),
  ];
  for (let i = 0; i < fnProtos.length; i++) {
    defineProperty(fnProtos[i], "constructor", {
      value: noCodeFromStrings,
      writable: false,
      enumerable: false,
      configurable: false,
    });
  }
  const absent = config.absent;
  for (let i = 0; i < absent.length; i++) delete G[absent[i]];

  // ------------------------------------------------------------------------ run and finish

  function errorMessage(e) {
    if (e !== null && (typeof e === "object" || typeof e === "function")) {
      try {
        const m = e.message;
        if (m !== undefined) return safeString(m);
      } catch (_) {
        return "[an error whose message cannot be read]";
      }
    }
    return safeString(e);
  }

  // A JSON record of a thrown value for Rust: { name, message, code, tool, hint, stack }.
  function describeError(e, prefix) {
    const record = { name: null, message: "", code: null, tool: false, hint: null, stack: null, isNull: e === null };
    const isObject = e !== null && (typeof e === "object" || typeof e === "function");
    record.message = clip((prefix || "") + errorMessage(e), MAX_MESSAGE);
    if (isObject) {
      try {
        const name = e.name;
        if (typeof name === "string") record.name = clip(name, 100);
        const stack = e.stack;
        if (typeof stack === "string") record.stack = clip(stack, MAX_MESSAGE);
        if (isToolError(e)) {
          record.tool = true;
          const code = e.code;
          if (typeof code === "string") record.code = clip(code, 100);
          const hint = e.hint;
          if (typeof hint === "string") record.hint = clip(hint, MAX_MESSAGE);
        }
      } catch (_) {
        // Keep what was read.
      }
    }
    return JSONstringify(record);
  }

  function finishValue(value) {
    if (value === undefined) {
      host.finish("undefined", "");
      return;
    }
    let json;
    try {
      json = JSONstringify(value, jsonReplacer);
    } catch (e) {
      const m = errorMessage(e);
      const circular = apply(StringIncludes, m, ["circular"]);
      host.finish("not_json", circular ? "the result has a circular reference" : wf(clip(m, MAX_MESSAGE)));
      return;
    }
    if (json === undefined) {
      host.finish("not_json", `the code returned a ${typeof value}, which is not JSON`);
      return;
    }
    host.finish("value", json);
  }

  // Runs the model's code and returns its promise without handlers: Rust watches it and calls
  // settle() once it settled, so that a rejection reaches Rust's rejection tracker while the
  // code's frame is still alive (how a thrown null is told from an out-of-memory; oom.rs).
  function start(main) {
    if (typeof main !== "function") {
      host.finish("error", describeError(new TypeErrorCtor("the code did not compile to a function body")));
      return undefined;
    }
    try {
      return main();
    } catch (e) {
      host.finish("error", describeError(e));
      return undefined;
    }
  }

  // The main promise settled: report it from a job of its own, behind the jobs queued before.
  function settle(p) {
    apply(promiseThen, p, [finishValue, (e) => host.finish("error", describeError(e))]);
  }

  return ObjectFreeze({ start, settle, deliver, fireTimer, describeError });
});
