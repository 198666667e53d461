//! Bounds on what an upstream sends the hub (docs/limits.md says why each value).
//!
//! An upstream is a program the user installed, not a trusted one: a bug or a hostile server
//! must not grow the hub without bound. One message is capped while it streams in; a tool list
//! is capped in tools, pages and bytes, and each tool in its name, title, description and
//! schemas (applied in `tool_list.rs`). Each cut is described once per listing (the first
//! [`MAX_CUT_NOTES`], the rest counted), logged and reported in the source's status.

/// One message from an upstream (a stdio line, an HTTP JSON body, an SSE event): 8 MiB. The
/// model sees at most 24 KB of a run's result inline, so a larger answer helps only code that
/// filters it, and the guest's 64 MB heap holds a parsed answer of 8 MiB a few times over; it
/// still leaves room for screenshots and file reads, the largest real answers we know.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;
/// Tools kept per source. The largest real server in our catalogs lists a few hundred; 5,000
/// keeps search and the sandbox's namespaces fast while no real server comes close.
pub const MAX_TOOLS: usize = 5_000;
/// Pages of `tools/list` read per listing: a server that hands out cursors forever stops here.
pub const MAX_TOOL_PAGES: usize = 100;
/// Bytes of all kept tool definitions of a source together, as JSON. Each page is bounded by
/// [`MAX_MESSAGE_BYTES`] already; this bounds what the hub holds for one source.
pub const MAX_TOOL_LIST_BYTES: usize = 16 * 1024 * 1024;
/// A tool's name; the MCP spec asks for at most 128 characters. Longer names are skipped
/// (a cut name would call another tool, or none).
pub const MAX_TOOL_NAME_BYTES: usize = 128;
/// A tool's description: 16 KiB, over twice the longest in our catalogs (6.3 KB). Longer ones
/// are cut, ending in `…`, within this many bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
/// A tool's title (its own and its annotations'), cut like descriptions.
pub const MAX_TITLE_BYTES: usize = 256;
/// A tool's input or output schema as JSON: 256 KiB, five times the largest in our catalogs
/// (49 KB). A tool whose input schema is larger is skipped (its arguments could not be typed or
/// checked); a larger output schema is dropped and the tool kept, its result untyped.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// The deepest nesting of arrays and objects in one message that rmcp's JSON decoder
/// (`serde_json`, whose recursion limit is 128) reads; a deeper line is dropped by it like an
/// oversized one (a test pins the value).
pub const MAX_JSON_DEPTH: u32 = 127;
/// Levels of nesting kept below a tool in a tool list (its input schema's root is level 1):
/// deeper parts are cut as they stream in, each replaced by an empty schema that says so
/// (`scan.rs`), so that the tool list parses and only the deep tool loses detail. The deepest
/// schema in our catalogs has 18 levels; TypeScript declarations stop at 32 levels of schemas.
pub const MAX_TOOL_NESTING: u32 = 64;

/// Cuts described one line each; past this many they are only counted (a server that sends a
/// million tools with overlong names must not fill the log and the status with a million
/// lines).
pub(crate) const MAX_CUT_NOTES: usize = 20;
