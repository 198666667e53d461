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

