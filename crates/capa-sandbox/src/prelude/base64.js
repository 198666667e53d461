  // -------------------------------------------------------------------------- atob / btoa

  const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const b64Index = ObjectCreate(null);
  for (let i = 0; i < 64; i++) b64Index[b64[i]] = i;

  function btoa(data) {
    if (arguments.length === 0) throw new TypeErrorCtor("btoa takes 1 argument");
    const s = safeString(data);
    let out = "";
    for (let i = 0; i < s.length; i += 3) {
      const a = apply(charCodeAt, s, [i]);
      const b = i + 1 < s.length ? apply(charCodeAt, s, [i + 1]) : 0;
      const c = i + 2 < s.length ? apply(charCodeAt, s, [i + 2]) : 0;
      if (a > 255 || b > 255 || c > 255) {
        throw domError("btoa: the string contains characters outside of Latin1", "InvalidCharacterError");
      }
      out += b64[a >> 2] + b64[((a & 3) << 4) | (b >> 4)];
      out += i + 1 < s.length ? b64[((b & 15) << 2) | (c >> 6)] : "=";
      out += i + 2 < s.length ? b64[c & 63] : "=";
    }
    return out;
  }

  function atob(data) {
    if (arguments.length === 0) throw new TypeErrorCtor("atob takes 1 argument");
    let s = apply(StringReplace, safeString(data), [/[\t\n\f\r ]/g, ""]);
    if (s.length % 4 === 0) s = apply(StringReplace, s, [/==?$/, ""]);
    const invalid = () => domError("atob: the string is not valid base64", "InvalidCharacterError");
    if (s.length % 4 === 1) throw invalid();
    let out = "";
    let bits = 0;
    let acc = 0;
    for (let i = 0; i < s.length; i++) {
      const v = b64Index[s[i]];
      if (v === undefined) throw invalid();
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += fromCharCode((acc >> bits) & 255);
      }
    }
    return out;
  }

  defineBuiltin("btoa", btoa);
  defineBuiltin("atob", atob);

