//! Integration tests of the sandbox through its public API (one test binary).

mod support;

mod absent;
mod basic;
mod corpus;
mod determinism;
mod limits;
mod pool;
mod reads;
mod suspend;
