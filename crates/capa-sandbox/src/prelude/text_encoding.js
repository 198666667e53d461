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

