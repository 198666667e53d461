//! The package's section of `docs/benchmarks.md`.

use std::fmt::Write;

use crate::package::PackageSize;

/// The size the issue set out from: the unstripped release build without LTO (57 MB + 65 MB
/// programs, 117 MB installed), measured on 2026-12-01.
const BEFORE_INSTALLED_MIB: f64 = 117.0;

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
         Cargo.toml), read with `dpkg-deb`. Before this profile (release, unstripped, no LTO) it \
         installed {BEFORE_INSTALLED_MIB:.0} MiB.\n",
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
    s
}
