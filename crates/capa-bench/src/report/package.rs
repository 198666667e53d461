//! The package's section of `docs/benchmarks.md`.

use std::fmt::Write;

use super::verdict;
use crate::package::PackageSize;

/// The size issue 40 set out from (the local CI run of 2026-12-06 at 593384b): two programs with
/// the whole hub each (`capa` 66.4 MB and the app 69.0 MB, stripped) and the model in f32.
const BEFORE_ONE_PROGRAM_INSTALLED_MIB: f64 = 216.5;
const BEFORE_ONE_PROGRAM_DEB_MIB: f64 = 131.1;
/// One program, the model's vocabulary still in f32 (the CI run of 2026-12-06 at 7bbc3f9).
const BEFORE_PACKED_MODEL_INSTALLED_MIB: f64 = 140.4;
const BEFORE_PACKED_MODEL_DEB_MIB: f64 = 89.7;
/// One program, the model's vocabulary in 8 bits and its dense layers in f16, built without LTO
/// for speed (the CI run of 2026-12-06 at 759c6f6).
const BEFORE_SIZE_PROFILE_INSTALLED_MIB: f64 = 108.4;
const BEFORE_SIZE_PROFILE_DEB_MIB: f64 = 60.8;
/// Issue 40's targets.
const TARGET_INSTALLED_MIB: f64 = 60.0;
const TARGET_DEB_MIB: f64 = 35.0;

#[allow(clippy::cast_precision_loss)] // sizes far below 2^52
fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

pub(crate) fn package(size: &PackageSize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n## The installed package\n");
    let _ = writeln!(
        s,
        "`{}` as `npm run desktop:deb` builds it: the `dist` profile (built for size: fat LTO, \
         one codegen unit, `opt-level` z with the hot crates at s or 3, symbols stripped; \
         Cargo.toml), read with `dpkg-deb`. One program (docs/desktop.md): `capa` and \
         `capabilities` are wrappers that run the app's binary as the command line. Before that \
         (two programs, each with the whole hub) it installed {BEFORE_ONE_PROGRAM_INSTALLED_MIB} MiB \
         from a {BEFORE_ONE_PROGRAM_DEB_MIB} MiB .deb; one program with the model's vocabulary \
         table in f32, {BEFORE_PACKED_MODEL_INSTALLED_MIB} MiB from {BEFORE_PACKED_MODEL_DEB_MIB} \
         MiB; with the model's dense layers in f16 and the release profile without LTO, \
         {BEFORE_SIZE_PROFILE_INSTALLED_MIB} MiB from {BEFORE_SIZE_PROFILE_DEB_MIB} MiB.\n",
        size.file_name
    );
    #[allow(clippy::cast_precision_loss)]
    let installed = size.installed_kib as f64 / 1024.0;
    let download = mib(size.deb_bytes);
    let _ = writeln!(s, "| issue 40's target | measured (MiB) | verdict |");
    let _ = writeln!(s, "|---|---:|---|");
    let _ = writeln!(
        s,
        "| installed (dpkg `Installed-Size`) ≤ {TARGET_INSTALLED_MIB} MiB | {installed:.1} | {} |",
        verdict(installed <= TARGET_INSTALLED_MIB)
    );
    let _ = writeln!(
        s,
        "| the .deb file (the download) ≤ {TARGET_DEB_MIB} MiB | {download:.1} | {} |\n",
        verdict(download <= TARGET_DEB_MIB)
    );
    let _ = writeln!(s, "| what | size (MiB) |");
    let _ = writeln!(s, "|---|---:|");
    for (name, bytes) in &size.programs {
        let _ = writeln!(s, "| `/usr/bin/{name}` | {:.2} |", mib(*bytes));
    }
    let _ = writeln!(
        s,
        "| the search model's files | {:.1} |",
        mib(size.model_bytes)
    );
    s
}
