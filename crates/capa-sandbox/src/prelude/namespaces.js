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

  // A source whose tools are not known yet, because it waits for a person (a first sign-in):
  // every member is a call of `<source>.<member>`, which the host pauses until the person
  // acted; the replay after that meets the real tools. Names generic code reads off any object
  // (`then`, `toJSON`, …) are not members, so `await notes` or JSON.stringify(notes) make no call.
  function unlistedNamespace(global, source) {
    // An object like a listed source's, so that `${notes}` or notes.hasOwnProperty behave alike.
    const target = {};
    ObjectFreeze(target);
    const fns = ObjectCreate(null);
    const readOnly = () => {
      throw new TypeErrorCtor(`${global} is read-only`);
    };
    return new ProxyCtor(target, {
      get(t, key, receiver) {
        if (typeof key === "symbol" || passthrough[key] === true) return ReflectGet(t, key, receiver);
        let fn = fns[key];
        if (fn === undefined) {
          const address = `${source}.${key}`;
          fn = (input, options) => {
            try {
              return callTool(address, input, options);
            } catch (e) {
              return rejected(e);
            }
          };
          defineProperty(fn, "name", { value: key });
          fns[key] = fn;
        }
        return fn;
      },
      has(t, key) {
        return (typeof key === "string" && passthrough[key] !== true) || ReflectHas(t, key);
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

  // The run's namespaces, defined when the run starts (`configure`, run.js) or, in a warm
  // sandbox primed with the sources of the runs before it, ahead of the run (`prime`, pool.rs):
  // the prelude itself runs before any run is known. `notice` takes what the run is told.
  function defineNamespaces(namespaces, notice) {
    for (let i = 0; i < namespaces.length; i++) {
      const ns = namespaces[i];
      if (reserved[ns.global] === true) {
        notice(`the source "${ns.global}" shadows a built-in global, so it is not available in code`);
        continue;
      }
      reserved[ns.global] = true;
      if (typeof ns.unlisted === "string") {
        defineGlobal(ns.global, unlistedNamespace(ns.global, ns.unlisted));
        continue;
      }
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

  // Options are copied key by key from the object's own keys, not passed: a getter runs once and
  // a prototype adds nothing. A misspelt option (`offest`) fails here rather than reading from 0,
  // and a number JSON cannot carry (NaN, Infinity) is refused rather than sent as `null`; the host
  // checks each value's type again.
  function hubRead(handle, options) {
    try {
      if (typeof handle !== "string") {
        throw new TypeErrorCtor('hub.read(handle, options) takes a handle from an envelope\'s `handles` ("h_…")');
      }
      if (options !== undefined && (options === null || typeof options !== "object" || isArray(options))) {
        throw new TypeErrorCtor("hub.read options are an object: { offset, length } or { path }");
      }
      // No prototype: a setter or `toJSON` the guest put on Object.prototype plays no part.
      const picked = ObjectCreate(null);
      if (options !== undefined) {
        const keys = ObjectKeys(options);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i];
          if (key !== "offset" && key !== "length" && key !== "path") {
            throw new TypeErrorCtor(`hub.read has no option \`${wf(key)}\`: the options are offset, length and path`);
          }
          const value = options[key];
          if (value === undefined) continue;
          if (typeof value === "number" && (value !== value || value === Infinity || value === -Infinity)) {
            throw new TypeErrorCtor(`hub.read's \`${key}\` is a whole number, not ${value}`);
          }
          picked[key] = typeof value === "string" ? wf(value) : value;
        }
      }
      return awaitOp(host.read(wf(handle), JSONstringify(picked)), "hub.read");
    } catch (e) {
      return rejected(e);
    }
  }

  function hubResource(uri) {
    try {
      if (typeof uri !== "string") {
        throw new TypeErrorCtor('hub.resource(uri) takes a resource URI ("file:///notes.md")');
      }
      return awaitOp(host.resource(wf(uri)), "hub.resource");
    } catch (e) {
      return rejected(e);
    }
  }

  defineGlobal(
    "hub",
    frozenNamespace("hub", [
      ["search", hubSearch],
      ["describe", hubDescribe],
      ["read", hubRead],
      ["resource", hubResource],
    ]),
  );

  function defineBuiltin(name, value) {
    defineProperty(G, name, { value, writable: true, enumerable: false, configurable: true });
  }

  defineBuiltin("ToolError", ToolError);

