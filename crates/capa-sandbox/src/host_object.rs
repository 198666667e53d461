//! The prelude's host object: the functions the guest's calls, lookups, console and end reach
//! Rust through.
//!
//! They are made with the sandbox, before any run (a warm sandbox, `pool.rs`), and find their
//! run in a [`RunSlot`] that `prelude::install` fills when the run starts: making nine function
//! objects on a thread that was parked for seconds took tens of microseconds of every run's
//! start. The prelude calls none of them before its run starts.

use std::cell::RefCell;
use std::rc::Rc;

use rquickjs::{Ctx, Function, Object};

use crate::lookups::Lookup;
use crate::state::{Finish, State};

/// The longest handle `hub.read` takes (the hub's are `h_` and 32 hex digits).
const MAX_HANDLE_BYTES: usize = 64;
/// The longest options `hub.read` takes, as JSON: a path of 1,024 characters, escaped.
const MAX_READ_OPTIONS_BYTES: usize = 8 * 1024;
/// The longest URI `hub.resource` takes.
const MAX_URI_BYTES: usize = 8 * 1024;

/// The run a sandbox's host functions serve: empty until it starts.
#[derive(Default)]
pub(crate) struct RunSlot {
    state: RefCell<Option<Rc<RefCell<State>>>>,
}

impl RunSlot {
    pub(crate) fn bind(&self, state: Rc<RefCell<State>>) {
        *self.state.borrow_mut() = Some(state);
    }

    fn state(&self) -> rquickjs::Result<Rc<RefCell<State>>> {
        self.state.borrow().clone().ok_or(rquickjs::Error::Unknown)
    }

    /// Hands a lookup (`hub.search` and its kin) to the run.
    fn lookup(&self, name: &str, asked: Result<Lookup, String>) -> rquickjs::Result<String> {
        Ok(self.state()?.borrow_mut().lookup(name, asked))
    }
}

/// The host object, its functions serving the run `slot` will hold.
pub(crate) fn host_object<'js>(
    ctx: &Ctx<'js>,
    slot: &Rc<RunSlot>,
) -> rquickjs::Result<Object<'js>> {
    let host = Object::new(ctx.clone())?;
    let s = Rc::clone(slot);
    host.set(
        "call",
        Function::new(
            ctx.clone(),
            move |address: String, args: String, connection: String| {
                Ok::<_, rquickjs::Error>(s.state()?.borrow_mut().call(address, &args, connection))
            },
        )?,
    )?;
    lookups(ctx, &host, slot)?;
    let s = Rc::clone(slot);
    host.set(
        "log",
        Function::new(ctx.clone(), move |line: String| {
            Ok::<_, rquickjs::Error>(s.state()?.borrow_mut().log(line))
        })?,
    )?;
    let s = Rc::clone(slot);
    host.set(
        "notice",
        Function::new(ctx.clone(), move |line: String| {
            s.state()?.borrow_mut().notices.push(line);
            Ok::<_, rquickjs::Error>(())
        })?,
    )?;
    let s = Rc::clone(slot);
    host.set(
        "finish",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, kind: String, payload: String| {
                let state = s.state()?;
                let finish = match kind.as_str() {
                    "value" => Finish::Value(payload),
                    "undefined" => Finish::Undefined,
                    "not_json" => Finish::NotJson(payload),
                    _ => Finish::Error {
                        record: payload,
                        // Judged now: a thrown `null` is an out-of-memory if the heap is
                        // still full.
                        heap_full: crate::oom::heap_full(&ctx),
                    },
                };
                state.borrow_mut().set_finish(finish);
                Ok::<_, rquickjs::Error>(())
            },
        )?,
    )?;
    Ok(host)
}

/// `host.search`, `host.describe`, `host.read` and `host.resource`: the hub's lookups, each
/// checked and bounded here before it reaches the host.
fn lookups<'js>(ctx: &Ctx<'js>, host: &Object<'js>, slot: &Rc<RunSlot>) -> rquickjs::Result<()> {
    let s = Rc::clone(slot);
    host.set(
        "search",
        Function::new(ctx.clone(), move |q: String| {
            s.lookup("hub.search", Ok(Lookup::Search(q)))
        })?,
    )?;
    let s = Rc::clone(slot);
    host.set(
        "describe",
        Function::new(ctx.clone(), move |targets: String| {
            let asked = serde_json::from_str::<Vec<String>>(&targets)
                .map(Lookup::Describe)
                .map_err(|e| e.to_string());
            s.lookup("hub.describe", asked)
        })?,
    )?;
    let s = Rc::clone(slot);
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
            s.lookup("hub.read", asked)
        })?,
    )?;
    let s = Rc::clone(slot);
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
            s.lookup("hub.resource", asked)
        })?,
    )?;
    Ok(())
}
