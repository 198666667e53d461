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

