//! The operations of a document, as the hub calls them: where each argument goes, what body
//! is sent, which credentials apply.

use std::collections::{BTreeSet, HashSet};

use oas3::spec::{ObjectOrReference, Parameter, ParameterIn, ParameterStyle, PathItem};
use serde_json::{Map, Value, json};

use crate::naming;
use crate::schema::{self, Defs};

/// One operation of the document, ready to be called.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    /// The tool's name.
    pub name: String,
    pub method: http::Method,
    /// The path template (`/repos/{owner}/{repo}`).
    pub path: String,
    pub params: Vec<Param>,
    pub body: Option<Body>,
    /// Alternatives of security requirements, each a list of scheme names that apply together
    /// (OpenAPI's `security:`; empty when the operation needs none).
    pub security: Vec<Vec<String>>,
    /// The operation's or its path's own `servers:` entry, when it has one.
    pub server: Option<String>,
}

/// Where one argument of the tool goes.
#[derive(Debug, Clone)]
pub(crate) struct Param {
    /// The argument's name in the tool's input (the parameter's name, or `name_in` when two
    /// parameters share a name).
    pub arg: String,
    /// The parameter's name on the wire.
    pub name: String,
    pub location: Location,
    pub required: bool,
    pub style: Style,
    pub explode: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

/// How an array or object parameter is written (OpenAPI's `style`), for those the hub writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// `form` (the default of query and cookie parameters), `simple` (path and header).
    Plain,
    /// `deepObject`: `name[key]=value`.
    DeepObject,
    /// `spaceDelimited` and `pipeDelimited`: an array joined by this separator.
    Delimited(char),
}

/// The request body of an operation.
#[derive(Debug, Clone)]
pub(crate) struct Body {
    /// The argument holding it: `body`, or `requestBody` when a parameter is called `body`.
    pub arg: String,
    pub media: Media,
    /// The media type as the document gives it, sent as `Content-Type`.
    pub content_type: String,
    pub required: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Media {
    Json,
    Form,
    /// Anything else: the argument is a string sent as it is.
    Text,
}

/// An operation with the tool that serves it.
pub(crate) struct Extracted {
    pub operation: Operation,
    pub tool: rmcp::model::Tool,
}

/// Every operation of `spec`, in document order (paths, then methods in a fixed order).
pub(crate) fn extract(spec: &oas3::Spec, notes: &mut Vec<String>) -> Vec<Extracted> {
    let defs = Defs::new(spec);
    let mut taken = HashSet::new();
    let mut out = Vec::new();
    let Some(paths) = &spec.paths else {
        return out;
    };
    for (path, item) in paths {
        if item.reference.is_some() {
            notes.push(format!(
                "skipped the operations of `{path}`: its `$ref` to another path item is not followed"
            ));
            continue;
        }
        for (method, op) in item.methods() {
            let base = naming::base_name(op.operation_id.as_deref(), method.as_str(), path);
            let name = naming::unique(base, &mut taken);
            out.push(build(spec, &defs, path, item, method, op, name, notes));
        }
    }
    out
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site, each argument a part of the document"
)]
fn build(
    spec: &oas3::Spec,
    defs: &Defs,
    path: &str,
    item: &PathItem,
    method: http::Method,
    op: &oas3::spec::Operation,
    name: String,
    notes: &mut Vec<String>,
) -> Extracted {
    let params = merged_parameters(spec, &item.parameters, &op.parameters, &name, notes);
    let mut input = Input::default();
    let wired = wire_params(&params, &mut input);
    let body = wire_body(spec, op, &mut input);
    let Input {
        properties,
        required,
        refs,
    } = input;
    let mut input = Map::new();
    input.insert("type".into(), json!("object"));
    input.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        input.insert("required".into(), Value::Array(required));
    }
    input.insert("additionalProperties".into(), json!(false));
    schema::add_defs(&mut input, defs, &refs);
    let output = success_schema(spec, op).map(|s| {
        let mut refs = BTreeSet::new();
        let value = schema::schema_json(&s, &mut refs);
        schema::with_defs(value, defs, &refs)
    });
    let security = security_of(if op.security.is_empty() {
        &spec.security
    } else {
        &op.security
    });
    let server = op
        .servers
        .first()
        .or_else(|| item.servers.first())
        .map(crate::server_url::expand);
    let tool = crate::tool::tool(&name, &method, path, op, input, output);
    Extracted {
        operation: Operation {
            name,
            method,
            path: path.to_owned(),
            params: wired,
            body,
            security,
            server,
        },
        tool,
    }
}

/// The tool's input as it is built: its properties, the required ones, the named schemas
/// they reach.
#[derive(Default)]
struct Input {
    properties: Map<String, Value>,
    required: Vec<Value>,
    refs: BTreeSet<String>,
}

