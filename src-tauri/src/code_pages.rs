//! Gives back the pages of the app's own code that are resident but unused (Linux).
//!
//! Start-up runs a great deal of code once (the hub, its sources, GTK's set-up), and the
//! kernel maps code in 64 KiB runs around each page touched; an app that then waits in the
//! tray keeps all of it resident: about 30 MiB of its 100 (docs/benchmarks.md). Those pages
//! are clean copies of the executable, so the process can drop them from its address space
//! (`madvise(MADV_DONTNEED)`): they stay in the page cache, where the kernel reclaims them
//! when memory runs short instead of holding them as the mapped code of a running program, and
//! a page used again is mapped back on its next access (a minor fault, no disk read while
//! cached). `MADV_PAGEOUT` would say "page out" more directly, but the kernel honours it on
//! file pages only for files the process owns or may write, not an installed app's.
//!
//! Only mappings that can hold nothing but the file's bytes are dropped: the executable's own,
//! private and not writable, with no anonymous (copy-on-write) page in them. Dropping a
//! relocated page (RELRO) would undo its relocation, so a mapping with any is left alone.

use std::ops::Range;
use std::path::Path;

/// Drops the resident pages of this process's executable that hold only the file's bytes, and
/// returns how many bytes were resident in them.
pub(crate) fn give_back() -> std::io::Result<u64> {
    let exe = std::env::current_exe()?;
    let smaps = std::fs::read_to_string("/proc/self/smaps")?;
    let mut given = 0;
    for mapping in droppable(&smaps, &exe) {
        drop_pages(&mapping.range)?;
        given += mapping.resident;
    }
    Ok(given)
}

/// One mapping whose pages may be dropped: its addresses and resident bytes.
#[derive(Debug, PartialEq, Eq)]
struct Droppable {
    range: Range<usize>,
    resident: u64,
}

/// The mappings of `exe` in `smaps` (the text of /proc/self/smaps) that are private, not
/// writable, hold resident pages and no anonymous ones.
fn droppable(smaps: &str, exe: &Path) -> Vec<Droppable> {
    let mut found = Vec::new();
    let mut current: Option<Mapping> = None;
    for line in smaps.lines() {
        if let Some(mapping) = Mapping::header(line) {
            found.extend(current.take().and_then(|m| m.droppable(exe)));
            current = Some(mapping);
        } else if let Some(mapping) = current.as_mut() {
            mapping.field(line);
        }
    }
    found.extend(current.and_then(|m| m.droppable(exe)));
    found
}

/// A mapping as smaps describes it, with the fields that decide whether it may be dropped.
#[derive(Debug)]
struct Mapping<'a> {
    range: Range<usize>,
    perms: &'a str,
    path: &'a str,
    rss_kib: Option<u64>,
    anonymous_kib: Option<u64>,
}

impl<'a> Mapping<'a> {
    /// Reads a mapping's first line: `start-end perms offset dev inode [path]`.
    fn header(line: &'a str) -> Option<Self> {
        let mut rest = line;
        let mut fields = [""; 5];
        for field in &mut fields {
            rest = rest.trim_start();
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            *field = &rest[..end];
            rest = &rest[end..];
        }
        let (start, end) = fields[0].split_once('-')?;
        let range = usize::from_str_radix(start, 16).ok()?..usize::from_str_radix(end, 16).ok()?;
        if fields[1].len() != 4 || range.is_empty() {
            return None;
        }
        Some(Self {
            range,
            perms: fields[1],
            path: rest.trim(),
            rss_kib: None,
            anonymous_kib: None,
        })
    }

    /// Takes in one `Name:   N kB` line of the mapping.
    fn field(&mut self, line: &str) {
        let Some((name, value)) = line.split_once(':') else {
            return;
        };
        let kib = || {
            value
                .trim()
                .strip_suffix("kB")
                .and_then(|n| n.trim().parse::<u64>().ok())
        };
        match name {
            "Rss" => self.rss_kib = kib(),
            "Anonymous" => self.anonymous_kib = kib(),
            _ => {}
        }
    }

    fn droppable(self, exe: &Path) -> Option<Droppable> {
        let private_read_only = self.perms.ends_with('p') && !self.perms.contains('w');
        // Both sizes must have been read: a mapping smaps did not describe whole is kept.
        let rss = self.rss_kib?;
        let clean = self.anonymous_kib? == 0;
        (private_read_only && clean && rss > 0 && Path::new(self.path) == exe).then(|| Droppable {
            range: self.range,
            resident: rss * 1024,
        })
    }
}

