//! The numbers that bound the server's connections, and what a failed `accept` means.

use std::time::Duration;

/// How long a connection has to send a whole request head, counted from when the server starts
/// waiting for it: after `accept`, and on a kept-alive connection after the previous answer (so
/// it is also how long an idle connection stays open). A client sends its head at once; ten
/// seconds cover a loaded machine, and keep-alive clients (Node's fetch, httpx, reqwest) let
/// their own idle connections go after 4 to 5 seconds, before this closes them.
pub(crate) const HEAD_DEADLINE: Duration = Duration::from_secs(10);

/// The most a connection may buffer of a request head (hyper's `max_buf_size`; its default is
/// about 400 KiB). Real heads are under 8 KiB; a larger one is refused with `431`.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Connections open at once, whatever the file limit.
const MOST_CONNECTIONS: usize = 1024;

/// Connections open at once even under a very low file limit.
const FEWEST_CONNECTIONS: usize = 16;

/// How many connections the server keeps open at once: half the process's file limit (the other
/// half is for the store, the log, upstream servers' pipes and sockets), at most
/// [`MOST_CONNECTIONS`]. Under the usual limit of 1,024 files that is 512.
pub(crate) fn connection_bound() -> usize {
    bound_for(soft_file_limit())
}

fn bound_for(file_limit: Option<u64>) -> usize {
    file_limit.map_or(MOST_CONNECTIONS, |files| {
        usize::try_from(files / 2)
            .unwrap_or(MOST_CONNECTIONS)
            .clamp(FEWEST_CONNECTIONS, MOST_CONNECTIONS)
    })
}

/// `RLIMIT_NOFILE`'s soft limit: the files this process may have open. None where there is no
/// such limit (or it is infinite).
#[cfg(unix)]
fn soft_file_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` we own and touches nothing else.
    #[expect(
        unsafe_code,
        reason = "getrlimit(2) has no safe wrapper in std; it only fills the struct it is given"
    )]
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) };
    #[allow(
        clippy::useless_conversion,
        reason = "rlim_t is u64 on 64-bit targets, u32 on some others"
    )]
    let files = u64::from(limit.rlim_cur);
    (read == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(files)
}

#[cfg(not(unix))]
fn soft_file_limit() -> Option<u64> {
    None
}

/// What a failed `accept` says about what to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AcceptFailure {
    /// That one connection failed (reset or aborted before it was accepted): accept the next.
    Connection,
    /// The process (or the system) has no file descriptor left: close a connection for room.
    OutOfFiles,
    /// Anything else (out of memory or buffers): wait a moment and try again.
    Other,
}

pub(crate) fn classify(error: &std::io::Error) -> AcceptFailure {
    use std::io::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    ) {
        return AcceptFailure::Connection;
    }
    #[cfg(unix)]
    let out_of_files = [libc::EMFILE, libc::ENFILE];
    // WSAEMFILE: Windows counts a process's sockets the same way.
    #[cfg(not(unix))]
    let out_of_files = [10024];
    if error
        .raw_os_error()
        .is_some_and(|code| out_of_files.contains(&code))
    {
        AcceptFailure::OutOfFiles
    } else {
        AcceptFailure::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_half_the_file_limit_within_its_floor_and_ceiling() {
        assert_eq!(bound_for(Some(1024)), 512);
        assert_eq!(bound_for(Some(256)), 128);
        assert_eq!(bound_for(Some(20)), FEWEST_CONNECTIONS);
        assert_eq!(bound_for(Some(1 << 20)), MOST_CONNECTIONS);
        assert_eq!(bound_for(None), MOST_CONNECTIONS);
    }

    #[cfg(unix)]
    #[test]
    fn running_out_of_files_is_told_from_a_failed_connection() {
        let emfile = std::io::Error::from_raw_os_error(libc::EMFILE);
        assert_eq!(classify(&emfile), AcceptFailure::OutOfFiles);
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionAborted);
        assert_eq!(classify(&reset), AcceptFailure::Connection);
        let nomem = std::io::Error::from_raw_os_error(libc::ENOMEM);
        assert_eq!(classify(&nomem), AcceptFailure::Other);
    }
}
