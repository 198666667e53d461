  // ------------------------------------------------------------------- the logical clock

  // The run's clock start, set when the run starts (`configure`, run.js).
  let now = 0;

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

  // A callback's throw ends the run from here, as a timer's does, rather than failing its job:
  // then only the engine fails a job (a handler's error rejects its promise), so a `null` that
  // fails one is QuickJS's out-of-memory (engine.rs), however much the failed job freed.
  const nativeQueueMicrotask = G.queueMicrotask;
  function queueMicrotask(callback) {
    if (typeof callback !== "function") return apply(nativeQueueMicrotask, undefined, [callback]);
    return apply(nativeQueueMicrotask, undefined, [() => {
      try {
        apply(callback, undefined, []);
      } catch (e) {
        host.finish("error", describeError(e));
      }
    }]);
  }
  if (typeof nativeQueueMicrotask === "function") defineBuiltin("queueMicrotask", queueMicrotask);

