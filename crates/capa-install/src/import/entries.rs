//! One client entry into an [`Imported`] source: its definition, what capa ignores, warnings,
//! and the values that look like secrets.

use std::collections::BTreeMap;
use std::fmt;

use capa_config::config_edit::NewServer;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::entry::written_by_capa;
use crate::import::ids::source_id_for;

/// Longest value read from an entry (a command, an argument, a variable).
const MAX_VALUE_BYTES: usize = 16 * 1024;
/// Most arguments, variables or headers read from an entry.
const MAX_ITEMS: usize = 200;
/// The keychain refuses shorter secrets (they could not be redacted safely).
const MIN_SECRET_LEN: usize = 4;

/// Words of a variable or header name that mark a secret (compared lower-case, split at `_`,
/// `-`, spaces and lower-to-upper case changes), and parts anywhere in the folded name.
const SECRET_WORDS: &[&str] = &["key", "auth", "pat", "pwd", "pass", "jwt"];
const SECRET_PARTS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "authorization",
    "apikey",
    "credential",
    "privatekey",
    "cookie",
    "bearer",
    "accesskey",
    "sessionid",
    "signature",
];

/// Whether a variable or header name looks like it holds a secret (`GITHUB_TOKEN`,
/// `OPENAI_API_KEY`, `Authorization`, `X-Api-Key`, `DB_PASSWORD`, `authToken`).
pub(crate) fn looks_secret(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if SECRET_PARTS.iter().any(|p| folded.contains(p)) {
        return true;
    }
    let mut words = Vec::new();
    let mut word = String::new();
    let mut last_lower = false;
    for c in name.chars() {
        if (!c.is_ascii_alphanumeric() || (c.is_ascii_uppercase() && last_lower))
            && !word.is_empty()
        {
            words.push(std::mem::take(&mut word));
        }
        last_lower = c.is_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        }
    }
    words.push(word);
    words.iter().any(|w| SECRET_WORDS.contains(&w.as_str()))
}

/// A secret value, kept out of `Debug`, `Display` and `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    /// The value, for the keychain only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[secret, {} characters]", self.0.chars().count())
    }
}

/// What import offers for a value that looks like a secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretOffer {
    /// The `NAME` of `${secret:NAME}` and the connection's field.
    pub field: String,
    /// Text kept before the reference (`Bearer `).
    pub prefix: String,
    /// Characters of the secret.
    pub length: usize,
    /// Whether it can go to the keychain; otherwise `why_not` says why it stays in the file.
    pub movable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
}

/// One `env` variable or header.
#[derive(Clone, PartialEq, Eq)]
pub struct Var {
    pub key: String,
    value: String,
    pub secret: Option<SecretOffer>,
}

impl Var {
    /// The value as the client's file holds it; for a secret, only for writing it where the
    /// person chose (the keychain, or the file when they did not move it).
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The moved secret's value (without its prefix).
    fn secret_part(&self, offer: &SecretOffer) -> SecretValue {
        SecretValue(self.value[offer.prefix.len()..].to_owned())
    }
}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Var");
        d.field("key", &self.key);
        match &self.secret {
            Some(offer) => d.field("secret", offer),
            None => d.field("value", &self.value),
        };
        d.finish()
    }
}

impl Serialize for Var {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_struct("Var", 2)?;
        out.serialize_field("key", &self.key)?;
        match &self.secret {
            Some(offer) => out.serialize_field("secret", offer)?,
            None => out.serialize_field("value", &self.value)?,
        }
        out.end()
    }
}

/// How the source is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<Var>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<Var>,
    },
}

/// A client entry, ready to become a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// What names it in an import request: the entry's name, or `<project>::<name>` for a
    /// project's entry in `~/.claude.json`.
    pub key: String,
    /// The entry's name in the client.
    pub name: String,
    /// The project it belongs to (`~/.claude.json`).
    pub project: Option<String>,
    /// A valid source id made from the name.
    pub suggested_id: String,
    pub description: String,
    pub transport: Transport,
    /// Fields of the entry capa does not use (`disabled`, `autoApprove`, …).
    pub ignored: Vec<String>,
    pub warnings: Vec<String>,
}

