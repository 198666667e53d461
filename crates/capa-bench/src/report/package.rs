//! The package's section of `docs/benchmarks.md`.

use std::fmt::Write;

use crate::package::PackageSize;

/// The size issue 40 set out from (the local CI run of 2026-12-06 at 593384b): two programs with
/// the whole hub each (`capa` 66.4 MB and the app 69.0 MB, stripped) and the model in f32.
const BEFORE_ONE_PROGRAM_INSTALLED_MIB: f64 = 216.5;
const BEFORE_ONE_PROGRAM_DEB_MIB: f64 = 131.1;
/// One program, the model's vocabulary still in f32 (the CI run of 2026-12-06 at 7bbc3f9).
const BEFORE_PACKED_MODEL_INSTALLED_MIB: f64 = 140.4;
const BEFORE_PACKED_MODEL_DEB_MIB: f64 = 89.7;
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
        "`{}` as `npm run desktop:deb` builds it: the `dist` profile (symbols stripped, no LTO; \
         Cargo.toml), read with `dpkg-deb`. One program (docs/desktop.md): `capa` and \
         `capabilities` are wrappers that run the app's binary as the command line. Before that \
         (two programs, each with the whole hub) it installed {BEFORE_ONE_PROGRAM_INSTALLED_MIB} MiB \
         from a {BEFORE_ONE_PROGRAM_DEB_MIB} MiB .deb; one program with the model's vocabulary \
         table in f32, {BEFORE_PACKED_MODEL_INSTALLED_MIB} MiB from {BEFORE_PACKED_MODEL_DEB_MIB} \
         MiB. Issue 40's targets: {TARGET_INSTALLED_MIB} MiB installed, {TARGET_DEB_MIB} MiB \
         download.\n",
        size.file_name
    );
    let _ = writeln!(s, "| what | size (MiB) |");
    let _ = writeln!(s, "|---|---:|");
    #[allow(clippy::cast_precision_loss)]
    let installed = size.installed_kib as f64 / 1024.0;
    let _ = writeln!(s, "| installed (dpkg `Installed-Size`) | {installed:.1} |");
    let _ = writeln!(s, "| the .deb file | {:.1} |", mib(size.deb_bytes));
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
