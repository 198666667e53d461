//! `capa search` and `capa describe`: code mode's lookups from the shell, same text as the
//! model gets.

use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{HubPaths, Redactor};
use capa_server::http::{DescribeApiRequest, SearchApiRequest};
use serde_json::Value;

use crate::cli::{DescribeArgs, GlobalArgs, SearchArgs};
use crate::commands::HubAccess;
use crate::output;

pub async fn search(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: SearchArgs,
) -> anyhow::Result<ExitCode> {
    let access = HubAccess::open(global, paths, redactor).await?;
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

pub async fn describe(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: DescribeArgs,
) -> anyhow::Result<ExitCode> {
    let access = HubAccess::open(global, paths, redactor).await?;
    let answer = access
        .describe(DescribeApiRequest {
            targets: args.targets,
        })
        .await;
    access.close().await;
    print_answer(&answer?, args.json)
}

/// The text on stdout, or the error on stderr with exit code 1.
fn print_answer(answer: &Value, json: bool) -> anyhow::Result<ExitCode> {
    let ok = answer["ok"].as_bool() == Some(true);
    if json {
        output::json(answer)?;
    } else if ok {
        print!("{}", answer["text"].as_str().unwrap_or_default());
    } else {
        eprintln!(
            "capa: {}",
            answer["error"]["message"]
                .as_str()
                .unwrap_or("the lookup failed")
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