/// Secret-looking flag values in arguments and query values in URLs are shown hidden.
fn hidden(value: &str) -> String {
    format!("[hidden, {} characters]", value.chars().count())
}

fn shown_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for arg in args {
        if hide_next {
            out.push(hidden(arg));
            hide_next = false;
            continue;
        }
        let flag = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'));
        match flag.map(|f| f.split_once('=')) {
            Some(Some((name, value))) if looks_secret(name) => {
                out.push(format!(
                    "{}={}",
                    &arg[..arg.len() - value.len() - 1],
                    hidden(value)
                ));
            }
            Some(None) if flag.is_some_and(looks_secret) => {
                hide_next = true;
                out.push(arg.clone());
            }
            _ => out.push(arg.clone()),
        }
    }
    out
}

fn shown_url(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_owned();
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if looks_secret(k) => format!("{k}={}", hidden(v)),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{base}?{}", parts.join("&"))
}

impl Serialize for Imported {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_struct("Imported", 12)?;
        out.serialize_field("key", &self.key)?;
        out.serialize_field("name", &self.name)?;
        out.serialize_field("project", &self.project)?;
        out.serialize_field("suggestedId", &self.suggested_id)?;
        out.serialize_field("description", &self.description)?;
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                out.serialize_field("kind", "stdio")?;
                out.serialize_field("command", command)?;
                out.serialize_field("args", &shown_args(args))?;
                out.serialize_field("env", env)?;
                out.serialize_field("cwd", cwd)?;
            }
            Transport::Http { url, headers } => {
                out.serialize_field("kind", "http")?;
                out.serialize_field("url", &shown_url(url))?;
                out.serialize_field("headers", headers)?;
            }
        }
        out.serialize_field("ignored", &self.ignored)?;
        out.serialize_field("warnings", &self.warnings)?;
        out.end()
    }
}

/// The source to write, and the secrets to store as fields of its connection.
#[derive(Debug, Clone)]
pub struct Planned {
    pub server: NewServer,
    /// `(field, value)`, for the keychain.
    pub secrets: Vec<(String, SecretValue)>,
}

impl Imported {
    /// The values that look like secrets (env or headers).
    pub fn secrets(&self) -> impl Iterator<Item = &SecretOffer> {
        let vars = match &self.transport {
            Transport::Stdio { env, .. } => env,
            Transport::Http { headers, .. } => headers,
        };
        vars.iter().filter_map(|v| v.secret.as_ref())
    }

    /// The source `id` to write. With `move_secrets`, every movable secret becomes
    /// `${secret:FIELD}` in the file and goes into [`Planned::secrets`]; without, the values are
    /// written as the client's file has them.
    pub fn plan(&self, id: &str, move_secrets: bool) -> Planned {
        let mut secrets = Vec::new();
        let mut written = |vars: &[Var]| -> BTreeMap<String, String> {
            vars.iter()
                .map(|var| match &var.secret {
                    Some(offer) if move_secrets && offer.movable => {
                        secrets.push((offer.field.clone(), var.secret_part(offer)));
                        let reference = format!("{}${{secret:{}}}", offer.prefix, offer.field);
                        (var.key.clone(), reference)
                    }
                    _ => (var.key.clone(), var.value.clone()),
                })
                .collect()
        };
        let mut server = NewServer {
            id: id.to_owned(),
            description: Some(self.description.clone()),
            ..NewServer::default()
        };
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                server.command = Some(command.clone());
                server.args.clone_from(args);
                server.env = written(env);
                server.cwd.clone_from(cwd);
            }
            Transport::Http { url, headers } => {
                server.url = Some(url.clone());
                server.headers = written(headers);
            }
        }
        Planned { server, secrets }
    }
}

