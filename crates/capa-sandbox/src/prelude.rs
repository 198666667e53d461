//! The prelude (the JavaScript in `prelude/`) and what it is given: the host object whose
//! functions the guest's calls, lookups, console and end reach Rust through, and the run's
//! configuration (namespaces, logical clock, seed, absent globals).
//!
//! It is called in two steps, so that a warm sandbox (`pool.rs`) can take the first ahead:
//! [`prepare`] compiles and calls it with what is the same for every run; [`install`] gives it
//! the run's own when the run starts. Between them, [`prime`] may define the namespaces the
//! run will have (`primed.rs`).

use std::cell::RefCell;
use std::rc::Rc;

use rquickjs::context::EvalOptions;
use rquickjs::{Ctx, Function, Object, Persistent};

use crate::lookups::Lookup;
use crate::oom::Watch;
use crate::state::{Finish, State};
use crate::{Namespace, RunInput};

/// The longest handle `hub.read` takes (the hub's are `h_` and 32 hex digits).
const MAX_HANDLE_BYTES: usize = 64;
/// The longest options `hub.read` takes, as JSON: a path of 1,024 characters, escaped.
const MAX_READ_OPTIONS_BYTES: usize = 8 * 1024;
/// The longest URI `hub.resource` takes.
const MAX_URI_BYTES: usize = 8 * 1024;

/// The prelude's one function expression, kept one file per job and joined here in this order
/// (each file is a part of the function's body; `captured.js` opens it and `run.js` closes it).
/// Stack frames in it name the file `prelude.js`.
const PRELUDE: &str = concat!(
    include_str!("prelude/captured.js"),
    include_str!("prelude/tool_error.js"),
    include_str!("prelude/host_calls.js"),
    include_str!("prelude/namespaces.js"),
    include_str!("prelude/clock.js"),
    include_str!("prelude/random.js"),
    include_str!("prelude/console.js"),
    include_str!("prelude/structured_clone.js"),
    include_str!("prelude/text_encoding.js"),
    include_str!("prelude/base64.js"),
    include_str!("prelude/absent.js"),
    include_str!("prelude/run.js"),
);
/// Globals QuickJS defines that the sandbox removes (besides the Function constructors, which
/// the prelude turns into stubs). `fetch`, `process`, `Buffer`, `require`, `URL`, `std`, `os`,
/// `WebAssembly` are never defined: no such intrinsic is added to the context.
const ABSENT: &[&str] = &["eval", "Function", "Atomics", "SharedArrayBuffer"];
const MAX_TIMER_MS: u64 = 30_000;

/// The prelude called, before the run is known: the object its bridge functions go on when the
/// run starts, and the API the event loop calls (configure, start, settle, deliver, fire a
/// timer).
pub(crate) struct Prepared {
    host: Persistent<Object<'static>>,
    api: Persistent<Object<'static>>,
}

/// Compiles the prelude's function expression and calls it with an empty host object and what is
/// the same for every run. Runs no guest code and knows nothing of a run.
pub(crate) fn prepare(ctx: &Ctx<'_>) -> rquickjs::Result<Prepared> {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = true;
    options.filename = Some("prelude.js".into());
    let prelude: Function = ctx.eval_with_options(PRELUDE, options)?;
    let host = Object::new(ctx.clone())?;
    let config = serde_json::json!({
        "maxTimerMs": MAX_TIMER_MS,
        "absent": ABSENT,
    });
    let config = ctx.json_parse(config.to_string())?;
    let api: Object = prelude.call((host.clone(), config))?;
    Ok(Prepared {
        host: Persistent::save(ctx, host),
        api: Persistent::save(ctx, api),
    })
}

/// The namespaces as the prelude takes them: `[{ global, tools: [[member, address, remote
/// name]], unlisted }]`.
fn namespaces_json(namespaces: &[Namespace]) -> serde_json::Value {
    namespaces
        .iter()
        .map(|ns| {
            serde_json::json!({
                "global": ns.global,
                "tools": ns.tools.iter().map(|t| [t.member.as_str(), t.address.as_str(), t.remote_name()]).collect::<Vec<_>>(),
                "unlisted": ns.unlisted_source,
            })
        })
        .collect()
}

/// Defines `namespaces` in a prepared prelude before its run is known (a warm sandbox primed
/// with the sources of the runs before it, `pool.rs`). What defining them tells (a source that
/// shadows a built-in global) is told to the run that takes the sandbox.
pub(crate) fn prime(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    namespaces: &[Namespace],
) -> rquickjs::Result<()> {
    let namespaces = ctx.json_parse(namespaces_json(namespaces).to_string())?;
    let api = prepared.api.clone().restore(ctx)?;
    let prime: Function = api.get("prime")?;
    prime.call::<_, ()>((namespaces,))
}

