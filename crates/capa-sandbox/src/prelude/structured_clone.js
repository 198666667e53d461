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

