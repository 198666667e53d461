//! Reading documents: OpenAPI 3.0 in YAML (its `nullable` and `$ref`s), what each operation
//! becomes as a tool, and the documents refused with a sentence that says why.

use std::collections::BTreeMap;
use std::time::Duration;

use capa_openapi::{Api, LoadError, Location, Settings};
use serde_json::{Value, json};

const PETSTORE_3_0: &str = r##"
openapi: 3.0.3
info: { title: Pets, version: "1", description: A pet shop. }
servers: [{ url: "https://{region}.pets.example/v1", variables: { region: { default: eu } } }]
security: [{ key: [] }]
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      parameters:
        - { name: limit, in: query, schema: { type: integer, maximum: 100, exclusiveMaximum: true } }
      responses:
        "200":
          description: ok
          content: { application/json: { schema: { type: array, items: { $ref: "#/components/schemas/Pet" } } } }
    post:
      summary: Add a pet
      requestBody:
        required: true
        content: { application/json: { schema: { $ref: "#/components/schemas/Pet" } } }
      responses: { "201": { description: made, content: { application/json: { schema: { $ref: "#/components/schemas/Pet" } } } } }
  /pets/{petId}:
    parameters: [{ $ref: "#/components/parameters/PetId" }]
    delete:
      operationId: pets/delete
      security: []
      responses: { "204": { description: gone } }
components:
  parameters:
    PetId: { name: petId, in: path, required: true, schema: { type: string } }
  securitySchemes:
    key: { type: apiKey, in: header, name: X-Key }
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: { type: string }
        owner: { $ref: "#/components/schemas/Owner" }
        nickname: { type: string, nullable: true }
    Owner:
      type: object
      properties:
        pets: { type: array, items: { $ref: "#/components/schemas/Pet" } }
"##;

fn settings(location: Location) -> Settings {
    Settings {
        location,
        base_url: None,
        headers: BTreeMap::new(),
        auth: BTreeMap::new(),
        timeout: Duration::from_secs(5),
    }
}

async fn load(text: &str, auth: &[(&str, &str)]) -> Result<Api, LoadError> {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("api.yaml");
    std::fs::write(&file, text).expect("write");
    let mut settings = settings(Location::File(file));
    settings.auth = auth
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Api::load(&settings).await
}

fn tool(api: &Api, name: &str) -> Value {
    let tool = api
        .tools()
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    serde_json::to_value(tool).expect("json")
}

#[tokio::test]
async fn a_3_0_document_becomes_tools_with_named_types_and_annotations() {
    let api = load(PETSTORE_3_0, &[("key", "k-1")]).await.expect("loads");
    assert_eq!(api.version, "3.0.3");
    assert_eq!(api.base_url(), "https://eu.pets.example/v1");
    let names: Vec<&str> = api.tools().iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["listPets", "post_pets", "pets_delete"]);

    let list = tool(&api, "listPets");
    assert_eq!(list["annotations"]["readOnlyHint"], true);
    // 3.0's boolean exclusiveMaximum became 3.1's number.
    assert_eq!(
        list["inputSchema"]["properties"]["limit"],
        json!({"type": "integer", "exclusiveMaximum": 100})
    );
    assert_eq!(list["outputSchema"]["items"]["$ref"], "#/$defs/Pet");
    // Recursion is kept as named types: Pet → Owner → Pet.
    let defs = &list["outputSchema"]["$defs"];
    assert_eq!(
        defs["Owner"]["properties"]["pets"]["items"]["$ref"],
        "#/$defs/Pet"
    );
    assert_eq!(
        defs["Pet"]["properties"]["nickname"]["type"],
        json!(["string", "null"])
    );

    let add = tool(&api, "post_pets");
    assert_eq!(add["inputSchema"]["required"], json!(["body"]));
    assert_eq!(
        add["inputSchema"]["properties"]["body"]["$ref"],
        "#/$defs/Pet"
    );
    assert_eq!(add["annotations"]["destructiveHint"], false);
    assert!(
        add["description"]
            .as_str()
            .is_some_and(|d| d.ends_with("HTTP: POST /pets"))
    );

    let delete = tool(&api, "pets_delete");
    assert_eq!(delete["annotations"]["destructiveHint"], true);
    assert_eq!(delete["inputSchema"]["required"], json!(["petId"]));
    assert_eq!(delete["inputSchema"]["additionalProperties"], false);
}

