//! The group files of ClusterShell's `autodir` (`groups.d/*.yaml`): each
//! top-level key a source, holding `group: node set` (or a list of node
//! sets, joined as a union). What ClusterShell refuses is refused here
//! too (a top level or a source that is not a mapping, a name that is not
//! a string), and also a group with no value or a nested mapping, which
//! ClusterShell cannot resolve either.
//!
//! Parsed with `yaml-rust2`: a maintained YAML 1.2 parser without serde
//! (`serde_yaml` is deprecated, `serde_yml` unsound and archived), which
//! keeps the file's order, so the first source of a file comes first as
//! it does in ClusterShell.

use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

use crate::error::ClusterError;

/// A source's groups, in the file's order.
pub type Groups = Vec<(String, String)>;

fn problem(file: &Path, problem: String) -> ClusterError {
    ClusterError::GroupsConf {
        file: file.to_owned(),
        problem,
    }
}

/// The sources of `text` (from `file`, for messages), in its order.
pub fn sources(file: &Path, text: &str) -> Result<Vec<(String, Groups)>, ClusterError> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| problem(file, e.to_string()))?;
    let Some(Yaml::Hash(top)) = docs.into_iter().next() else {
        return Err(problem(
            file,
            "invalid content (its top is not a mapping)".into(),
        ));
    };
    let mut out = Vec::new();
    for (source, groups) in top {
        let Yaml::String(source) = source else {
            return Err(problem(
                file,
                format!("group source {source:?} is not a string (add quotes?)"),
            ));
        };
        let Yaml::Hash(groups) = groups else {
            return Err(problem(
                file,
                format!("invalid content (group source {source:?} is not a mapping)"),
            ));
        };
        let mut list = Vec::new();
        for (name, nodes) in groups {
            let Yaml::String(name) = name else {
                return Err(problem(
                    file,
                    format!("{source}: group name {name:?} is not a string (add quotes?)"),
                ));
            };
            let nodes = match nodes {
                Yaml::Array(items) => items
                    .iter()
                    .map(scalar)
                    .collect::<Option<Vec<String>>>()
                    .map(|v| v.join(",")),
                other => scalar(&other),
            }
            .ok_or_else(|| {
                problem(
                    file,
                    format!("{source}: group {name:?} is not a node set or a list of them"),
                )
            })?;
            list.push((name, nodes));
        }
        out.push((source, list));
    }
    Ok(out)
}

/// A scalar as text (numbers and booleans as written in YAML).
fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(if *b { "True" } else { "False" }.into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sources_in_order_with_lists() {
        let text = "roles:\n  adm: 'e0'\n  io: '@racks:rack2,e2'\nracks:\n  rack5:\n    - 'e[200-205]'  # a comment\n    - e245\n";
        let s = sources(Path::new("c.yaml"), text).unwrap();
        assert_eq!(s[0].0, "roles");
        assert_eq!(s[0].1[1], ("io".into(), "@racks:rack2,e2".into()));
        assert_eq!(s[1].1[0], ("rack5".into(), "e[200-205],e245".into()));
    }

    #[test]
    fn refused_as_clustershell_refuses() {
        for (text, says) in [
            ("- a\n", "top is not a mapping"),
            ("s: x\n", "is not a mapping"),
            ("1: {a: b}\n", "not a string"),
            ("s:\n  1: b\n", "not a string"),
            ("s:\n  a:\n", "not a node set"),
            ("s: {a: [x, {b: c}]}\n", "not a node set"),
            ("s: [\n", "c.yaml"),
        ] {
            let e = sources(Path::new("c.yaml"), text).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }
}
