//! `capa hub serve` and `capa hub status`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use capa_core::{Choice, HubPaths, Redactor, StoreAt};
use capa_host::{HostError, HostOptions, HubClient, HubProbe, RemoteHub, RunningHub, Silence};
use capa_install::running::RunningProgram;
use serde::Serialize;

use crate::cli::{GlobalArgs, HubCommand};
use crate::{output, setup};

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    command: HubCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        HubCommand::Serve {
            http,
            store,
            sign_in_issuer,
            resource,
        } => {
            let mut paths = paths.clone();
            if let Some(url) = store {
                // A program's arguments are in the process list, which every user can read.
                if !url.passwords().is_empty() {
                    anyhow::bail!(
                        "the --store address holds a password, which every user of this machine can read in the process list; put the address in CAPA_STORE instead, or the password in ~/.pgpass"
                    );
                }
                paths.store = StoreAt::Url(url);
            }
            let sign_in = sign_in_issuer
                .zip(resource)
                .map(|(issuer, resource)| capa_signin::Settings { issuer, resource });
            serve(global, &paths, redactor, http, sign_in).await
        }
        HubCommand::Status { json } => status(paths, json).await,
        HubCommand::Pending { json } => super::approvals::pending(paths, json).await,
        HubCommand::Approve {
            id,
            always,
            run,
            json,
        } => {
            let choice = if always {
                Choice::Always
            } else if run {
                Choice::Run
            } else {
                Choice::Once
            };
            super::approvals::decide(paths, &id, choice, json).await
        }
        HubCommand::Deny { id, json } => {
            super::approvals::decide(paths, &id, Choice::Deny, json).await
        }
    }
}

async fn serve(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    addr: std::net::SocketAddr,
    sign_in: Option<capa_signin::Settings>,
) -> anyhow::Result<ExitCode> {
    let options = HostOptions {
        paths: paths.clone(),
        http: addr,
        config: global.config.clone(),
        project: global.project.clone(),
        ui_dir: None,
        check_port_first: false,
        sign_in,
    };
    // A person at this terminal is asked about a project file before its hub starts, so that
    // a yes applies at once.
    if crate::terminal::interactive() {
        let files = setup::config_files(global, paths)?;
        crate::trust_prompt::ask_project_trust(&files, paths).await?;
    }
    let hosted = match capa_host::serve(options, redactor).await {
        Ok(hosted) => hosted,
        Err(HostError::AlreadyRunning { url, data_dir, pid }) => {
            if capa_install::running::running_program(pid) == Some(RunningProgram::App) {
                anyhow::bail!(
                    "the Capabilities app (process {pid}) already hosts the hub for this data dir at {url}; clients reach it as they would reach this one, so there is nothing to start (quit the app first to serve from here instead)"
                );
            }
            anyhow::bail!(
                "a hub is already running at {url} for this data dir ({}), process {pid}; stop it first, or set CAPA_DATA_DIR for a second one",
                data_dir.display()
            )
        }
        Err(e) => return Err(e.into()),
    };
    eprintln!(
        "capa hub: MCP endpoint {} ({} mode; bearer token in {})",
        hosted.mcp_url,
        hosted.mode,
        hosted.token_file.display()
    );
    for file in hosted.files() {
        eprintln!("capa hub: configuration {}", file.display());
    }
    capa_host::shutdown_signal().await;
    eprintln!("capa hub: stopping");
    hosted.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// An answer slower than this is reported as a busy hub's: the hub answers both from memory.
const SLOW_ANSWER: Duration = Duration::from_secs(1);

async fn status(paths: &HubPaths, as_json: bool) -> anyhow::Result<ExitCode> {
    let (hub, took) = match RunningHub::probe(paths).await {
        HubProbe::Answering { hub, took } => (RemoteHub::new(hub), took),
        HubProbe::Silent { url, pid, why } => {
            if as_json {
                output::json(&Status::Silent {
                    running: true,
                    answering: false,
                    url: format!("{url}/mcp"),
                    pid,
                    problem: silence_code(why),
                })?;
            } else {
                println!("{}", silent_sentence(paths, &url, pid, why));
            }
            return Ok(ExitCode::from(4));
        }
        not_running => {
            if as_json {
                output::json(&Status::NotRunning { running: false })?;
            } else {
                if let HubProbe::NotTheHub { url } = &not_running {
                    println!(
                        "Something else listens at {url}, where this data dir's hub was; it is not that hub and was sent nothing."
                    );
                }
                println!(
                    "No hub is running for {}. Start one with `capa hub serve`.",
                    paths.data_dir.display()
                );
            }
            return Ok(ExitCode::from(3));
        }
    };
    let config = hub.config().await?;
    let sources = hub.sources().await?;
    if as_json {
        output::json(&Status::Running {
            running: true,
            answering: true,
            answer_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            url: hub.mcp_url(),
            config: Box::new(config),
            sources,
        })?;
    } else {
        if took >= SLOW_ANSWER {
            println!(
                "Hub running at {} (busy: it took {:.1} s to answer)",
                hub.mcp_url(),
                took.as_secs_f64()
            );
        } else {
            println!("Hub running at {}", hub.mcp_url());
        }
        println!("Exposure: {} ({})", config.tool_exposure, config.decided_by);
        if let Some(search) = &config.search {
            println!("Search: {}", search.line());
        }
        super::sources::print_sources(&sources);
    }
    Ok(ExitCode::SUCCESS)
}

/// Why a running hub did not answer, in one sentence with what to do.
fn silent_sentence(paths: &HubPaths, url: &str, pid: u32, why: Silence) -> String {
    let dir = paths.data_dir.display();
    let what = match why {
        Silence::TimedOut => format!(
            "it took the connection and did not answer within {} s: it is busy or stuck",
            capa_server::discovery::PROVE_TIMEOUT.as_secs()
        ),
        Silence::Closed => {
            "it closed the connection without answering: it is busy (out of connections or open files)"
                .to_owned()
        }
        Silence::Refused => "it refuses connections: its HTTP server has stopped".to_owned(),
        _ => "it did not answer".to_owned(),
    };
    let next = if why == Silence::Refused {
        format!("Stop it (`kill {pid}`) and start it again with `capa hub serve`.")
    } else {
        format!(
            "Try again in a moment; if it stays so, stop it (`kill {pid}`) and start it again with `capa hub serve`."
        )
    };
    format!("A hub is running for {dir} (process {pid}, {url}) but {what}. {next}")
}

fn silence_code(why: Silence) -> &'static str {
    match why {
        Silence::TimedOut => "timed_out",
        Silence::Closed => "closed",
        Silence::Refused => "refused",
        _ => "unanswered",
    }
}

/// `capa hub status --json`.
#[derive(Serialize)]
#[serde(untagged)]
enum Status {
    NotRunning {
        running: bool,
    },
    /// The hub's process runs, but the hub did not answer.
    Silent {
        running: bool,
        answering: bool,
        url: String,
        pid: u32,
        problem: &'static str,
    },
    Running {
        running: bool,
        answering: bool,
        #[serde(rename = "answerMs")]
        answer_ms: u64,
        url: String,
        config: Box<capa_host::api::ConfigView>,
        sources: Vec<capa_host::api::SourceView>,
    },
}