#[expect(
    unsafe_code,
    reason = "madvise is the only way to drop a mapping's resident pages without unmapping it"
)]
fn drop_pages(range: &Range<usize>) -> std::io::Result<()> {
    // SAFETY: `range` is a whole mapping of the executable, as /proc/self/smaps listed it:
    // private, not writable, with no anonymous page, so every page in it holds exactly the
    // file's bytes and MADV_DONTNEED only makes the next access read them again. The
    // executable stays mapped for the process's life, and nothing in the app makes its
    // segments writable after start-up (the loader's RELRO pass is over before `main`), so no
    // page can become anonymous between the read of smaps and this call.
    let done = unsafe {
        libc::madvise(
            range.start as *mut libc::c_void,
            range.end - range.start,
            libc::MADV_DONTNEED,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXE: &str = "/opt/Capabilities/capabilities-desktop";

    fn block(header: &str, rss: u64, anonymous: u64) -> String {
        format!(
            "{header}\nSize:               1000 kB\nRss:             {rss:>6} kB\nPss:                  0 kB\nPrivate_Dirty:    {anonymous:>6} kB\nAnonymous:       {anonymous:>6} kB\nVmFlags: rd mr mw me\n"
        )
    }

    #[test]
    fn only_the_executables_clean_read_only_mappings_are_dropped() {
        let smaps = [
            block(&format!("5000-6000 r--p 00000000 08:01 42 {EXE}"), 4, 0),
            block(&format!("6000-9000 r-xp 00001000 08:01 42 {EXE}"), 12, 0),
            // The relocated data (RELRO): read-only now, but copy-on-written at load.
            block(&format!("9000-a000 r--p 00004000 08:01 42 {EXE}"), 4, 4),
            block(&format!("a000-b000 rw-p 00005000 08:01 42 {EXE}"), 4, 4),
            // Nothing resident: nothing to give back.
            block(&format!("b000-c000 r--p 00006000 08:01 42 {EXE}"), 0, 0),
            // Another file, a shared mapping, an anonymous one.
            block(
                "c000-d000 r-xp 00000000 08:01 7 /usr/lib/libgtk-3.so.0",
                4,
                0,
            ),
            block(&format!("d000-e000 r--s 00000000 08:01 42 {EXE}"), 4, 0),
            block("e000-f000 rw-p 00000000 00:00 0", 4, 4),
        ]
        .concat();
        assert_eq!(
            droppable(&smaps, Path::new(EXE)),
            vec![
                Droppable {
                    range: 0x5000..0x6000,
                    resident: 4096
                },
                Droppable {
                    range: 0x6000..0x9000,
                    resident: 12 * 1024
                },
            ]
        );
    }

    #[test]
    fn a_path_with_spaces_is_read_whole() {
        let exe = "/home/a person/Capabilities app/capabilities-desktop";
        let smaps = block(&format!("6000-9000 r-xp 00001000 08:01 42   {exe}"), 12, 0);
        assert_eq!(droppable(&smaps, Path::new(exe)).len(), 1);
        assert!(droppable(&smaps, Path::new("/home/a person/Capabilities")).is_empty());
    }

    #[test]
    fn a_mapping_described_in_part_is_kept() {
        // No Anonymous line (an older kernel, a read cut short): it might hold relocated pages.
        let smaps = format!("6000-9000 r-xp 00001000 08:01 42 {EXE}\nRss: 12 kB\n");
        assert!(droppable(&smaps, Path::new(EXE)).is_empty());
    }

    #[test]
    fn the_running_test_gives_back_its_own_code_and_keeps_running() {
        // This test binary's code, resident since it started, is dropped; what runs after
        // (this test, the harness) comes back page by page, far less than was given back.
        let before = resident_clean_code();
        let given = give_back().expect("madvise on the test's own code");
        let after = resident_clean_code();
        assert!(given > 0, "the test binary had no resident clean code");
        assert!(
            after < before,
            "{after} bytes resident after, {before} before"
        );
    }

    fn resident_clean_code() -> u64 {
        let exe = std::env::current_exe().expect("exe");
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        droppable(&smaps, &exe).iter().map(|m| m.resident).sum()
    }
}
