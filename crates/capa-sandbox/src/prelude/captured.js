// The guest prelude: evaluated in every fresh context before the model's code.
//
// It is one function expression. Rust calls it with `host` (an object that gets its bridge
// functions when the run starts) and `config` (what is the same for every run), and keeps the
// object it returns (`configure`, `start`, `settle`, `deliver`, `fireTimer`, `describeError`).
// The call may come before the run is known (a warm sandbox, pool.rs): whatever is the run's own
// (the host's functions, namespaces, seed, clock start) comes through `host` and `configure`
// when it starts. Nothing of `host` or of that object is reachable from the guest: they live
// only in this closure.
//
// The function's text is kept one file per job in `prelude/`, concatenated in a fixed order by
// `prelude.rs` (`PRELUDE`): this file opens the function and captures what the others use; each
// later file is a part of its body, in the scope of everything before it; `run.js` closes it.
//
// Everything used after the guest starts is captured here first, so a guest that rewrites
// `Array.prototype`, `JSON` or `Promise` confuses only itself. Rust trusts nothing the guest can
// influence anyway: it checks addresses, counts calls and budgets logs on its own side.
(function (host, config) {
  "use strict";

  const G = globalThis;
  const ObjectCtor = Object;
  const ObjectCreate = Object.create;
  const ObjectFreeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const getPrototypeOf = Object.getPrototypeOf;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const getOwnPropertyNames = Object.getOwnPropertyNames;
  const ObjectKeys = Object.keys;
  const ObjectProtoToString = Object.prototype.toString;
  const hasOwn = Object.hasOwn;
  const isArray = Array.isArray;
  const apply = Reflect.apply;
  const ReflectGet = Reflect.get;
  const ReflectHas = Reflect.has;
  const ReflectConstruct = Reflect.construct;
  const ProxyCtor = Proxy;
  const JSONparse = JSON.parse;
  const JSONstringify = JSON.stringify;
  const StringCtor = String;
  const NumberCtor = Number;
  const isFinite = Number.isFinite;
  const fromCharCode = String.fromCharCode;
  const charCodeAt = String.prototype.charCodeAt;
  const StringSlice = String.prototype.slice;
  const toLowerCase = String.prototype.toLowerCase;
  const StringReplace = String.prototype.replace;
  const StringIncludes = String.prototype.includes;
  const toWellFormed = String.prototype.toWellFormed;
  const SymbolToString = Symbol.prototype.toString;
  const MathFloor = Math.floor;
  const MathMin = Math.min;
  const MathMax = Math.max;
  const MathImul = Math.imul;
  const PromiseCtor = Promise;
  const promiseThen = Promise.prototype.then;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const DOMExceptionCtor = typeof DOMException === "function" ? DOMException : undefined;
  const MapCtor = Map;
  const MapProto = Map.prototype;
  const mapGet = MapProto.get;
  const mapSet = MapProto.set;
  const mapHas = MapProto.has;
  const mapForEach = MapProto.forEach;
  const SetCtor = Set;
  const setAdd = Set.prototype.add;
  const setForEach = Set.prototype.forEach;
  const U8 = Uint8Array;
  const ArrayBufferCtor = ArrayBuffer;
  const arrayBufferSlice = ArrayBuffer.prototype.slice;
  const isView = ArrayBuffer.isView;
  const TypedArrayProto = getPrototypeOf(Uint8Array.prototype);
  const typedArrayTag = getOwnPropertyDescriptor(TypedArrayProto, Symbol.toStringTag).get;
  const typedArrayBuffer = getOwnPropertyDescriptor(TypedArrayProto, "buffer").get;
  const typedArrayOffset = getOwnPropertyDescriptor(TypedArrayProto, "byteOffset").get;
  const typedArrayByteLength = getOwnPropertyDescriptor(TypedArrayProto, "byteLength").get;
  const typedArrayLength = getOwnPropertyDescriptor(TypedArrayProto, "length").get;
  const arrayBufferByteLength = getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
  const DataViewCtor = DataView;
  const dataViewBuffer = getOwnPropertyDescriptor(DataView.prototype, "buffer").get;
  const dataViewOffset = getOwnPropertyDescriptor(DataView.prototype, "byteOffset").get;
  const dataViewByteLength = getOwnPropertyDescriptor(DataView.prototype, "byteLength").get;
  const OrigDate = Date;
  const dateGetTime = Date.prototype.getTime;
  const dateToString = Date.prototype.toString;
  const RegExpCtor = RegExp;
  const regexpSource = getOwnPropertyDescriptor(RegExp.prototype, "source").get;
  const regexpFlags = getOwnPropertyDescriptor(RegExp.prototype, "flags").get;
  const FunctionProto = Function.prototype;

  const MAX_TIMER_MS = config.maxTimerMs;
  const MAX_TIMERS = 10000;
  const MAX_MESSAGE = 4000;

  function clip(s, n) {
    return s.length > n ? apply(StringSlice, s, [0, n]) + "…" : s;
  }

  // A string for any thrown or logged value; guest code that runs here (toString, getters) can
  // throw, which gives a placeholder, or loop, which the compute limit stops.
  function safeString(v) {
    try {
      if (typeof v === "string") return v;
      if (typeof v === "symbol") return apply(SymbolToString, v, []);
      return StringCtor(v);
    } catch (e) {
      return "[a value that cannot be turned into a string]";
    }
  }

  // Strings handed to Rust must be valid UTF-8: lone surrogates become U+FFFD.
  function wf(s) {
    return apply(toWellFormed, s, []);
  }

  function pushTo(list, v) {
    list[list.length] = v;
  }

