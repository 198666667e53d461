//! Command-line definitions.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Capabilities: one hub for your MCP servers, served to every AI client.
#[derive(Debug, Parser)]
#[command(name = "capa", version, about, long_about = None, propagate_version = true)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Use only this capabilities file (no global file, no project lookup).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Look for the project's capabilities file from DIR up instead of from the working
    /// directory (what `capa install` writes into MCP clients' configs).
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "config")]
    pub project: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Write a starter capabilities.yaml (toolExposure: search) in this directory.
    Init(InitArgs),
    /// Run or talk to the long-running hub.
    #[command(subcommand)]
    Hub(HubCommand),
    /// Serve MCP over stdin/stdout (what MCP clients start). Forwards to the running hub when
    /// one is up, otherwise runs a hub inside this process.
    Mcp(McpArgs),
    /// Named profiles: what one client sees (a mode, some sources and skills, stricter rules,
    /// lower limits), served at /mcp/<name> and by `capa mcp --profile <name>` (docs/profiles.md).
    #[command(subcommand)]
    Profiles(ProfilesCommand),
    /// The upstream sources (MCP servers).
    #[command(subcommand)]
    Sources(SourcesCommand),
    /// The tools of every source.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Skills: named tasks with instructions and the tools they need (docs/skills.md).
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Call one tool: `capa call demo.add --json '{"a": 1, "b": 2}'`.
    Call(CallArgs),
    /// Run one tool from the shell, policies applied: `capa sh demo add --arg a=2 --arg b=3`.
    Sh(ShArgs),
    /// Find tools by what you want to do (code mode's `search`): `capa search open an issue`.
    Search(SearchArgs),
    /// TypeScript declarations of tools, namespaces or named types (code mode's `describe`).
    Describe(DescribeArgs),
    /// Credentials of sources, kept in the OS keychain.
    #[command(subcommand)]
    Connections(ConnectionsCommand),
    /// Which capabilities files are used, and the file format.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Allow, ask or deny per tool, source or glob (the policy file, docs/policies.md).
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Configure this project's MCP clients (Claude Code, Cursor, VS Code, Codex) to use capa,
    /// after listing each server's tools and warning about the file's policies (docs/install.md).
    Install(InstallArgs),
    /// Open the settings UI of the running hub in the browser (a one-time login link).
    Ui(UiArgs),
    /// Connect MCP clients (Claude Code, Claude Desktop, Cursor, VS Code, Codex) to the global hub
    /// in their user-wide files, as the app's Clients page does (docs/install.md).
    #[command(subcommand)]
    Clients(ClientsCommand),
}

