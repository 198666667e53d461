//! Whether another process on this machine still runs: how a hub tells a discovery file or a
//! run left by a process that died from one that belongs to a live hub.

/// Whether process `pid` exists (and is not a zombie). Linux answers from `/proc` (in this pid
/// namespace: a process in another container looks gone); other Unix systems ask the kernel
/// with signal 0; elsewhere this says yes, so callers must not act on "alive" alone.
pub fn alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    if cfg!(target_os = "linux") {
        // `<pid> (<name>) <state> …`: a zombie (`Z`) or dead (`X`) process has closed its
        // sockets and ended its work already.
        return std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X") | None)
        });
    }
    signal_zero(pid)
}

/// How much later than the recorded start a process may seem to have started and still be the
/// one recorded: its start is known to the clock tick since boot, the boot time to the second,
/// and the wall clock may have been corrected since. A reused pid belongs to a process started
/// long after (the pid space has to wrap around first).
const START_SLACK_MS: i64 = 60_000;

/// Whether `pid` runs and is the process that was recorded at `since_ms` (epoch ms): a process
/// that started after that only reuses its pid. Where the start time cannot be read this is
/// [`alive`].
pub fn alive_since(pid: u32, since_ms: i64) -> bool {
    alive(pid) && started_ms(pid).is_none_or(|started| started <= since_ms + START_SLACK_MS)
}

/// When process `pid` started, in epoch milliseconds (Linux: `/proc/<pid>/stat` field 22, in
/// clock ticks since boot, plus `btime` of `/proc/stat`).
fn started_ms(pid: u32) -> Option<i64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after `(<name>)` start at field 3, so field 22 is the 20th of them.
    let (_, rest) = stat.rsplit_once(')')?;
    let ticks: i64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    let boot_s: i64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("btime ")?.trim().parse().ok())?;
    let per_second = clock_ticks_per_second()?;
    Some(boot_s * 1000 + ticks * 1000 / per_second)
}

#[cfg(unix)]
fn clock_ticks_per_second() -> Option<i64> {
    #[expect(
        unsafe_code,
        reason = "sysconf(3) has no safe wrapper in std; it only reads a constant"
    )]
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    #[allow(
        clippy::useless_conversion,
        reason = "`c_long` is i64 on 64-bit targets (a no-op there) and i32 on 32-bit ones"
    )]
    (ticks > 0).then(|| i64::from(ticks))
}

#[cfg(not(unix))]
fn clock_ticks_per_second() -> Option<i64> {
    None
}

#[cfg(unix)]
fn signal_zero(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // Signal 0 sends nothing; it only checks that the process exists. EPERM means it exists
    // under another user.
    #[expect(
        unsafe_code,
        reason = "kill(2) with signal 0 has no safe wrapper in std"
    )]
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn signal_zero(_pid: u32) -> bool {
    true
}

/// This machine, as runs name it beside a process id (`capa_store::Lease::machine`): a hash of
/// its systemd/D-Bus machine id, its host name and its process id namespace, so that two
/// containers of one host that share the id but not a process table count as two machines. 0 where neither can be read:
/// every such machine then counts as this one, and a process id is trusted as on one machine.
pub fn machine() -> u64 {
    use sha2::{Digest, Sha256};
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let id = [read("/etc/machine-id"), read("/var/lib/dbus/machine-id")]
        .into_iter()
        .find(|id| !id.trim().is_empty())
        .unwrap_or_default();
    let host = read("/proc/sys/kernel/hostname");
    // Containers of one host may share the machine id and the host name, not a process table.
    let pids = std::fs::read_link("/proc/self/ns/pid")
        .map(|ns| ns.display().to_string())
        .unwrap_or_default();
    if id.trim().is_empty() && host.trim().is_empty() {
        return 0;
    }
    let digest = Sha256::digest(format!("{}\n{}\n{pids}", id.trim(), host.trim()));
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    use capa_domain::clock::now_ms;

    #[test]
    fn a_process_is_the_recorded_one_only_if_it_started_by_then() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn");
        let now = now_ms();
        assert!(alive_since(child.id(), now), "started before now");
        if cfg!(target_os = "linux") {
            let started = started_ms(child.id()).expect("start time");
            assert!((started - now).abs() < START_SLACK_MS, "{started} vs {now}");
            // Recorded an hour before it started: another process under a reused pid.
            assert!(!alive_since(child.id(), started - 3_600_000));
        }
        child.kill().expect("kill");
        child.wait().expect("reap");
        assert!(!alive_since(child.id(), now));
    }

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("wait");
        assert!(!alive(pid));
        assert!(!alive(0));
    }

    #[test]
    fn this_machine_has_one_stable_name() {
        assert_eq!(machine(), machine());
        if cfg!(target_os = "linux") {
            assert_ne!(machine(), 0, "Linux has a host name at least");
        }
    }
}
