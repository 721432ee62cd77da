//! One call's JSON tree, keys in file order (serde_json's own `Value` sorts them unless built
//! with `preserve_order`; here order is a fact of the dump: argument and output positions).

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value; objects keep their keys in file order.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    /// A leaf: an object with a string `type`.
    pub fn is_leaf(&self) -> bool {
        matches!(self.get("type"), Some(Node::Str(_)))
    }

    /// The value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The children of a list (named by index) or an object (named by key).
    pub fn children(&self) -> Box<dyn Iterator<Item = (String, &Node)> + '_> {
        match self {
            Node::List(l) => Box::new(l.iter().enumerate().map(|(i, n)| (i.to_string(), n))),
            Node::Map(m) => Box::new(m.iter().map(|(k, n)| (k.clone(), n))),
            _ => Box::new(std::iter::empty()),
        }
    }

    /// A number: JSON numbers, the quoted non-finite tokens, numeric strings, bools as 1 / 0.
    pub fn number(&self) -> Option<f64> {
        match self {
            Node::Num(v) => Some(*v),
            Node::Bool(b) => Some(f64::from(u8::from(*b))),
            Node::Str(s) => match s.as_str() {
                "NaN" | "nan" => Some(f64::NAN),
                "Infinity" | "inf" => Some(f64::INFINITY),
                "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
                other => other.trim().parse().ok(),
            },
            _ => None,
        }
    }

    /// A scalar as text (strings as they are, numbers and bools printed); `None` otherwise.
    pub fn text(&self) -> Option<String> {
        match self {
            Node::Str(s) => Some(s.clone()),
            Node::Num(v) => Some(v.to_string()),
            Node::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Num(v as f64))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Num(v as f64))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Num(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut out = Vec::new();
        while let Some(n) = seq.next_element()? {
            out.push(n);
        }
        Ok(Node::List(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut out = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Node>()? {
            out.push((k, v));
        }
        Ok(Node::Map(out))
    }
}
