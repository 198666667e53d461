//! The keywords of one schema object, read in a single pass. Schema maps keep their published
//! order (an `IndexMap` with SipHash), so thirty `get`s per node would hash thirty times; one walk
//! over the usually five or so entries is several times cheaper, and `describe` builds a whole
//! namespace per call.

use serde_json::{Map, Value};

#[derive(Default)]
pub(crate) struct Keywords<'a> {
    pub reference: Option<&'a Value>,
    pub types: Option<&'a Value>,
    pub enumeration: Option<&'a Value>,
    pub constant: Option<&'a Value>,
    pub properties: Option<&'a Value>,
    pub required: Option<&'a Value>,
    pub additional_properties: Option<&'a Value>,
    pub pattern_properties: Option<&'a Value>,
    pub items: Option<&'a Value>,
    pub prefix_items: Option<&'a Value>,
    pub additional_items: Option<&'a Value>,
    pub any_of: Option<&'a Value>,
    pub one_of: Option<&'a Value>,
    pub all_of: Option<&'a Value>,
    pub nullable: bool,
    // Documentation only.
    pub description: Option<&'a Value>,
    pub default: Option<&'a Value>,
    pub format: Option<&'a Value>,
    pub pattern: Option<&'a Value>,
    pub deprecated: bool,
    /// `minimum`, `maxLength`, … in schema order.
    pub bounds: Vec<(&'a str, &'a Value)>,
}

impl<'a> Keywords<'a> {
    pub(crate) fn of(map: &'a Map<String, Value>) -> Self {
        let mut k = Keywords::default();
        for (key, value) in map {
            let slot = match key.as_str() {
                "$ref" => &mut k.reference,
                "type" => &mut k.types,
                "enum" => &mut k.enumeration,
                "const" => &mut k.constant,
                "properties" => &mut k.properties,
                "required" => &mut k.required,
                "additionalProperties" => &mut k.additional_properties,
                "patternProperties" => &mut k.pattern_properties,
                "items" => &mut k.items,
                "prefixItems" => &mut k.prefix_items,
                "additionalItems" => &mut k.additional_items,
                "anyOf" => &mut k.any_of,
                "oneOf" => &mut k.one_of,
                "allOf" => &mut k.all_of,
                "description" => &mut k.description,
                "default" => &mut k.default,
                "format" => &mut k.format,
                "pattern" => &mut k.pattern,
                "nullable" => {
                    k.nullable = value == &Value::Bool(true);
                    continue;
                }
                "deprecated" => {
                    k.deprecated = value == &Value::Bool(true);
                    continue;
                }
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "minLength"
                | "maxLength" | "minItems" | "maxItems" | "multipleOf" => {
                    k.bounds.push((key.as_str(), value));
                    continue;
                }
                _ => continue,
            };
            *slot = Some(value);
        }
        k
    }
}
