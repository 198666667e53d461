//! A person at an interactive terminal: the CLI's one way to say yes.
//!
//! Approvals, `--yes`, printed login links and policy confirmations need a person. A process
//! with no terminal on stdin and stderr (an agent's shell, a script, a pipe) is not one, so
//! those commands refuse there and say where the person can decide instead. This stops a model
//! from approving its own calls through ordinary commands; a same-user process that sets out to
//! fake a terminal (`script`) can still get through, which docs/security.md says plainly.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::bail;

/// Whether a person can answer here: stdin and stderr are both a terminal.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Refuses `what` without an interactive terminal, with the reason and where to decide instead.
pub fn require_person(what: &str) -> anyhow::Result<()> {
    if interactive() {
        return Ok(());
    }
    bail!(
        "{what} needs a person at an interactive terminal, and this command has none (stdin and stderr are not a terminal, as in an agent's shell or a script). Decide in the Capabilities app, or run it yourself in a terminal; for calls that should never ask, set an allow policy there."
    )
}

/// Asks a yes/no question on stderr and reads the answer from stdin; anything but yes is no.
pub fn confirm(question: &str) -> anyhow::Result<bool> {
    require_person("Answering an approval")?;
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}
