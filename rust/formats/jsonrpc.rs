//! The id of a JSON-RPC line the protocol layer could not take, so the error that answers
//! it carries the id and the client stops waiting (issue 20, item 10).
//!
//! Only the top-level `id` is read; every other value is skipped by serde_json without
//! recursion (its `IgnoredAny` walks nesting with a heap stack), so a request nested a
//! million deep, or one with a lone surrogate escape in a string, still gives its id. An
//! id read before the line breaks off is kept: a line cut short keeps the id at its head.

use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
use std::fmt;

#[derive(Debug, PartialEq)]
pub enum Id {
    /// Any integer JSON writes in 64 bits, signed or not.
    Int(i128),
    Str(String),
    /// An `id` key whose value is no id (a fraction, a boolean, null, an array, an object).
    Invalid,
}

/// Whether `line` is one JSON object, and its `id`: None when it has no `id` key.
pub fn request_id(line: &[u8]) -> (bool, Option<Id>) {
    let mut id = None;
    let mut de = serde_json::Deserializer::from_slice(line);
    let whole = de
        .deserialize_map(TopLevel(&mut id))
        .and_then(|()| de.end())
        .is_ok();
    (whole, id)
}

struct TopLevel<'a>(&'a mut Option<Id>);

impl<'de> Visitor<'de> for TopLevel<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "id" {
                // Any JSON value (serde_json stops nesting at 128); only these two are ids.
                *self.0 = Some(match map.next_value::<serde_json::Value>()? {
                    serde_json::Value::Number(n) => match n
                        .as_i64()
                        .map(i128::from)
                        .or_else(|| n.as_u64().map(i128::from))
                    {
                        Some(i) => Id::Int(i),
                        None => Id::Invalid,
                    },
                    serde_json::Value::String(s) => Id::Str(s),
                    _ => Id::Invalid,
                });
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_read_past_what_the_protocol_layer_refuses() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{}{},"id":7}}"#,
            "[".repeat(1_000_000),
            "]".repeat(1_000_000)
        );
        assert_eq!(request_id(deep.as_bytes()), (true, Some(Id::Int(7))));
        let surrogate = r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{"s":"\ud800"}}"#;
        assert_eq!(
            request_id(surrogate.as_bytes()),
            (true, Some(Id::Str("a".into())))
        );
        let list_params = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":["x"]}"#;
        assert_eq!(request_id(list_params.as_bytes()), (true, Some(Id::Int(1))));
    }

    #[test]
    fn a_line_cut_short_keeps_the_id_at_its_head_and_other_lines_have_none() {
        assert_eq!(
            request_id(br#"{"jsonrpc": "2.0", "id": 7, "method": "#),
            (false, Some(Id::Int(7)))
        );
        assert_eq!(
            request_id(br#"{"id": 7, "params": {"x": "aaaa"#),
            (false, Some(Id::Int(7)))
        );
        assert_eq!(request_id(b"this is not json"), (false, None));
        assert_eq!(request_id(br#"[{"id": 1}]"#), (false, None));
        assert_eq!(
            request_id(br#"{"id": 1.5, "method": "x"}"#),
            (true, Some(Id::Invalid))
        );
        assert_eq!(request_id(br#"{"id": null}"#), (true, Some(Id::Invalid)));
        assert_eq!(request_id(br#"{"id": true}"#), (true, Some(Id::Invalid)));
        assert_eq!(
            request_id(br#"{"id": 18446744073709551615}"#),
            (true, Some(Id::Int(u64::MAX.into())))
        );
        assert_eq!(request_id(br#"{"method": "x"}"#), (true, None));
        assert_eq!(
            request_id(br#"{"id": 1} trailing"#),
            (false, Some(Id::Int(1)))
        );
    }
}
