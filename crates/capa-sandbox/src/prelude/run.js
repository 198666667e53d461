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

  // What defining the primed namespaces had to tell, for the run that takes this sandbox.
  const primedNotices = [];
  let primed = false;

  // A warm sandbox, before any run: the namespaces of the runs before it (pool.rs), which the
  // run that takes it has too.
  function prime(namespaces) {
    primed = true;
    defineNamespaces(namespaces, (line) => pushTo(primedNotices, line));
  }

  // The run starts: its clock, seed (four 32-bit words) and namespaces (the host's functions
  // serve it from now on). `namespaces` is null in a primed sandbox, whose namespaces are the
  // run's already.
  function configure(clockStart, seed, namespaces) {
    now = clockStart;
    seedRandom(seed);
    if (namespaces === null && primed) {
      for (let i = 0; i < primedNotices.length; i++) host.notice(primedNotices[i]);
    } else {
      defineNamespaces(namespaces, (line) => host.notice(line));
    }
  }

  return ObjectFreeze({ configure, prime, start, settle, deliver, fireTimer, describeError });
});
