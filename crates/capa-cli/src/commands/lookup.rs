//! `capa search` and `capa describe`: code mode's lookups from the shell, same text as the
//! model gets.

use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{HubPaths, Redactor};
use capa_host::HubClient;
use capa_host::api::{DescribeApiRequest, LookupAnswer, SearchApiRequest};

use crate::cli::{DescribeArgs, GlobalArgs, SearchArgs};
use crate::output;
use crate::setup::open_hub;
use crate::terminal::printable;
use capa_core::tool_text::visible;

pub(super) async fn search(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: SearchArgs,
) -> anyhow::Result<ExitCode> {
    let access = open_hub(global, paths, redactor).await?;
    let answer = access
        .search(SearchApiRequest {
            query: args.query.join(" "),
            namespace: args.namespace,
            limit: args.limit,
        })
        .await;
    access.close().await;
    print_answer(&answer?, args.json)
}

pub(super) async fn describe(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: DescribeArgs,
) -> anyhow::Result<ExitCode> {
    let access = open_hub(global, paths, redactor).await?;
    let answer = access
        .describe(DescribeApiRequest {
            targets: args.targets,
        })
        .await;
    access.close().await;
    print_answer(&answer?, args.json)
}

/// The text on stdout, or the error on stderr with exit code 1.
fn print_answer(answer: &LookupAnswer, json: bool) -> anyhow::Result<ExitCode> {
    let ok = answer.ok;
    if json {
        output::json(answer)?;
    } else if ok {
        // The model's text, with what could act on the terminal (an upstream's escape
        // sequences, bidi controls) shown escaped (docs/tool-text.md).
        print!("{}", visible(answer.text.as_deref().unwrap_or_default()));
    } else {
        eprintln!(
            "capa: {}",
            printable(
                answer
                    .error
                    .as_ref()
                    .map_or("the lookup failed", |e| e.message.as_str())
            )
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