/// Fields every client agrees on; others are reported as ignored.
const KNOWN: &[&str] = &["type", "command", "args", "env", "cwd", "url", "headers"];

fn text(entry: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() <= MAX_VALUE_BYTES => Ok(Some(s.clone())),
        Some(Value::String(_)) => Err(format!("`{key}` is longer than {MAX_VALUE_BYTES} bytes")),
        Some(_) => Err(format!("`{key}` is not text")),
    }
}

fn scalar(value: &Value, what: &str) -> Result<String, String> {
    let s = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return Err(format!("{what} is not text")),
    };
    if s.len() > MAX_VALUE_BYTES {
        return Err(format!("{what} is longer than {MAX_VALUE_BYTES} bytes"));
    }
    Ok(s)
}

/// A field name for `${secret:NAME}`: letters, digits, `-`, `_`, at most 64.
fn field_name(key: &str, taken: &[String]) -> String {
    let mut base: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    if base.is_empty() {
        "secret".clone_into(&mut base);
    }
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

const SCHEMES: &[&str] = &["Bearer ", "bearer ", "Basic ", "Token ", "token "];

fn vars(
    entry: &Map<String, Value>,
    key: &str,
    headers: bool,
    warnings: &mut Vec<String>,
) -> Result<Vec<Var>, String> {
    let Some(value) = entry.get(key).filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let Value::Object(map) = value else {
        return Err(format!("`{key}` is not an object of names and values"));
    };
    if map.len() > MAX_ITEMS {
        return Err(format!("`{key}` has more than {MAX_ITEMS} entries"));
    }
    let mut out: Vec<Var> = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    for (name, value) in map {
        let mut value = scalar(value, &format!("`{key}.{name}`"))?;
        if let Some(input) = vscode_input(&value) {
            // VS Code asks for `${input:x}` and keeps it; capa keeps it as a connection's field.
            value = value.replace(
                &format!("${{input:{input}}}"),
                &format!("${{secret:{input}}}"),
            );
            warnings.push(format!(
                "`{key}.{name}` asks VS Code's input `{input}`; it now reads the secret `{input}`: set it on the Connections page"
            ));
        } else if value.contains("${") && !value.contains("${secret:") {
            warnings.push(format!(
                "`{key}.{name}` holds a `${{…}}` variable the client expands; capa passes it as written: replace it after the import"
            ));
        }
        let secretish = looks_secret(name) || has_url_credentials(&value);
        let secret = (secretish && !value.is_empty() && !value.contains("${")).then(|| {
            let prefix = if headers {
                SCHEMES
                    .iter()
                    .find(|s| value.starts_with(**s) && value.len() > s.len())
                    .map_or("", |s| *s)
            } else {
                ""
            };
            let field = field_name(name, &fields);
            fields.push(field.clone());
            let length = value[prefix.len()..].chars().count();
            let short = length < MIN_SECRET_LEN;
            SecretOffer {
                field,
                prefix: prefix.to_owned(),
                length,
                movable: !short,
                why_not: short.then(|| {
                    format!("shorter than {MIN_SECRET_LEN} characters, too short for the keychain; it stays in the file")
                }),
            }
        });
        out.push(Var {
            key: name.clone(),
            value,
            secret,
        });
    }
    Ok(out)
}

/// Whether `value` holds a URL with a password (`postgres://user:pass@host/db`).
fn has_url_credentials(value: &str) -> bool {
    value.split("://").skip(1).any(|rest| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority.rsplit_once('@').is_some_and(|(userinfo, _)| {
            userinfo.split_once(':').is_some_and(|(_, p)| !p.is_empty())
        })
    })
}

/// The id of a `${input:id}` in `value`, when it is a valid secret name.
fn vscode_input(value: &str) -> Option<String> {
    let start = value.find("${input:")? + "${input:".len();
    let end = value[start..].find('}')? + start;
    let id = &value[start..end];
    capa_config::secret_ref::is_secret_name(id).then(|| id.to_owned())
}

