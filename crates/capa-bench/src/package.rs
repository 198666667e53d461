//! The installed package's size (issue 18: "the installed package is whole and lean"): the .deb
//! that `npm run desktop:deb` built, as dpkg reports it, and each program it installs.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// What the package weighs.
#[derive(Debug)]
pub(crate) struct PackageSize {
    pub(crate) file_name: String,
    /// The .deb file itself.
    pub(crate) deb_bytes: u64,
    /// dpkg's `Installed-Size` (KiB).
    pub(crate) installed_kib: u64,
    /// Each file under `usr/bin/` and its size in bytes.
    pub(crate) programs: Vec<(String, u64)>,
    /// The search model's files (`usr/lib/Capabilities/models/`), bytes.
    pub(crate) model_bytes: u64,
}

/// Reads `deb` with `dpkg-deb`.
pub(crate) fn measure(deb: &Path) -> anyhow::Result<PackageSize> {
    let deb_bytes = std::fs::metadata(deb)
        .with_context(|| format!("reading {}", deb.display()))?
        .len();
    let installed = dpkg_deb(&["-f", &deb.to_string_lossy(), "Installed-Size"])?;
    let installed_kib = installed
        .trim()
        .parse()
        .with_context(|| format!("Installed-Size of {} is {installed:?}", deb.display()))?;
    let listing = dpkg_deb(&["-c", &deb.to_string_lossy()])?;
    Ok(PackageSize {
        file_name: deb
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        deb_bytes,
        installed_kib,
        programs: programs(&listing),
        model_bytes: bytes_under(&listing, "usr/lib/Capabilities/models/"),
    })
}

/// The bytes of the files under `dir` (`usr/lib/…/`) in a `dpkg-deb -c` listing, whose paths
/// may start with `./` or not (dpkg-deb lists an archive's paths as they were written).
fn bytes_under(listing: &str, dir: &str) -> u64 {
    listing
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let size: u64 = fields.nth(2)?.parse().ok()?;
            let path = fields.nth(2)?;
            path.strip_prefix("./")
                .unwrap_or(path)
                .starts_with(dir)
                .then_some(size)
        })
        .sum()
}

fn dpkg_deb(args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("dpkg-deb")
        .args(args)
        .output()
        .context("running dpkg-deb (Debian's dpkg package)")?;
    if !out.status.success() {
        bail!(
            "dpkg-deb {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `usr/bin/*` from a `dpkg-deb -c` listing (`-rwxr-xr-x root/root 48148336 2026-12-02 01:56 ./usr/bin/capa`).
fn programs(listing: &str) -> Vec<(String, u64)> {
    listing
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let size = fields.nth(2)?.parse().ok()?;
            let path = fields.nth(2)?;
            let name = path
                .strip_prefix("./")
                .unwrap_or(path)
                .strip_prefix("usr/bin/")?;
            (!name.is_empty()).then(|| (name.to_owned(), size))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_models_bytes_are_summed_from_the_listing() {
        let listing = "-rw-r--r-- root/root 90868376 2026-12-02 01:56 ./usr/lib/Capabilities/models/m/model.safetensors\n\
            -rw-r--r-- root/root      612 2026-12-02 01:56 ./usr/lib/Capabilities/models/m/config.json\n\
            -rw-r--r-- root/root      700 2026-12-02 01:56 ./usr/lib/Capabilities/ui/index.html\n";
        assert_eq!(
            bytes_under(listing, "usr/lib/Capabilities/models/"),
            90_868_988
        );
        // As this machine's dpkg-deb lists a Tauri-built package: without the `./`.
        let bare = "-rw-r--r-- root/root 69039040 2026-12-06 09:20 usr/lib/Capabilities/models/m/model.safetensors\n\
            -rwxr-xr-x root/root 77485800 2026-12-06 09:20 usr/bin/capabilities-desktop\n\
            -rwxr-xr-x root/root      420 2026-12-06 09:20 usr/bin/capa\n";
        assert_eq!(
            bytes_under(bare, "usr/lib/Capabilities/models/"),
            69_039_040
        );
        assert_eq!(
            programs(bare),
            [
                ("capabilities-desktop".to_owned(), 77_485_800),
                ("capa".to_owned(), 420)
            ]
        );
    }

    #[test]
    fn programs_are_read_from_the_listing() {
        let listing = "drwxr-xr-x root/root         0 2026-12-02 01:56 ./usr/bin/\n\
            -rwxr-xr-x root/root  48148336 2026-12-02 01:56 ./usr/bin/capa\n\
            -rwxr-xr-x root/root       210 2026-12-02 01:56 ./usr/bin/capabilities\n\
            -rw-r--r-- root/root      4100 2026-12-02 01:56 ./usr/share/applications/Capabilities.desktop\n";
        assert_eq!(
            programs(listing),
            [
                ("capa".to_owned(), 48_148_336),
                ("capabilities".to_owned(), 210)
            ]
        );
    }
}
