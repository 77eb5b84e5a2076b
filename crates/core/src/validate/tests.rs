use super::*;
use serde_json::json;

fn problems(schema: Value, args: Value) -> Vec<String> {
    check_arguments(&schema, &args)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn echo_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "message": { "type": "string", "minLength": 1 },
            "count": { "type": "integer", "minimum": 1, "maximum": 10 },
            "mode": { "type": "string", "enum": ["fast", "slow"] },
            "tags": { "type": "array", "items": { "type": "string" }, "maxItems": 2 },
            "options": {
                "type": "object",
                "properties": { "depth": { "type": "number", "exclusiveMinimum": 0 } },
                "required": ["depth"],
                "additionalProperties": false
            }
        },
        "required": ["message"],
        "additionalProperties": false
    })
}

#[test]
fn fitting_arguments_pass() {
    let args = json!({ "message": "hi", "count": 3.0, "mode": "fast", "tags": ["a"], "options": { "depth": 0.5 } });
    assert!(problems(echo_schema(), args).is_empty());
    assert!(problems(json!({}), json!({ "anything": [1, { "x": null }] })).is_empty());
    assert!(problems(json!(true), json!({ "x": 1 })).is_empty());
}

#[test]
fn each_problem_names_its_place() {
    let args = json!({
        "count": "5",
        "mode": "medium",
        "tags": ["a", 2, "c"],
        "options": { "detph": 1 },
        "mesage": "typo"
    });
    assert_eq!(
        problems(echo_schema(), args),
        [
            "`message`: required (string), missing",
            "`count`: expected integer, got string \"5\"",
            "`mode`: must be one of \"fast\", \"slow\", got \"medium\"",
            "`tags`: takes at most 2 items, got 3",
            "`tags[1]`: expected string, got number 2",
            "`options.depth`: required (number), missing",
            "`options.detph`: not a parameter of this tool; did you mean `depth`?",
            "`mesage`: not a parameter of this tool; did you mean `message`?",
        ]
    );
}

#[test]
fn bounds_and_patterns() {
    let schema = json!({ "type": "object", "properties": {
        "n": { "type": "number", "minimum": 1, "exclusiveMaximum": 5 },
        "old": { "type": "number", "maximum": 5, "exclusiveMaximum": true },
        "id": { "type": "string", "pattern": "^[a-z]+$", "maxLength": 3 },
        "lookahead": { "type": "string", "pattern": "^(?=x)" }
    }});
    assert_eq!(
        problems(
            schema.clone(),
            json!({ "n": 5, "old": 5, "id": "ABCD", "lookahead": "y" })
        ),
        [
            "`n`: must be less than 5, got 5",
            "`old`: must be at most 5, got 5",
            "`id`: takes at most 3 characters, got 4",
            "`id`: must match the pattern ^[a-z]+$",
        ]
    );
    assert_eq!(
        problems(schema, json!({ "n": 0.5 })),
        ["`n`: must be at least 1, got 0.5"]
    );
}

#[test]
fn combinations_refs_and_nullable() {
    let schema = json!({
        "type": "object",
        "$defs": { "point": { "type": "object", "properties": { "x": { "type": "number" } }, "required": ["x"] } },
        "properties": {
            "at": { "$ref": "#/$defs/point" },
            "id": { "anyOf": [{ "type": "string" }, { "type": "integer" }] },
            "shape": { "oneOf": [
                { "type": "object", "properties": { "kind": { "const": "circle" }, "r": { "type": "number" } }, "required": ["kind", "r"] },
                { "type": "string" }
            ]},
            "note": { "type": "string", "nullable": true },
            "both": { "allOf": [{ "minimum": 0 }, { "maximum": 9 }] }
        }
    });
    assert!(problems(
        schema.clone(),
        json!({ "at": { "x": 1 }, "id": 7, "shape": "square", "note": null, "both": 3 })
    )
    .is_empty());
    assert_eq!(
        problems(
            schema,
            json!({ "at": {}, "id": true, "shape": { "kind": "circle" }, "both": 12 })
        ),
        [
            "`at.x`: required (number), missing",
            "`id`: matches none of the allowed forms (string | integer)",
            "`shape.r`: required (number), missing",
            "`both`: must be at most 9, got 12",
        ]
    );
}

#[test]
fn tuples_and_open_objects() {
    let schema = json!({ "type": "object", "properties": {
        "pair": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "number" }], "minItems": 2 },
        "legacy": { "type": "array", "items": [{ "type": "boolean" }] },
        "env": { "type": "object", "additionalProperties": { "type": "string" } },
        "headers": { "type": "object", "patternProperties": { "^x-": { "type": "string" } }, "additionalProperties": false }
    }});
    assert_eq!(
        problems(
            schema,
            json!({ "pair": [1], "legacy": [true, "anything"], "env": { "A": 1 }, "headers": { "x-a": "1" } })
        ),
        [
            "`pair`: needs at least 2 items, got 1",
            "`pair[0]`: expected string, got number 1",
            "`env.A`: expected string, got number 1",
        ]
    );
}

#[test]
fn self_referencing_schemas_end_and_problems_are_capped() {
    let schema =
        json!({ "type": "object", "properties": { "node": { "$ref": "#" } }, "required": ["v"] });
    let mut deep = json!({ "v": 1 });
    for _ in 0..100 {
        deep = json!({ "v": 1, "node": deep });
    }
    assert!(problems(schema.clone(), deep).is_empty());
    let many: Map<String, Value> = (0..20).map(|i| (format!("k{i}"), json!(1))).collect();
    let closed = json!({ "type": "object", "additionalProperties": false });
    assert_eq!(
        check_arguments(&closed, &Value::Object(many)).len(),
        MAX_PROBLEMS
    );
}

#[test]
fn null_optionals_count_as_left_out() {
    let schema = json!({
        "type": "object",
        "properties": {
            "verbose": { "type": "boolean" },
            "maybe": { "type": ["string", "null"] },
            "must": { "type": "string" },
            "free": {}
        },
        "required": ["must"]
    });
    let args = json!({ "verbose": null, "maybe": null, "must": null, "free": null, "other": null });
    let kept = without_null_optionals(&schema, args.as_object().unwrap().clone());
    let names: Vec<_> = kept.keys().map(String::as_str).collect();
    assert_eq!(names, ["maybe", "must", "free", "other"]);
    // What is left is checked as before: a required field may not be null.
    assert_eq!(check_arguments(&schema, &Value::Object(kept)).len(), 1);
}
