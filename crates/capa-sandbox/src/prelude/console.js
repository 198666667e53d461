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

