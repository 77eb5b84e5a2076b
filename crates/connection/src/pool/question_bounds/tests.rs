use super::*;
use serde_json::json;

fn form(fields: usize, message: &str) -> Value {
    let properties: serde_json::Map<String, Value> = (0..fields)
        .map(|i| (format!("f{i}"), json!({ "type": "string" })))
        .collect();
    json!({ "message": message, "requestedSchema": { "type": "object", "properties": properties } })
}

#[test]
fn a_question_within_the_bounds_passes() {
    assert_eq!(oversized_question(&form(MAX_FORM_FIELDS, "Name?")), None);
    let just_under = "m".repeat(MAX_QUESTION_BYTES - 200);
    assert_eq!(oversized_question(&form(1, &just_under)), None);
}

#[test]
fn too_many_fields_or_bytes_say_which_bound() {
    let wide = oversized_question(&form(10_000, "Name?")).unwrap();
    assert!(
        wide.starts_with("question too large: its form has 10000 fields, over the limit of 50"),
        "{wide}"
    );
    let long = oversized_question(&form(1, &"m".repeat(2 << 20))).unwrap();
    assert!(
        long.starts_with("question too large: it weighs 2.0 MiB, over the 64 KiB limit"),
        "{long}"
    );
    let url =
        json!({ "mode": "url", "url": format!("https://example.com/{}", "a".repeat(70_000)) });
    assert!(oversized_question(&url).is_some());
}

#[test]
fn sampling_is_measured_whole() {
    let tools = [
        json!({ "name": "t", "description": "d".repeat(5 << 20), "inputSchema": { "type": "object" } }),
    ];
    let params = json!({ "maxTokens": 1, "messages": [{ "role": "user", "content": { "type": "text", "text": "hi" } }], "tools": tools });
    let why = oversized_sampling(&params).unwrap();
    assert!(why.ends_with("MiB, over the 4 MiB limit"), "{why}");
    assert_eq!(oversized_sampling(&json!({ "messages": [] })), None);
}

#[test]
fn a_server_has_at_most_eight_places_and_gets_one_back_with_each_answer() {
    let slots = QuestionSlots::default();
    let taken: Vec<Slot> = (0..MAX_OPEN_QUESTIONS)
        .map(|_| slots.take("elicitation").unwrap())
        .collect();
    let refused = slots.take("elicitation").unwrap_err();
    assert_eq!(refused.code, LIMIT_EXCEEDED);
    assert!(
        refused.message.starts_with(
            "elicitation refused: too many questions: this server has 8 questions open"
        ),
        "{}",
        refused.message
    );
    drop(taken);
    assert!(slots.take("elicitation").is_ok());
}

#[test]
fn sizes_read_as_people_say_them() {
    assert_eq!(size(64 * 1024), "64 KiB");
    assert_eq!(size(4 * 1024 * 1024), "4 MiB");
    assert_eq!(size(10 * 1024 * 1024 + 100), "10.0 MiB");
    assert_eq!(size(66_000), "64.5 KiB");
}
