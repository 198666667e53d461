//! The prelude (the JavaScript in `prelude/`) and what it is given: the host object whose
//! functions the guest's calls, lookups, console and end reach Rust through, and the run's
//! configuration (namespaces, logical clock, seed, absent globals).
//!
//! It is called in two steps, so that a warm sandbox (`pool.rs`) can take the first ahead:
//! [`prepare`] loads it (compiled once per process) and calls it with what is the same for every
//! run; [`install`] gives it the run's own when the run starts. Between them, [`prime`] may
//! define the namespaces the run will have (`primed.rs`).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::OnceLock;

use rquickjs::{Context, Ctx, Function, Module, Object, Persistent, Runtime, Value, WriteOptions};

use crate::host_object::{RunSlot, host_object};
use crate::oom::Watch;
use crate::state::State;
use crate::{Namespace, RunInput};

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

/// The prelude called, before the run is known: the API the event loop calls (configure, start,
/// settle, deliver, fire a timer), and the slot its host functions find the run in.
pub(crate) struct Prepared {
    api: Persistent<Object<'static>>,
    /// The run the host object's functions serve, once it starts.
    run: Rc<RunSlot>,
}

/// The prelude compiled once in this process, to QuickJS bytecode: a module that hands the
/// prelude's function over through a global property, which [`load`] takes and deletes.
/// Compiling its 47 KB of source took about 3 ms of a core for every warm sandbox (QuickJS's
/// tokenizer and scope resolution led the profiles of a hub under back-to-back runs); reading
/// the bytecode skips the parser.
static BYTECODE: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();

/// The global property the module leaves the prelude's function in, for [`load`] alone.
const HANDED_OVER: &str = "__capaPrelude";

/// The module's source. It exports nothing: a module stays in its context's list of loaded
/// modules, where the guest's `import("prelude.js")` finds it, and then gets an empty namespace
/// (`tests/it/absent.rs`).
fn module_source() -> String {
    format!("globalThis.{HANDED_OVER} = {PRELUDE};")
}

/// [`BYTECODE`], compiled on first use in a runtime of its own (no sandbox's limits apply).
fn bytecode() -> rquickjs::Result<&'static [u8]> {
    let made = BYTECODE.get_or_init(|| {
        let compile = || -> rquickjs::Result<Vec<u8>> {
            let runtime = Runtime::new()?;
            let context = Context::full(&runtime)?;
            context.with(|ctx| {
                Module::declare(ctx, "prelude.js", module_source())?.write(WriteOptions::default())
            })
        };
        compile().map_err(|e| e.to_string())
    });
    made.as_deref()
        .map_err(|e| rquickjs::Error::new_from_js_message("prelude.js", "bytecode", e.clone()))
}

/// The prelude's function in `ctx`, from [`BYTECODE`].
fn load<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
    let bytes = bytecode()?;
    // SAFETY: the bytes are what `Module::write` made of the prelude's own source, with this
    // build's QuickJS, in this process, and are never changed: valid bytecode. QuickJS may
    // keep pointers into them for as long as the module lives (it reads them as ROM data);
    // they are in a static, never freed.
    #[expect(
        unsafe_code,
        reason = "QuickJS reads bytecode only through an unsafe call; the bytes are our own"
    )]
    let module = unsafe { Module::load(ctx.clone(), bytes)? };
    let (_module, evaluated) = module.eval()?;
    // A module without top-level `await` is evaluated when `eval` returns; this surfaces an
    // exception thrown while it was.
    evaluated.finish::<()>()?;
    let globals = ctx.globals();
    let prelude: Function = globals.get(HANDED_OVER)?;
    globals.remove(HANDED_OVER)?;
    Ok(prelude)
}

/// Loads the prelude's function and calls it with the host object (its functions serve the
/// run that will take the sandbox) and what is the same for every run. Runs no guest code and
/// knows nothing of a run.
pub(crate) fn prepare(ctx: &Ctx<'_>) -> rquickjs::Result<Prepared> {
    let prelude = load(ctx)?;
    let run = Rc::new(RunSlot::default());
    let host = host_object(ctx, &run)?;
    let config = serde_json::json!({
        "maxTimerMs": MAX_TIMER_MS,
        "absent": ABSENT,
    });
    let config = ctx.json_parse(config.to_string())?;
    let api: Object = prelude.call((host.clone(), config))?;
    Ok(Prepared {
        api: Persistent::save(ctx, api),
        run,
    })
}

/// The namespaces as the prelude takes them: `[{ global, tools: [[member, address, remote
/// name]], unlisted }]`.
fn namespaces_value<'js>(ctx: &Ctx<'js>, namespaces: &[Namespace]) -> rquickjs::Result<Value<'js>> {
    let json: serde_json::Value = namespaces
        .iter()
        .map(|ns| {
            serde_json::json!({
                "global": ns.global,
                "tools": ns.tools.iter().map(|t| [t.member.as_str(), t.address.as_str(), t.remote_name()]).collect::<Vec<_>>(),
                "unlisted": ns.unlisted_source,
            })
        })
        .collect();
    ctx.json_parse(json.to_string())
}

/// Defines `namespaces` in a prepared prelude before its run is known (a warm sandbox primed
/// with the sources of the runs before it, `pool.rs`). What defining them tells (a source that
/// shadows a built-in global) is told to the run that takes the sandbox.
pub(crate) fn prime(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    namespaces: &[Namespace],
) -> rquickjs::Result<()> {
    let namespaces = namespaces_value(ctx, namespaces)?;
    let api = prepared.api.clone().restore(ctx)?;
    let prime: Function = api.get("prime")?;
    prime.call::<_, ()>((namespaces,))
}

/// Starts the run in a prepared prelude: the host object's functions now serve the run, and
/// `configure` gets the run's logical clock, seed and namespaces (unless `primed`: the sandbox has
/// the run's namespaces already). Returns the API.
pub(crate) fn install(
    ctx: &Ctx<'_>,
    prepared: Prepared,
    input: &RunInput,
    primed: bool,
    state: &Rc<RefCell<State>>,
    watch: &Rc<Watch>,
) -> rquickjs::Result<Persistent<Object<'static>>> {
    prepared.run.bind(Rc::clone(state));

    // Plain values, no JSON: the namespaces only when the sandbox was not primed with them.
    let namespaces = if primed {
        Value::new_null(ctx.clone())
    } else {
        namespaces_value(ctx, &input.namespaces)?
    };
    watch.remember_internal_error(ctx)?;
    let api = prepared.api.restore(ctx)?;
    let configure: Function = api.get("configure")?;
    #[expect(
        clippy::cast_precision_loss,
        reason = "epoch milliseconds are exact in an f64 for the next 285,000 years"
    )]
    let clock_start = input.clock_start_ms as f64;
    let seed = seed_words(input.seed).to_vec();
    configure.call::<_, ()>((clock_start, seed, namespaces))?;
    Ok(Persistent::save(ctx, api))
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
