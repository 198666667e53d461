  // ------------------------------------------------------------------ seeded randomness

  // xoshiro128** seeded by Rust (splitmix64 of the run's seed), through `seedRandom` when the
  // run starts (`configure`, run.js).
  let s0 = 1;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;

  function seedRandom(seed) {
    s0 = seed[0] >>> 0;
    s1 = seed[1] >>> 0;
    s2 = seed[2] >>> 0;
    s3 = seed[3] >>> 0;
    if ((s0 | s1 | s2 | s3) === 0) s0 = 1;
  }

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