/// Starts the run in a prepared prelude: the host object gets the run's bridge functions, and
/// `configure` the run's logical clock, seed and namespaces (unless `primed`: the sandbox has
/// the run's namespaces already). Returns the API.
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    prepared: Prepared,
    input: &RunInput,
    primed: bool,
    state: &Rc<RefCell<State>>,
    watch: &Rc<Watch>,
) -> rquickjs::Result<Persistent<Object<'static>>> {
    let host = prepared.host.restore(ctx)?;
    let s = Rc::clone(state);
    host.set(
        "call",
        Function::new(
            ctx.clone(),
            move |address: String, args: String, connection: String| {
                s.borrow_mut().call(address, &args, connection)
            },
        )?,
    )?;
    install_lookups(ctx, &host, state)?;
    let s = Rc::clone(state);
    host.set(
        "log",
        Function::new(ctx.clone(), move |line: String| s.borrow_mut().log(line))?,
    )?;
    let s = Rc::clone(state);
    host.set(
        "notice",
        Function::new(ctx.clone(), move |line: String| {
            s.borrow_mut().notices.push(line);
        })?,
    )?;
    let s = Rc::clone(state);
    let watched = Rc::clone(watch);
    host.set(
        "finish",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, kind: String, payload: String| {
                let finish = match kind.as_str() {
                    "value" => Finish::Value(payload),
                    "undefined" => Finish::Undefined,
                    "not_json" => Finish::NotJson(payload),
                    _ => Finish::Error {
                        record: payload,
                        // Judged now: a thrown `null` is an out-of-memory if the heap is
                        // still full.
                        heap_full: watched.heap_full(&ctx),
                    },
                };
                s.borrow_mut().set_finish(finish);
            },
        )?,
    )?;

    let run = serde_json::json!({
        "namespaces": if primed { serde_json::Value::Null } else { namespaces_json(&input.namespaces) },
        "clockStart": input.clock_start_ms,
        "seed": seed_words(input.seed),
    });
    let run = ctx.json_parse(run.to_string())?;
    watch.remember_internal_error(ctx)?;
    let api = prepared.api.restore(ctx)?;
    let configure: Function = api.get("configure")?;
    configure.call::<_, ()>((run,))?;
    Ok(Persistent::save(ctx, api))
}

/// `host.search`, `host.describe`, `host.read` and `host.resource`: the hub's lookups, each
/// checked and bounded here before it reaches the host.
fn install_lookups<'js>(
    ctx: &Ctx<'js>,
    host: &Object<'js>,
    state: &Rc<RefCell<State>>,
) -> rquickjs::Result<()> {
    let s = Rc::clone(state);
    host.set(
        "search",
        Function::new(ctx.clone(), move |q: String| {
            s.borrow_mut().lookup("hub.search", Ok(Lookup::Search(q)))
        })?,
    )?;
    let s = Rc::clone(state);
    host.set(
        "describe",
        Function::new(ctx.clone(), move |targets: String| {
            let asked = serde_json::from_str::<Vec<String>>(&targets)
                .map(Lookup::Describe)
                .map_err(|e| e.to_string());
            s.borrow_mut().lookup("hub.describe", asked)
        })?,
    )?;
    let s = Rc::clone(state);
    host.set(
        "read",
        Function::new(ctx.clone(), move |handle: String, options: String| {
            // A read waits its turn outside the guest's heap: what it holds is bounded here.
            let asked = if handle.len() > MAX_HANDLE_BYTES {
                Err(format!("hub.read: no handle is longer than {MAX_HANDLE_BYTES} bytes"))
            } else if options.len() > MAX_READ_OPTIONS_BYTES {
                Err(format!(
                    "hub.read: the options are longer than {MAX_READ_OPTIONS_BYTES} bytes; a path is at most 1,024 characters"
                ))
            } else {
                Ok(Lookup::Read { handle, options })
            };
            s.borrow_mut().lookup("hub.read", asked)
        })?,
    )?;
    let s = Rc::clone(state);
    host.set(
        "resource",
        Function::new(ctx.clone(), move |uri: String| {
            let asked = if uri.len() > MAX_URI_BYTES {
                Err(format!(
                    "hub.resource: no URI is longer than {MAX_URI_BYTES} bytes"
                ))
            } else {
                Ok(Lookup::Resource(uri))
            };
            s.borrow_mut().lookup("hub.resource", asked)
        })?,
    )?;
    Ok(())
}

/// splitmix64 of the seed, as four 32-bit words for the guest's xoshiro128**.
fn seed_words(seed: u64) -> [u32; 4] {
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let a = next();
    let b = next();
    #[expect(
        clippy::cast_possible_truncation,
        reason = "each 64-bit word splits into its low and high 32 bits"
    )]
    let words = [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32];
    words
}
