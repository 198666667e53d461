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

#[cfg(test)]
mod tests {
    use super::alive;

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("wait");
        assert!(!alive(pid));
        assert!(!alive(0));
    }
}
