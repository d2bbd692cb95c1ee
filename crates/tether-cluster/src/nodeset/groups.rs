//! What a `@` term asks of the caller's resolver, as ClusterShell reads
//! it: `@name` (the default source), `@source:name`, `@*` and
//! `@source:*` (every node of a source), `@@source` (the names of a
//! source's groups). The resolver does any I/O; the grammar does none.

use crate::error::ClusterError;

/// One `@` term, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupRef<'a> {
    /// `@name` or `@source:name`.
    Group(&'a str),
    /// `@*` or `@source:*`.
    All,
    /// `@@source` (`@@` alone: the default source).
    Names,
}

/// A group's text, parsed as a node set in `source`: the `@name`s it
/// holds are that source's (`None`: the default source's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupBody {
    /// The node set (comma-separated parts).
    pub text: String,
    /// The source the groups named in `text` are looked up in.
    pub source: Option<String>,
}

/// Where `@group`s come from.
pub trait Groups {
    /// The body of `what` in `source` (`None`: the default source). An
    /// unknown group or source is an error naming those that exist.
    fn resolve(&self, source: Option<&str>, what: GroupRef<'_>) -> Result<GroupBody, ClusterError>;
}

/// A resolver by name alone: `source:name` when a source is given; `@*`
/// and `@@` are unknown groups.
pub struct ByName<'a>(pub &'a dyn Fn(&str) -> Option<String>);

impl Groups for ByName<'_> {
    fn resolve(&self, source: Option<&str>, what: GroupRef<'_>) -> Result<GroupBody, ClusterError> {
        let name = match what {
            GroupRef::Group(g) => g.to_owned(),
            GroupRef::All => "*".to_owned(),
            GroupRef::Names => format!("@{}", source.unwrap_or("")),
        };
        let name = match (what, source) {
            (GroupRef::Names, _) | (_, None) => name,
            (_, Some(s)) => format!("{s}:{name}"),
        };
        let text = (self.0)(&name).ok_or(ClusterError::UnknownGroup(name))?;
        Ok(GroupBody { text, source: None })
    }
}

/// Reads the name after `@`, as ClusterShell's `parse_group_string`:
/// the source before the first `:` (an empty one is the default), `*`
/// for every node, a leading `@` for the group names.
pub fn read(name: &str) -> (Option<&str>, GroupRef<'_>) {
    if let Some(source) = name.strip_prefix('@') {
        return ((!source.is_empty()).then_some(source), GroupRef::Names);
    }
    let (source, group) = match name.split_once(':') {
        Some((s, g)) => ((!s.is_empty()).then_some(s), g),
        None => (None, name),
    };
    match group {
        "*" => (source, GroupRef::All),
        g => (source, GroupRef::Group(g)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_after_at_read_as_clustershell_reads_them() {
        for (name, want) in [
            ("web", (None, GroupRef::Group("web"))),
            ("slurm:gpu", (Some("slurm"), GroupRef::Group("gpu"))),
            (":gpu", (None, GroupRef::Group("gpu"))),
            ("job:12:a", (Some("job"), GroupRef::Group("12:a"))),
            ("*", (None, GroupRef::All)),
            ("racks:*", (Some("racks"), GroupRef::All)),
            ("@racks", (Some("racks"), GroupRef::Names)),
            ("@", (None, GroupRef::Names)),
        ] {
            assert_eq!(read(name), want, "{name}");
        }
    }
}