/// Each parameter as a property of the input, and where its value goes.
fn wire_params(params: &[Parameter], input: &mut Input) -> Vec<Param> {
    let Input {
        properties,
        required,
        refs,
    } = input;
    let mut wired = Vec::new();
    for param in params {
        let location = match param.location {
            ParameterIn::Path => Location::Path,
            ParameterIn::Query => Location::Query,
            ParameterIn::Header => Location::Header,
            ParameterIn::Cookie => Location::Cookie,
        };
        let mut arg = param.name.clone();
        if properties.contains_key(&arg) {
            arg = format!("{}_{}", param.name, location.word());
        }
        let schema = param
            .schema
            .as_ref()
            .or_else(|| param.content.as_ref()?.values().next()?.schema.as_ref())
            .map_or_else(
                || json!({"type": "string"}),
                |s| schema::schema_json(s, refs),
            );
        let mut description = param.description.clone().unwrap_or_default();
        if param.deprecated == Some(true) {
            description.push_str(if description.is_empty() {
                "Deprecated."
            } else {
                " (deprecated)"
            });
        }
        properties.insert(arg.clone(), schema::described(schema, Some(&description)));
        let is_required = param.required == Some(true) || location == Location::Path;
        if is_required {
            required.push(Value::String(arg.clone()));
        }
        let style = match param.style {
            Some(ParameterStyle::DeepObject) => Style::DeepObject,
            Some(ParameterStyle::SpaceDelimited) => Style::Delimited(' '),
            Some(ParameterStyle::PipeDelimited) => Style::Delimited('|'),
            _ => Style::Plain,
        };
        // `form` explodes by default, the other styles do not.
        let explode = param.explode.unwrap_or(
            matches!(location, Location::Query | Location::Cookie) && style == Style::Plain,
        );
        wired.push(Param {
            arg,
            name: param.name.clone(),
            location,
            required: is_required,
            style,
            explode,
        });
    }
    wired
}

/// The request body as a property of the input (`body`), and how it is sent.
fn wire_body(spec: &oas3::Spec, op: &oas3::spec::Operation, input: &mut Input) -> Option<Body> {
    let Input {
        properties,
        required,
        refs,
    } = input;
    op.request_body(spec).ok().flatten().and_then(|request| {
        let (content_type, media_type) = pick_media(&request.content)?;
        let media = media_kind(content_type);
        let arg = if properties.contains_key("body") {
            "requestBody"
        } else {
            "body"
        };
        let schema = match (media, &media_type.schema) {
            (Media::Text, _) => json!({"type": "string"}),
            (_, Some(s)) => schema::schema_json(s, refs),
            (_, None) => json!({}),
        };
        properties.insert(
            arg.to_owned(),
            schema::described(schema, request.description.as_deref()),
        );
        let required_body = request.required == Some(true);
        if required_body {
            required.push(Value::String(arg.to_owned()));
        }
        Some(Body {
            arg: arg.to_owned(),
            media,
            content_type: content_type.to_owned(),
            required: required_body,
        })
    })
}

impl Location {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Self::Path => "path",
            Self::Query => "query",
            Self::Header => "header",
            Self::Cookie => "cookie",
        }
    }
}

/// The path's parameters, overridden by the operation's with the same name and location.
fn merged_parameters(
    spec: &oas3::Spec,
    path_level: &[ObjectOrReference<Parameter>],
    op_level: &[ObjectOrReference<Parameter>],
    tool: &str,
    notes: &mut Vec<String>,
) -> Vec<Parameter> {
    let mut params: Vec<Parameter> = Vec::new();
    for reference in path_level.iter().chain(op_level) {
        match reference.resolve(spec) {
            Ok(param) => {
                params.retain(|p| !(p.name == param.name && p.location == param.location));
                params.push(param);
            }
            Err(e) => notes.push(format!("`{tool}`: left out a parameter: {e}")),
        }
    }
    params
}

/// The body's media type the hub sends: JSON first, then a form, then anything else.
fn pick_media(
    content: &oas3::Map<String, oas3::spec::MediaType>,
) -> Option<(&str, &oas3::spec::MediaType)> {
    let find = |want: Media| {
        content
            .iter()
            .find(|(ty, _)| media_kind(ty) == want)
            .map(|(ty, m)| (ty.as_str(), m))
    };
    find(Media::Json)
        .or_else(|| find(Media::Form))
        .or_else(|| content.iter().next().map(|(ty, m)| (ty.as_str(), m)))
}

pub(crate) fn media_kind(content_type: &str) -> Media {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if essence == "application/json" || essence.ends_with("+json") || essence == "*/*" {
        Media::Json
    } else if essence == "application/x-www-form-urlencoded" {
        Media::Form
    } else {
        Media::Text
    }
}

/// The schema of the operation's success: the first 2xx response with a JSON body (`200`
/// before `201`…, then `2XX`), else `default`'s.
fn success_schema(spec: &oas3::Spec, op: &oas3::spec::Operation) -> Option<oas3::spec::Schema> {
    let responses = op.responses(spec);
    let mut codes: Vec<&str> = responses
        .keys()
        .map(String::as_str)
        .filter(|code| code.starts_with('2'))
        .collect();
    // `200` < `201` < `2XX`: exact codes first, lowest first.
    codes.sort_unstable();
    codes.push("default");
    codes
        .into_iter()
        .filter_map(|code| responses.get(code))
        .find_map(|response| {
            let (ty, media) = pick_media(&response.content)?;
            if media_kind(ty) == Media::Json {
                media.schema.clone()
            } else {
                None
            }
        })
}

fn security_of(requirements: &[oas3::spec::SecurityRequirement]) -> Vec<Vec<String>> {
    requirements
        .iter()
        .map(|r| r.0.keys().cloned().collect())
        .collect()
}