#[derive(Debug, clap::Args)]
pub(crate) struct McpArgs {
    /// Serve this named profile of the capabilities files instead of the hub's own
    /// (`profiles:`; `capa profiles list` names them).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ProfilesCommand {
    /// Each profile: its mode, sources, skills, rules, limits and where clients reach it.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ClientsCommand {
    /// Each client's user-wide file and whether it is connected to the global hub.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Write the `capa` entry (`<this capa> mcp`) into these clients' files, asking first.
    Connect(ClientsArgs),
    /// Take out the `capa` entry capa wrote from these clients' files, asking first.
    Disconnect(ClientsArgs),
    /// Pair a client: give it its own key, so that its own approval forms count as your
    /// answer (interactive terminal only). Prints the key once.
    Pair {
        /// What to call it ("Claude Code").
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// The paired clients and whether their forms count.
    Paired {
        #[arg(long)]
        json: bool,
    },
    /// Let a paired client's own approval forms count (`on`, interactive terminal only) or
    /// not (`off`).
    Forms {
        /// The paired client's id (`pc_…`, from `capa clients paired`).
        id: String,
        state: FormsState,
    },
    /// Unpair a client: its key stops working at once.
    Unpair {
        /// The paired client's id (`pc_…`).
        id: String,
    },
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormsState {
    On,
    Off,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ClientsArgs {
    /// claude-code, claude-desktop, cursor, vscode or codex.
    #[arg(required = true, value_name = "CLIENT")]
    pub clients: Vec<String>,
    /// Change files without asking.
    #[arg(long, short)]
    pub yes: bool,
    /// Show the diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Connect to this named profile (`capa mcp --profile NAME`) instead of the default one
    /// (docs/profiles.md). Connect only.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct UiArgs {
    /// Print the login link instead of opening it (it works once, for ten minutes).
    #[arg(long)]
    pub print: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ShArgs {
    /// The tool's group: its source (namespace), e.g. `github`.
    pub group: String,
    /// The tool's name in the group, e.g. `create_issue`.
    pub tool: String,
    /// One argument, `key=value`; the value is read as JSON when it is JSON (`n=3`,
    /// `tags=["a"]`), else as a string. Repeatable.
    #[arg(long = "arg", value_name = "KEY=VALUE")]
    pub args: Vec<String>,
    /// All arguments as a JSON object (`--arg` values are added to it).
    #[arg(long = "json", value_name = "ARGS")]
    pub json_args: Option<String>,
    /// Use this connection instead of the source's default.
    #[arg(long)]
    pub connection: Option<String>,
    /// Print the whole result as JSON.
    #[arg(long = "output-json")]
    pub output_json: bool,
    /// Print all of a large result; without it a result is cut at 24 KB (`inlineResultBytes`)
    /// with a note, as for every model-facing channel.
    #[arg(long)]
    pub full: bool,
    /// Approve a tool the policy asks for without a prompt (only at an interactive terminal).
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct InitArgs {
    /// Replace an existing capabilities file.
    #[arg(long)]
    pub force: bool,
    /// Write the file in this directory instead of the working directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SearchArgs {
    /// What you want to do, in a few words; empty (with --namespace) lists a namespace.
    #[arg(value_name = "QUERY", num_args = 0..)]
    pub query: Vec<String>,
    /// Search or list one source only.
    #[arg(long, short)]
    pub namespace: Option<String>,
    /// How many tools to show, 1 to 25 (default 8).
    #[arg(long, short)]
    pub limit: Option<i64>,
    /// Print `{ok, text}` or `{ok, error}` as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct DescribeArgs {
    /// 1 to 10 targets: `github.create_issue`, `github`, or a type name like `github.Issue`.
    #[arg(value_name = "TARGET", required = true, num_args = 1..)]
    pub targets: Vec<String>,
    /// Print `{ok, text}` or `{ok, error}` as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HubCommand {
    /// Run the hub: MCP over Streamable HTTP at `http://127.0.0.1:4477/mcp` (loopback only).
    Serve {
        /// Address to listen on; loopback only. Port 0 picks a free port.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4477")]
        http: SocketAddr,
        /// Keep the hub's data in this PostgreSQL database (postgres://user:password@host:port/db)
        /// instead of the SQLite file in the data dir; `CAPA_STORE` says the same for every command.
        #[arg(long, value_name = "URL")]
        store: Option<capa_core::StoreUrl>,
        /// A team hub: only access tokens from this identity provider (its issuer URL) open the
        /// hub, not the shared token (docs/team.md, "Sign-in"). Needs --resource.
        #[arg(
            long,
            value_name = "ISSUER",
            env = "CAPA_SIGN_IN_ISSUER",
            requires = "resource"
        )]
        sign_in_issuer: Option<String>,
        /// The hub's MCP endpoint as clients reach it (e.g. `https://capa.example.com/mcp`): the
        /// audience every access token must name. Needs --sign-in-issuer.
        #[arg(
            long,
            value_name = "URL",
            env = "CAPA_RESOURCE",
            requires = "sign_in_issuer"
        )]
        resource: Option<String>,
    },
    /// Show whether a hub is running, its URL and its sources.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// List calls waiting for your approval (or for a connection).
    Pending {
        #[arg(long)]
        json: bool,
    },
    /// Approve the pending calls of a run; then the client resumes it.
    Approve {
        /// The run id the client was given (`run_…`), or one approval id (`apr_…`).
        id: String,
        /// Also allow the tool from now on (writes an allow rule to the policy).
        #[arg(long, conflicts_with = "run")]
        always: bool,
        /// Allow the tool for the rest of this run.
        #[arg(long)]
        run: bool,
        #[arg(long)]
        json: bool,
    },
    /// Deny the pending calls of a run: inside the run they throw a `ToolError` `denied`.
    Deny {
        /// The run id (`run_…`), or one approval id (`apr_…`).
        id: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum SourcesCommand {
    /// List sources with their state, tool counts and connections.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Confirm a source that is new or changed outside the app, or trust a project file's
    /// source (it then starts); only at an interactive terminal.
    Confirm {
        /// The source's id.
        id: String,
    },
    /// Add the MCP servers of another client's file (Claude Desktop's, Claude Code's, Cursor's
    /// or VS Code's) as sources of the global file; secret-looking values go to the OS keychain
    /// (docs/ui.md, "Import").
    Import {
        /// The client's file.
        file: std::path::PathBuf,
        /// Import without asking (they start once a person confirms them, unless run at an
        /// interactive terminal).
        #[arg(long)]
        yes: bool,
        /// Print the preview (or, with --yes, what was added) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Turn a source off: `disabled: true` in its file; it stops and serves no tools.
    Disable {
        /// The source's id.
        id: String,
    },
    /// Turn a source on again. At an interactive terminal it starts; otherwise it waits for
    /// a person's confirmation (the app, or `capa sources confirm`).
    Enable {
        /// The source's id.
        id: String,
    },
    /// Show a source's log: its server's stderr and the hub's lines about it (the running hub
    /// keeps the last 500 per source in memory; known secrets redacted).
    Logs {
        /// The source's id.
        id: String,
        /// Keep printing new lines until interrupted.
        #[arg(long, short)]
        follow: bool,
        /// One JSON object per line: `{seq, at, stream, level, text}`.
        #[arg(long)]
        json: bool,
    },
    /// Let a source ask your client's model for completions (sampling); off until you do
    /// (interactive terminal only).
    AllowSampling {
        /// The source's id.
        id: String,
    },
    /// Stop passing a source's sampling requests to your client's model.
    DenySampling {
        /// The source's id.
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum SkillsCommand {
    /// List every skill: its name, how many tools it resolves to, its description.
    List {
        /// Print JSON (name, description, active, file, requires, tools, uri, instructions).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// List every exposed tool by address.
    List {
        /// Print JSON (address, source, description, input schema, annotations, policy, and
        /// `textReview`: the flags of a tool whose text breaks a rule).
        #[arg(long)]
        json: bool,
    },
    /// Turn a tool off: a deny rule for its address in policy.yaml (hidden, calls refused).
    Disable {
        /// The tool's address, `source.tool`.
        address: String,
    },
    /// Turn a tool on again: removes its deny rule. Without an interactive terminal, turning
    /// on a tool a person turned off waits for their confirmation.
    Enable {
        /// The tool's address, `source.tool`.
        address: String,
    },
    /// The tools whose definition changed since you approved it, appeared later in their
    /// source, or that you blocked: what changed, old and new (docs/pinning.md).
    Changes {
        /// Print JSON (address, state, parts, approved, now, decisions).
        #[arg(long)]
        json: bool,
    },
    /// Accept a tool's changed definition as the one you approve (needs an interactive
    /// terminal): shows the change and asks first.
    Accept {
        /// The tool's address, `source.tool`.
        address: String,
    },
    /// Block a tool: hidden and every call refused until you accept it.
    Block {
        /// The tool's address, `source.tool`.
        address: String,
    },
    /// Accept a flagged tool's text as it reads now (docs/tool-text.md): its warning goes until
    /// the text changes. Needs a person at an interactive terminal. To block it instead:
    /// `capa tools disable <address>`.
    AcceptText {
        /// The tool's address, `source.tool`.
        address: String,
    },
}

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// Tool address, `namespace.tool`.
    pub address: String,
    /// Arguments as a JSON object.
    #[arg(long = "json", value_name = "ARGS")]
    pub arguments: Option<String>,
    /// Use this connection instead of the source's default.
    #[arg(long)]
    pub connection: Option<String>,
    /// Print the whole result as JSON instead of its text.
    #[arg(long)]
    pub raw: bool,
    /// Print all of a large result; without it a result is cut at 24 KB (`inlineResultBytes`)
    /// with a note, as for every model-facing channel.
    #[arg(long)]
    pub full: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConnectionsCommand {
    /// Store a secret of a connection. The value is read from stdin (or a hidden prompt), never
    /// from the command line.
    Set {
        /// Source id.
        source: String,
        /// Connection name, for example `personal` or `work`.
        name: String,
        /// Which secret (the NAME of `${secret:NAME}`); needed when the source uses several.
        #[arg(long)]
        field: Option<String>,
        /// Make this the source's default connection.
        #[arg(long)]
        default: bool,
    },
    /// List connections (names only; values stay in the keychain).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a connection and its secrets.
    Remove { source: String, name: String },
    /// Sign in to a source that uses OAuth: opens your browser on the server's sign-in page and
    /// keeps the tokens in the OS keychain as a connection.
    Login {
        /// Source id.
        source: String,
        /// Connection name (default: the source's default sign-in, else `personal`).
        #[arg(long)]
        connection: Option<String>,
        /// Print the sign-in address instead of opening a browser.
        #[arg(long)]
        no_browser: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Show the files in use, the exposure mode and which rule decided it.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Check a capabilities file and report every problem with its line.
    Check {
        /// The file to check (default: the files `capa config show` lists).
        file: Option<PathBuf>,
    },
    /// Trust the project file found from here up (or with --project): shows every source it
    /// runs and everything else it changes (skills, profiles, options), asked once; a person
    /// at a terminal only.
    Trust,
    /// Print the JSON Schema of capabilities files.
    Schema {
        /// Compare with this file instead of printing; fails when it differs.
        #[arg(long, value_name = "FILE")]
        check: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
    /// List the rules of the policy file.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Set the decision for a tool address (`github.create_issue`), a source (`github`), a glob
    /// (`github.delete_*`) or `*`: `capa policy set 'github.delete_*' deny`.
    Set {
        /// Which tools: `github.create_issue`, `github`, `github.delete_*` or `*`.
        pattern: String,
        decision: DecisionArg,
        /// Only for calls made with this connection of the source.
        #[arg(long, value_name = "NAME")]
        connection: Option<String>,
    },
    /// Confirm the policy file as it is: changes made outside the app or an interactive
    /// terminal that loosen the policy take effect (only at an interactive terminal).
    Confirm,
    /// Remove the rule for a pattern (and connection), or every rule with `--all`.
    Reset {
        /// The rule's pattern, as `capa policy list` shows it (or `--all`).
        #[arg(required_unless_present = "all")]
        pattern: Option<String>,
        /// The rule for this connection, not the one for every connection.
        #[arg(long, value_name = "NAME", conflicts_with = "all")]
        connection: Option<String>,
        /// Remove every rule.
        #[arg(long, conflicts_with = "pattern")]
        all: bool,
    },
}

/// A policy decision on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum DecisionArg {
    Allow,
    Ask,
    Deny,
}

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is a command-line flag"
)]
pub(crate) struct InstallArgs {
    /// Configure this client (repeatable); default: every client found in the project.
    #[arg(long = "client", value_name = "CLIENT", value_enum)]
    pub clients: Vec<ClientArg>,
    /// Change files without asking.
    #[arg(long, short)]
    pub yes: bool,
    /// Codex: write the user-wide `~/.codex/config.toml` (`CODEX_HOME`) instead of the project's
    /// `.codex/config.toml`; its `capa` entry is still never repointed from another project or
    /// the global hub to this one.
    #[arg(long)]
    pub user_file: bool,
    /// Show what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print `{servers, warnings, files}` as JSON (diffs and questions go to stderr).
    #[arg(long)]
    pub json: bool,
}

/// An MCP client `capa install` can configure.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum ClientArg {
    /// Claude Code: `.mcp.json`.
    Claude,
    /// Cursor: `.cursor/mcp.json`.
    Cursor,
    /// Codex: the project's `.codex/config.toml` (`--user-file`: `~/.codex/config.toml`).
    Codex,
    /// VS Code: `.vscode/mcp.json`.
    Vscode,
}
