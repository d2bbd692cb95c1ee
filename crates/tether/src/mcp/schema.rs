//! Tool schemas every MCP client accepts. schemars writes the OpenAPI-style
//! formats of Rust's number types (`uint64`, `uint`, `int32`, `double` …),
//! which JSON Schema does not define: the TypeScript SDK's validator warns
//! about each (`unknown format "uint64" ignored`). The range stays in
//! `minimum`/`maximum`; only the formats JSON Schema defines are kept.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::JsonObject;
use schemars::Schema;
use schemars::transform::{Transform, transform_subschemas};
use serde_json::Value;

/// The formats JSON Schema (2020-12) defines.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops every `format` JSON Schema does not define, in every subschema.
struct StandardFormats;

impl Transform for StandardFormats {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            let foreign = object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f));
            if foreign {
                object.remove("format");
            }
        }
        transform_subschemas(self, schema);
    }
}

/// `schema` with only standard formats.
pub fn standard(schema: &JsonObject) -> Arc<JsonObject> {
    let mut s = Schema::from(schema.clone());
    StandardFormats.transform(&mut s);
    match s.to_value() {
        Value::Object(o) => Arc::new(o),
        _ => Arc::new(schema.clone()),
    }
}

/// Makes every tool's input and output schema standard.
pub fn standardize<S>(router: &mut ToolRouter<S>) {
    for route in router.map.values_mut() {
        route.attr.input_schema = standard(&route.attr.input_schema);
        if let Some(out) = &route.attr.output_schema {
            route.attr.output_schema = Some(standard(out));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Every `format` value anywhere in `value`.
    fn formats(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(o) => {
                if let Some(Value::String(f)) = o.get("format") {
                    found.push(f.clone());
                }
                o.values().for_each(|v| formats(v, found));
            }
            Value::Array(a) => a.iter().for_each(|v| formats(v, found)),
            _ => {}
        }
    }

    #[test]
    fn every_tool_schema_keeps_only_standard_formats_and_its_ranges() {
        let mut router = crate::mcp::TetherMcp::tool_router();
        let mut before = Vec::new();
        for tool in router.list_all() {
            formats(&serde_json::to_value(&tool).unwrap(), &mut before);
        }
        assert!(before.iter().any(|f| f == "uint64"), "{before:?}");
        standardize(&mut router);
        for tool in router.list_all() {
            let v = serde_json::to_value(&tool).unwrap();
            let mut found = Vec::new();
            formats(&v, &mut found);
            assert!(
                found.iter().all(|f| STANDARD_FORMATS.contains(&f.as_str())),
                "{}: {found:?}",
                tool.name
            );
            if tool.name == "shell_run" {
                let duration = &v["outputSchema"]["properties"]["duration_ms"];
                assert_eq!(duration["minimum"], 0, "{duration}");
                assert_eq!(duration["type"], "integer", "{duration}");
            }
        }
    }

    #[test]
    fn a_property_named_format_is_not_a_format() {
        let schema: JsonObject = serde_json::from_str(
            r#"{"type":"object","properties":{"format":{"type":"string","format":"double"}},"$defs":{"T":{"type":"number","format":"date"}}}"#,
        )
        .unwrap();
        let out = standard(&schema);
        assert_eq!(
            serde_json::Value::Object((*out).clone()),
            serde_json::json!({"type":"object","properties":{"format":{"type":"string"}},"$defs":{"T":{"type":"number","format":"date"}}})
        );
    }
}