#[tokio::test]
async fn documents_that_cannot_be_served_say_why() {
    let message = |r: Result<Api, LoadError>| r.map(|_| ()).expect_err("refused").to_string();

    let unknown = message(load(PETSTORE_3_0, &[("token", "t")]).await);
    assert!(
        unknown.contains("`token`") && unknown.contains("`key`"),
        "{unknown}"
    );

    let relative = PETSTORE_3_0.replace("https://{region}.pets.example/v1", "/v1");
    let relative = message(load(&relative, &[]).await);
    assert!(relative.contains("set `baseUrl:`"), "{relative}");

    let swagger = message(
        load(
            "swagger: '2.0'\ninfo: { title: x, version: '1' }\npaths: {}\n",
            &[],
        )
        .await,
    );
    assert!(swagger.contains("Swagger 2.0"), "{swagger}");

    let future = message(load("openapi: 4.0.0\ninfo: { title: x, version: '1' }\n", &[]).await);
    assert!(future.contains("reads 3.0 and 3.1"), "{future}");

    let broken = message(load("{ not json", &[]).await);
    assert!(broken.contains("not valid JSON"), "{broken}");

    let missing =
        message(Api::load(&settings(Location::File("/nonexistent/api.yaml".into()))).await);
    assert!(
        missing.contains("/nonexistent/api.yaml") && missing.contains("no such file"),
        "{missing}"
    );

    let refused = message(
        Api::load(&settings(Location::Url(
            "http://127.0.0.1:9/openapi.json".into(),
        )))
        .await,
    );
    assert!(
        refused.contains("cannot fetch") && refused.contains("connection refused"),
        "{refused}"
    );
}

#[tokio::test]
async fn large_yaml_documents_are_read_and_deep_ones_refused() {
    // 300,000 enum values: over the YAML reader's default node budget, made for config files.
    let values: String = (0..300_000).map(|i| format!("        - v{i}\n")).collect();
    let large = format!(
        "openapi: 3.1.0\ninfo: {{ title: big, version: '1' }}\nservers: [{{ url: 'https://x.example' }}]\npaths:\n  /a:\n    get:\n      operationId: a\n      parameters:\n        - name: pick\n          in: query\n          schema:\n            type: string\n            enum:\n{}      responses: {{ '200': {{ description: ok }} }}\n",
        values.replace("        - ", "              - ")
    );
    let api = load(&large, &[])
        .await
        .expect("a large YAML document loads");
    assert_eq!(api.tools().len(), 1);

    // Flow collections nested past both bounds (the YAML reader's depth, 128, and its flow
    // nesting, 255): refused, not a stack overflow.
    let depth = 300;
    let mut deep =
        String::from("openapi: 3.1.0\ninfo: { title: deep, version: '1' }\npaths: {}\nx-deep: ");
    deep.push_str(&"[".repeat(depth));
    deep.push_str(&"]".repeat(depth));
    deep.push('\n');
    let refused = load(&deep, &[]).await.map(|_| ()).expect_err("too deep");
    assert!(refused.to_string().contains("YAML"), "{refused}");
}

#[tokio::test]
async fn a_schema_nested_as_deep_as_json_reads_is_served() {
    // 55 levels of `properties` (118 of JSON with the path to it, under serde_json's 128): parsed, typed, turned
    // into a tool and dropped without exhausting a stack.
    let mut schema = json!({"type": "string"});
    for _ in 0..55 {
        schema = json!({"type": "object", "properties": {"a": schema}});
    }
    let document = json!({
        "openapi": "3.1.0",
        "info": {"title": "deep", "version": "1"},
        "servers": [{"url": "https://x.example"}],
        "paths": {"/a": {"post": {
            "operationId": "deep",
            "requestBody": {"content": {"application/json": {"schema": schema}}},
            "responses": {"200": {"description": "ok"}}
        }}}
    });
    let api = load(&document.to_string(), &[]).await.expect("loads");
    assert_eq!(api.tools().len(), 1);
}

#[tokio::test]
async fn a_document_url_that_never_answers_fails_in_time() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    // Accepts connections and holds them without a word.
    let held = tokio::spawn(async move {
        let mut kept = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            kept.push(socket);
        }
    });
    let mut settings = settings(Location::Url(format!(
        "http://127.0.0.1:{port}/openapi.json"
    )));
    settings.timeout = Duration::from_millis(500);
    let refused = Api::load(&settings)
        .await
        .map(|_| ())
        .expect_err("no answer")
        .to_string();
    assert!(
        refused.contains("cannot fetch") && refused.contains("no answer in time"),
        "{refused}"
    );
    held.abort();
}
