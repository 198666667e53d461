//! A source's document loaded: its tools, its operations, and the client that calls them.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::auth::Credentials;
use crate::call::Caller;
use crate::error::LoadError;
use crate::operation::{self, Extracted, Operation};
use crate::{document, server_url};

/// Redirects followed within the API's own origin.
const MAX_REDIRECTS: usize = 5;

/// Where the document is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    File(PathBuf),
    Url(String),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Url(url) => f.write_str(url),
        }
    }
}

/// One OpenAPI source as configured, its secrets filled in.
#[derive(Clone)]
pub struct Settings {
    pub location: Location,
    /// Overrides the document's `servers:`.
    pub base_url: Option<String>,
    /// Sent with every request.
    pub headers: BTreeMap<String, String>,
    /// A credential per security scheme name.
    pub auth: BTreeMap<String, String>,
    /// The longest a request may take, and fetching the document from a URL.
    pub timeout: Duration,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("location", &self.location)
            .field("base_url", &self.base_url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("auth", &self.auth.keys().collect::<Vec<_>>())
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A loaded document: its tools and how to call each.
pub struct Api {
    pub(crate) tools: Vec<rmcp::model::Tool>,
    /// The JSON size of each tool, for `tools/list` pages.
    pub(crate) tool_sizes: Vec<usize>,
    operations: Vec<Operation>,
    by_name: HashMap<String, usize>,
    pub(crate) caller: Caller,
    pub(crate) instructions: Option<String>,
    /// What was left out of the document, for the source's log.
    pub notes: Vec<String>,
    /// `openapi:` as the document declared it.
    pub version: String,
}

impl fmt::Debug for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Api")
            .field("tools", &self.tools.len())
            .field("base_url", &self.caller.base_url)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Api {
    /// Reads the document and prepares its operations.
    pub async fn load(settings: &Settings) -> Result<Self, LoadError> {
        let client = http_client()?;
        let location = settings.location.to_string();
        let (bytes, document_url) = match &settings.location {
            Location::File(path) => (document::read_file(path).await?, None),
            Location::Url(url) => (
                document::fetch(&client, url, settings.timeout).await?,
                Some(url.as_str()),
            ),
        };
        let read = read_on_large_stack(location.clone(), bytes, settings.auth.clone()).await?;
        let base_url = if let Some(url) = &settings.base_url {
            url.trim_end_matches('/').to_owned()
        } else {
            // Without `servers:`, OpenAPI's default is `/`: the document's own host.
            let server = read.server.unwrap_or_else(|| "/".to_owned());
            server_url::absolute(&server, document_url, &location)?
        };
        let Read {
            version,
            extracted,
            notes,
            credentials,
            instructions,
            ..
        } = read;
        let mut tools = Vec::with_capacity(extracted.len());
        let mut operations = Vec::with_capacity(extracted.len());
        let mut by_name = HashMap::with_capacity(extracted.len());
        for (index, e) in extracted.into_iter().enumerate() {
            by_name.insert(e.operation.name.clone(), index);
            tools.push(e.tool);
            operations.push(e.operation);
        }
        let tool_sizes = tools
            .iter()
            .map(|t| serde_json::to_vec(t).map_or(0, |v| v.len()))
            .collect();
        Ok(Self {
            tools,
            tool_sizes,
            operations,
            by_name,
            caller: Caller {
                client,
                base_url,
                base_url_fixed: settings.base_url.is_some(),
                headers: settings
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                credentials,
                timeout: settings.timeout,
            },
            instructions,
            notes,
            version,
        })
    }

    /// The tools, one per operation, in document order.
    pub fn tools(&self) -> &[rmcp::model::Tool] {
        &self.tools
    }

    /// Where requests go.
    pub fn base_url(&self) -> &str {
        &self.caller.base_url
    }

    pub(crate) fn operation(&self, name: &str) -> Option<&Operation> {
        self.by_name.get(name).map(|&i| &self.operations[i])
    }
}

/// What is kept of a document once read; the document itself is dropped where it was read.
struct Read {
    version: String,
    extracted: Vec<Extracted>,
    notes: Vec<String>,
    /// The first `servers:` entry, variables at their defaults.
    server: Option<String>,
    credentials: Credentials,
    instructions: Option<String>,
}

/// The stack of the thread that reads a document: parsing, the typed reading and dropping
/// recurse once or more per level of nesting (up to 128, the JSON and YAML readers' bound),
/// which a default 2 MiB thread does not always hold. Reserved, touched only as deep as the
/// document goes.
const READ_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Parses the document, extracts its operations and pairs its security schemes with `auth`,
/// on a thread of its own with a large stack (and off the async workers: GitHub's 13 MB take
/// a while of CPU).
async fn read_on_large_stack(
    location: String,
    bytes: Vec<u8>,
    auth: BTreeMap<String, String>,
) -> Result<Read, LoadError> {
    let (done, answer) = tokio::sync::oneshot::channel();
    let failed = |why: String| LoadError::Invalid {
        location: location.clone(),
        reason: why,
    };
    let thread_location = location.clone();
    std::thread::Builder::new()
        .name("openapi-read".into())
        .stack_size(READ_STACK_BYTES)
        .spawn(move || {
            let _ = done.send(read(&thread_location, &bytes, &auth));
        })
        .map_err(|e| failed(format!("no thread to read it: {e}")))?;
    answer
        .await
        .map_err(|_| failed("reading it stopped unexpectedly".into()))?
}

fn read(location: &str, bytes: &[u8], auth: &BTreeMap<String, String>) -> Result<Read, LoadError> {
    let document = document::parse(location, bytes)?;
    let spec = &document.spec;
    let mut notes = Vec::new();
    let extracted = operation::extract(spec, &mut notes);
    let credentials = Credentials::new(spec, auth, location)?;
    let instructions = spec
        .info
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            format!(
                "{}: {}",
                spec.info.title,
                d.chars().take(2000).collect::<String>()
            )
        });
    Ok(Read {
        server: spec.servers.first().map(server_url::expand),
        version: document.version.clone(),
        extracted,
        notes,
        credentials,
        instructions,
    })
}

/// The client of every request: no cookies kept, redirects followed only within the origin
/// they start from (so a credential in a header or the query never reaches another host),
/// at most [`MAX_REDIRECTS`].
fn http_client() -> Result<reqwest::Client, LoadError> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if attempt.url().origin() == first.origin() {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    reqwest::Client::builder()
        .redirect(policy)
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("capabilities/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| LoadError::Client(e.to_string()))
}
