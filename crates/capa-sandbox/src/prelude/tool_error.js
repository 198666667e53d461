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