/// Reads one entry. `Ok(None)`: it is capa's own entry. `Err`: why it is skipped.
pub(crate) fn read_entry(
    key: &str,
    name: &str,
    project: Option<&str>,
    entry: &Value,
    description: &str,
) -> Result<Option<Imported>, String> {
    let Value::Object(entry) = entry else {
        return Err("the entry is not a JSON object".to_owned());
    };
    let kind = text(entry, "type")?;
    let command = text(entry, "command")?;
    let url = text(entry, "url")?.or(text(entry, "serverUrl")?);
    let mut warnings = Vec::new();
    let mut ignored: Vec<String> = entry
        .keys()
        .filter(|k| !KNOWN.contains(&k.as_str()) && *k != "serverUrl")
        .cloned()
        .collect();
    let transport = match (command, url) {
        (Some(command), _) if kind.as_deref().is_none_or(|k| k == "stdio") => {
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) if items.len() <= MAX_ITEMS => items
                    .iter()
                    .enumerate()
                    .map(|(i, a)| scalar(a, &format!("argument {}", i + 1)))
                    .collect::<Result<_, _>>()?,
                Some(Value::Array(_)) => return Err(format!("more than {MAX_ITEMS} arguments")),
                Some(_) => return Err("`args` is not a list".to_owned()),
            };
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            if written_by_capa(Some(&command), &refs) {
                return Ok(None);
            }
            if shown_args(&args) != args {
                warnings.push("an argument looks like a secret; capa keeps arguments in the file as written: pass it in the environment instead".to_owned());
            }
            let cwd = text(entry, "cwd")?;
            if cwd.as_deref().is_some_and(|c| c.contains("${")) {
                warnings.push("`cwd` holds a `${…}` variable the client expands; set the directory after the import".to_owned());
            }
            ignored.retain(|k| k != "envFile");
            if entry.contains_key("envFile") {
                warnings.push(
                    "capa does not read `envFile`: add its variables to the environment".to_owned(),
                );
                ignored.push("envFile".to_owned());
            }
            let env = vars(entry, "env", false, &mut warnings)?;
            if entry.contains_key("headers") {
                ignored.push("headers".to_owned());
            }
            if entry.contains_key("url") {
                ignored.push("url".to_owned());
            }
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        (_, Some(url)) => {
            match kind.as_deref() {
                None | Some("http" | "streamable-http" | "streamableHttp") => {}
                Some("sse") => warnings.push("the client reaches it over SSE; capa speaks Streamable HTTP, which most such servers also serve at the same or a `/mcp` URL".to_owned()),
                Some(other) => warnings.push(format!("`type: {other}` is not one capa knows; it is read as Streamable HTTP")),
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err("`url` is not an http:// or https:// URL".to_owned());
            }
            if shown_url(&url) != url {
                warnings.push("the URL's query looks like it carries a secret; capa keeps the URL as written: use a header with `${secret:NAME}` if the server accepts one".to_owned());
            }
            let headers = vars(entry, "headers", true, &mut warnings)?;
            for k in ["command", "args", "env", "cwd"] {
                if entry.contains_key(k) {
                    ignored.push(k.to_owned());
                }
            }
            Transport::Http { url, headers }
        }
        (Some(_), None) => {
            return Err(format!(
                "`type: {}` with a `command`; capa reads a command as stdio",
                kind.unwrap_or_default()
            ));
        }
        (None, None) => return Err("the entry has neither `command` nor `url`".to_owned()),
    };
    ignored.sort();
    ignored.dedup();
    Ok(Some(Imported {
        key: key.to_owned(),
        name: name.to_owned(),
        project: project.map(str::to_owned),
        suggested_id: source_id_for(name),
        description: match project {
            Some(p) => format!("{description} (project {p})"),
            None => description.to_owned(),
        },
        transport,
        ignored,
        warnings,
    }))
}
