//! What a value the guest threw (or the engine left pending) means as a run error: its code,
//! message and the place in the model's code.

use rquickjs::Ctx;
use serde::Deserialize;

use crate::RunError;
use crate::guest_code::{CODE_FILE, WRAPPER_LINES};

/// The prelude's record of a thrown value (`describeError`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ThrownRecord {
    pub(crate) name: Option<String>,
    pub(crate) message: String,
    pub(crate) code: Option<String>,
    pub(crate) tool: bool,
    pub(crate) hint: Option<String>,
    pub(crate) stack: Option<String>,
    /// The thrown value was `null`: the guest's own `throw null`, or what QuickJS throws when it
    /// runs out of memory while building the out-of-memory error itself (`oom.rs` tells which).
    pub(crate) is_null: bool,
}

/// `line L, column C of the code` from the first stack frame in the model's code.
fn location(stack: &str) -> Option<String> {
    let marker = format!("{CODE_FILE}:");
    for frame in stack.lines() {
        let Some(at) = frame.find(&marker) else {
            continue;
        };
        let rest = &frame[at + marker.len()..];
        let mut parts = rest
            .split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty());
        let line: u32 = parts.next()?.parse().ok()?;
        let column: Option<u32> = parts.next().and_then(|c| c.parse().ok());
        let line = line.checked_sub(WRAPPER_LINES).filter(|l| *l >= 1)?;
        return Some(match column {
            Some(c) => format!("at line {line}, column {c} of the code"),
            None => format!("at line {line} of the code"),
        });
    }
    None
}

fn is_code(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The error of a run that ran out of memory.
pub(crate) fn memory_error() -> RunError {
    RunError {
        code: "memory_limit".into(),
        message: "the code used more memory than the sandbox allows".into(),
        hint: Some("Keep less data in memory: filter results as they arrive.".into()),
    }
}

/// The run error for a thrown value; `null_oom`: a thrown `null` was QuickJS's out-of-memory.
pub(crate) fn classify(t: ThrownRecord, syntax: bool, null_oom: bool) -> RunError {
    let name = t.name.as_deref().unwrap_or("");
    let location = t.stack.as_deref().and_then(location);
    if syntax && name == "SyntaxError" {
        return RunError {
            code: "syntax_error".into(),
            message: t.message,
            hint: location,
        };
    }
    // QuickJS's string length cap (2^30 characters) is reached before the heap limit when
    // strings are built as ropes: the same bomb, so the same code.
    if (name == "InternalError"
        && (t.message.starts_with("out of memory") || t.message == "string too long"))
        || (t.is_null && null_oom)
    {
        return memory_error();
    }
    if (name == "RangeError" && t.message == "Maximum call stack size exceeded")
        || (name == "InternalError" && t.message.starts_with("stack overflow"))
    {
        return RunError {
            code: "stack_overflow".into(),
            message: "the code recursed too deeply (stack overflow)".into(),
            hint: location.or(Some("Look for unbounded recursion.".into())),
        };
    }
    if t.tool {
        let code = t
            .code
            .filter(|c| is_code(c))
            .unwrap_or_else(|| "tool_error".into());
        return RunError {
            code,
            message: t.message,
            hint: t.hint.or(location),
        };
    }
    let message = match name {
        "" | "Error" => t.message,
        _ if t.message.starts_with(name) => t.message,
        _ => format!("{name}: {}", t.message),
    };
    RunError {
        code: "runtime_error".into(),
        message,
        hint: location,
    }
}

/// Describe the pending exception of `ctx` from Rust (when the prelude cannot be asked).
pub(crate) fn caught(ctx: &Ctx<'_>) -> ThrownRecord {
    let v = ctx.catch();
    let mut t = ThrownRecord::default();
    if let Some(obj) = v.as_object() {
        t.name = obj.get::<_, Option<String>>("name").ok().flatten();
        t.message = obj
            .get::<_, Option<String>>("message")
            .ok()
            .flatten()
            .unwrap_or_default();
        t.stack = obj.get::<_, Option<String>>("stack").ok().flatten();
    } else if v.is_null() {
        t.is_null = true;
        t.message = "null".into();
    } else if v.is_undefined() {
        t.message = "undefined".into();
    } else if let Some(s) = v.as_string() {
        t.message = s.to_string().unwrap_or_default();
    } else if let Some(b) = v.as_bool() {
        t.message = b.to_string();
    } else if let Some(n) = v.as_number() {
        t.message = n.to_string();
    } else {
        t.message = format!("{v:?}");
    }
    t
}
