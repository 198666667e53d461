//! Bounds on what a file may make the reader build. Real capabilities and policy files nest a
//! handful of levels and hold a few thousand values; these are far above that and far below what
//! would take the hub's stack or memory.

/// Lists and maps inside each other. The deepest real file is about six (`servers` → entry →
/// `def` → `env` → value); every walk over the tree after reading is bounded by this.
pub(crate) const MAX_DEPTH: usize = 32;

/// Values (scalars, lists and maps) in the whole document, counting each copy an alias makes,
/// so that a "billion laughs" file stops here instead of in memory.
pub(crate) const MAX_VALUES: usize = 100_000;

/// Bytes of scalar text, counting alias copies too; also the largest file read at all.
pub(crate) const MAX_TEXT_BYTES: usize = 16 << 20;

/// Problems listed for one file; past this, one line says how many more there are, so that a
/// badly broken (or hostile) file cannot flood the terminal or the log.
pub(crate) const MAX_ISSUES: usize = 100;
