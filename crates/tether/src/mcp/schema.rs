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

/// A `oneOf` whose every branch is one documented string constant (how
/// schemars writes a documented unit enum such as `Status`) becomes one
/// `enum`, the constants' meanings folded into its description. The same
/// values validate, and a client that checks every result against the
/// schema (the Python SDK does) tests one list instead of building an
/// error for each branch that does not match.
struct PlainEnums;

impl Transform for PlainEnums {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut()
            && let Some(Value::Array(branches)) = object.get("oneOf")
        {
            let constants: Option<Vec<(String, Option<String>)>> = branches
                .iter()
                .map(|b| {
                    let b = b.as_object()?;
                    let only_const = b
                        .keys()
                        .all(|k| matches!(k.as_str(), "const" | "type" | "description"));
                    let is_string = b.get("type").is_none_or(|t| t == "string");
                    let value = b.get("const")?.as_str()?.to_owned();
                    let meaning = b
                        .get("description")
                        .and_then(Value::as_str)
                        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "));
                    (only_const && is_string).then_some((value, meaning))
                })
                .collect();
            if let Some(constants) = constants.filter(|c| !c.is_empty()) {
                let meanings: Vec<String> = constants
                    .iter()
                    .map(|(v, m)| match m {
                        Some(m) => format!("`{v}`: {m}"),
                        None => format!("`{v}`"),
                    })
                    .collect();
                let lead = object
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|d| format!("{d} "))
                    .unwrap_or_default();
                object.remove("oneOf");
                object.insert("type".into(), "string".into());
                object.insert(
                    "enum".into(),
                    constants
                        .iter()
                        .map(|(v, _)| Value::from(v.as_str()))
                        .collect(),
                );
                object.insert(
                    "description".into(),
                    format!("{lead}{}", meanings.join("; ")).into(),
                );
            }
        }
        transform_subschemas(self, schema);
    }
}

/// `schema` with only standard formats, and documented string enums as
/// plain `enum`s.
pub fn standard(schema: &JsonObject) -> Arc<JsonObject> {
    let mut s = Schema::from(schema.clone());
    StandardFormats.transform(&mut s);
    PlainEnums.transform(&mut s);
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

    #[test]
    fn documented_string_constants_become_one_enum_with_their_meanings() {
        let schema: JsonObject = serde_json::from_str(
            r#"{"$defs":{"S":{"description":"How it ended.","oneOf":[{"const":"exited","type":"string","description":"It\nexited."},{"const":"reset","type":"string"}]},"M":{"oneOf":[{"const":"a"},{"type":"integer"}]}}}"#,
        )
        .unwrap();
        let out = Value::Object((*standard(&schema)).clone());
        assert_eq!(
            out["$defs"]["S"],
            serde_json::json!({"description":"How it ended. `exited`: It exited.; `reset`","type":"string","enum":["exited","reset"]})
        );
        // A mixed oneOf stays as it is.
        assert_eq!(out["$defs"]["M"], schema["$defs"]["M"]);
        let mut router = crate::mcp::TetherMcp::tool_router();
        standardize(&mut router);
        let run = router
            .list_all()
            .into_iter()
            .find(|t| t.name == "shell_run")
            .unwrap();
        let status = &serde_json::to_value(&run).unwrap()["outputSchema"]["$defs"]["Status"];
        assert_eq!(status["enum"][0], "exited", "{status}");
        assert!(
            status["description"]
                .as_str()
                .unwrap()
                .contains("`closed`: "),
            "{status}"
        );
    }
}
